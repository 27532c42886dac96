package io.meshplan.interop;

import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.util.Require;
import io.meshplan.util.Units;
import java.util.Optional;

/**
 * Plans within Megatron-LM's configuration space only: the fastest point of the {@link
 * MegatronGrid} (uniform stages of equal tensor x data-parallel meshes, Megatron-LM's column/row
 * layouts, one ZeRO stage), as a plan. Megatron-LM expresses such a plan exactly (Narayanan et
 * al. SC'21), at the price of the speed that non-uniform stages and ILP layouts may add.
 */
public final class GridPlanner {
  private final LayerCostModel layers;

  /**
   * Creates the planner.
   *
   * @param layers the layer prices
   */
  public GridPlanner(LayerCostModel layers) {
    this.layers = Require.nonNull(layers, "layers");
  }

  /**
   * Plans.
   *
   * @param req the model, cluster, global batch and prices
   * @return the fastest Megatron-LM configuration as a plan, or why none fits
   */
  public PlanResult plan(PlanRequest req) {
    // What the request's arithmetic rules out for any plan rules out every grid point.
    Optional<PlanResult.Infeasible> hopeless = RequestBounds.memory(req)
        .or(() -> RequestBounds.batch(req));
    if (hopeless.isPresent()) {
      return hopeless.get();
    }
    Optional<MegatronGrid.Point> best = new MegatronGrid(layers).best(req);
    int solves = layers instanceof IlpLayerCostModel ilp ? ilp.solves() : 0;
    if (best.isEmpty()) {
      return new PlanResult.Infeasible(0, req.cluster().nodes(), "no Megatron-LM "
          + "configuration of " + req.model().name() + " (tensor x pipeline x data-parallel "
          + "sizes that divide the GPUs, stages inside one node or on whole nodes, pipeline sizes "
          + "that divide the " + req.model().layers() + " layers, micro batches of 1, 2, 4 or 8 "
          + "that divide the global batch of " + req.globalBatch() + ") fits on "
          + req.cluster().toShortString() + " within " + Units.formatBytes(req.memoryPerGpu())
          + " per GPU; plan without the Megatron-LM restriction for uneven stages");
    }
    PipelinePlan plan = best.get().evaluated().plan();
    return new PlanResult.Planned(plan, best.get().evaluated().simulation(),
        new PlanResult.SearchStats(solves, 0, 0, 1, 1));
  }
}
