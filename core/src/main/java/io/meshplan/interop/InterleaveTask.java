package io.meshplan.sweep;

import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.PlanSimulator;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * Looks for an interleaved plan of one microbatch size that beats the best 1F1B plan of a
 * question ({@link InterOpPlanner#interleaved}), as an executor task, with this process's {@link
 * LayerCostCache}: the second round of {@link DistributedPlanner}.
 *
 * @param question the question
 * @param beatSeconds the best 1F1B plan's iteration, seconds
 */
public record InterleaveTask(PlanQuestion question, double beatSeconds)
    implements TaskFunction<Integer, MicrobatchOutcome> {
  private static final long serialVersionUID = 1L;

  /** Validates the question. */
  public InterleaveTask {
    Require.nonNull(question, "question");
  }

  @Override
  public MicrobatchOutcome apply(Integer sequences) {
    int g = sequences;
    try {
      Optional<PlanSimulator.Evaluated> e = MicrobatchTask.planner(question)
          .interleaved(question.request(question.globalBatch() / g), g, beatSeconds);
      return e.map(x -> MicrobatchTask.planned(g, x.plan()))
          .orElse(MicrobatchOutcome.without(g, 0, "", false));
    } catch (InputException ex) {
      return MicrobatchOutcome.without(g, 0, ex.getMessage(), true);
    }
  }
}
