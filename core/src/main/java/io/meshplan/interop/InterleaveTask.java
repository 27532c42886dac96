package io.meshplan.interop;

import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * Looks for an interleaved plan of one microbatch size that beats the best 1F1B plan of a request
 * ({@link Interleaver}), as an executor task: {@link InterOpPlanner}'s second round. Layer prices
 * come as in {@link MicrobatchTask}.
 */
final class InterleaveTask implements TaskFunction<Integer, MicrobatchOutcome> {
  private static final long serialVersionUID = 2L;

  private final PlanRequest req;
  private final SolverOptions solver;
  private final double beatSeconds;
  /** The planner's layer prices, in the planner's process only. */
  private final transient LayerCostModel layers;

  /**
   * Creates the task.
   *
   * @param req the request
   * @param solver the ILP settings a process without {@code layers} prices layers with
   * @param beatSeconds the best 1F1B plan's iteration, seconds
   * @param layers the planner's layer prices
   */
  InterleaveTask(PlanRequest req, SolverOptions solver, double beatSeconds,
      LayerCostModel layers) {
    this.req = Require.nonNull(req, "request");
    this.solver = Require.nonNull(solver, "solver");
    this.beatSeconds = beatSeconds;
    this.layers = layers;
  }

  @Override
  public MicrobatchOutcome apply(Integer sequences) {
    int g = sequences;
    try {
      return new MicrobatchSearch(req, MicrobatchTask.layersHere(req, solver, layers))
          .interleaved(g, beatSeconds);
    } catch (InputException e) {
      return MicrobatchOutcome.without(g, Double.NaN, e.getMessage(), true, 0);
    }
  }
}
