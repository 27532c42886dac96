package io.meshplan.interop;

import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * One microbatch size of {@link InterOpPlanner}'s search as an executor task. In the planner's
 * process it prices layers with the planner's own model; in another process (an engine's
 * executor) with that process's {@link LayerCostCache}, built from the request's pricing and the
 * solver settings the task carries. A refusal comes back as an outcome, since an engine may not
 * carry the exception's type back to the driver.
 */
abstract class SearchTask implements TaskFunction<Integer, MicrobatchOutcome> {
  private static final long serialVersionUID = 1L;

  private final PlanRequest req;
  private final SolverOptions solver;
  /** The planner's layer prices, in the planner's process only. */
  private final transient LayerCostModel layers;

  /**
   * Creates the task.
   *
   * @param req the request
   * @param solver the ILP settings a process without {@code layers} prices layers with
   * @param layers the planner's layer prices
   */
  SearchTask(PlanRequest req, SolverOptions solver, LayerCostModel layers) {
    this.req = Require.nonNull(req, "request");
    this.solver = Require.nonNull(solver, "solver");
    this.layers = layers;
  }

  @Override
  public final MicrobatchOutcome apply(Integer sequences) {
    int g = sequences;
    try {
      LayerCostModel here = layers != null ? layers
          : LayerCostCache.processWide().layers(req, solver);
      return search(new MicrobatchSearch(req, here), g);
    } catch (InputException e) {
      return MicrobatchOutcome.without(g, Double.NaN, e.getMessage(), true, 0);
    }
  }

  /**
   * This task's search of one size.
   *
   * @param search the size's search
   * @param g sequences per microbatch
   * @return the outcome
   */
  abstract MicrobatchOutcome search(MicrobatchSearch search, int g);

  /** The first round: the stage DP of the size and the 1F1B simulation of its partition. */
  static final class OneFOneB extends SearchTask {
    private static final long serialVersionUID = 1L;

    OneFOneB(PlanRequest req, SolverOptions solver, LayerCostModel layers) {
      super(req, solver, layers);
    }

    @Override
    MicrobatchOutcome search(MicrobatchSearch search, int g) {
      return search.oneFOneB(g);
    }
  }

  /** The second round: an interleaved pipeline of the size that beats the best 1F1B plan. */
  static final class Interleaved extends SearchTask {
    private static final long serialVersionUID = 1L;
    private final double beatSeconds;

    Interleaved(PlanRequest req, SolverOptions solver, LayerCostModel layers,
        double beatSeconds) {
      super(req, solver, layers);
      this.beatSeconds = beatSeconds;
    }

    @Override
    MicrobatchOutcome search(MicrobatchSearch search, int g) {
      return search.interleaved(g, beatSeconds);
    }
  }
}
