package io.meshplan.interop;

import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * Plans one microbatch size of a request (one stage DP with its stage candidates, then its 1F1B
 * simulation) as an executor task: {@link InterOpPlanner}'s first round. In the planner's process
 * it prices layers with the planner's own model; in another process (an engine's executor) with
 * that process's {@link LayerCostCache}, built from the request's pricing and the solver settings
 * the task carries.
 */
final class MicrobatchTask implements TaskFunction<Integer, MicrobatchOutcome> {
  private static final long serialVersionUID = 2L;

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
  MicrobatchTask(PlanRequest req, SolverOptions solver, LayerCostModel layers) {
    this.req = Require.nonNull(req, "request");
    this.solver = Require.nonNull(solver, "solver");
    this.layers = layers;
  }

  @Override
  public MicrobatchOutcome apply(Integer sequences) {
    int g = sequences;
    try {
      return new MicrobatchSearch(req, layersHere(req, solver, layers)).oneFOneB(g);
    } catch (InputException e) {
      return MicrobatchOutcome.without(g, Double.NaN, e.getMessage(), true, 0);
    }
  }

  /**
   * The layer prices a task uses: the planner's when the task runs in its process, else this
   * process's shared model of the request.
   *
   * @param req the request
   * @param solver the ILP settings
   * @param layers the planner's layer prices, or null in another process
   * @return the prices
   */
  static LayerCostModel layersHere(PlanRequest req, SolverOptions solver,
      LayerCostModel layers) {
    return layers != null ? layers : LayerCostCache.processWide().layers(req, solver);
  }
}
