package io.meshplan.sweep;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.PlanResult;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * Plans one microbatch size of a question (one stage DP with its stage candidates, 1F1B) as an
 * executor task, with this process's {@link LayerCostCache}; {@link InterleaveTask} then looks for
 * interleaved plans.
 *
 * @param question the question
 */
public record MicrobatchTask(PlanQuestion question)
    implements TaskFunction<Integer, MicrobatchOutcome> {
  private static final long serialVersionUID = 1L;

  /** Validates the question. */
  public MicrobatchTask {
    Require.nonNull(question, "question");
  }

  @Override
  public MicrobatchOutcome apply(Integer sequences) {
    int g = sequences;
    try {
      PlanResult r = planner(question)
          .plan(question.request(question.globalBatch() / g).withInterleaving(false));
      if (r instanceof PlanResult.Infeasible inf) {
        return MicrobatchOutcome.without(g, inf.neededBytesPerGpu(), inf.message(), false);
      }
      return planned(g, ((PlanResult.Planned) r).plan());
    } catch (InputException e) {
      return MicrobatchOutcome.without(g, 0, e.getMessage(), true);
    }
  }

  /**
   * A one-thread planner with this process's layer prices for the question's model and cluster.
   *
   * @param question the question
   * @return the planner
   */
  static InterOpPlanner planner(PlanQuestion question) {
    return new InterOpPlanner(LayerCostCache.processWide().layers(question.model(),
        question.cluster(), SolverOptions.defaults()), pct -> { }, new LocalExecutor(1));
  }

  /**
   * The outcome of a size that found a plan.
   *
   * @param g sequences per microbatch
   * @param plan the plan
   * @return the outcome, with the plan's JSON, iteration and pipeline depth
   */
  static MicrobatchOutcome planned(int g, PipelinePlan plan) {
    return new MicrobatchOutcome(g, PlanJson.write(plan), plan.prediction().iterationSeconds(),
        plan.pipelineStages(), 0, "", false);
  }
}
