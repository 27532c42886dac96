package io.meshplan.planner;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.interop.hlo.HloPipelinePlanner;
import io.meshplan.interop.hlo.HloPlanResult;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;

/**
 * The entry point for an XLA training step: plans a module on its cluster ({@code plan --hlo})
 * or prices a saved plan of one again ({@code simulate --plan}), with the job's {@link Pricing}
 * applied here, as {@link Planner} applies it to a model. The module's layers are priced by
 * {@link HloPipelinePlanner} (Alpa's intra-operator ILP per distinct layer and logical mesh).
 */
public final class ModulePlanner {
  private ModulePlanner() {}

  /**
   * Plans a module: its batch is one microbatch, and {@code microbatches} of them make an
   * iteration.
   *
   * @param job the module and its cluster
   * @param layers the module's layers and phases
   * @param source the module as the plan names it
   * @param microbatches microbatches per iteration, at least 1
   * @param options the threads of the layer solves and whom to tell of their progress
   * @return the plan with its simulation and what the search did
   * @throws io.meshplan.util.InputException when the module cannot be planned on the cluster
   */
  public static HloPlanResult plan(ModuleJob job, HloLayering layers,
      PlanSource.HloModule source, int microbatches, PlannerOptions options) {
    Require.nonNull(job, "job");
    Require.nonNull(options, "options");
    try (LocalExecutor pool = new LocalExecutor(options.threads())) {
      return planner(job, pool, options).plan(layers, source, microbatches);
    }
  }

  /**
   * Prices a saved plan of the module again; stored stage times are not replayed.
   *
   * @param job the module and the cluster to price it on
   * @param layers the module's layers and phases
   * @param saved the plan, made from this module
   * @return its simulation
   */
  public static SimulationResult simulate(ModuleJob job, HloLayering layers,
      PipelinePlan saved) {
    Require.nonNull(job, "job");
    // Only the stages' meshes are priced, one layer after another: no pool threads are needed.
    try (LocalExecutor pool = new LocalExecutor(1)) {
      return planner(job, pool, PlannerOptions.defaults().withThreads(1)).simulate(layers,
          saved).simulation();
    }
  }

  private static HloPipelinePlanner planner(ModuleJob job, LocalExecutor pool,
      PlannerOptions options) {
    ClusterSpec cs = job.cluster();
    Pricing p = job.pricing();
    return HloPipelinePlanner.of(job.graph(), cs, mesh -> p.collectives(cs, mesh),
        p.computeScale(cs.gpu()), job.memoryPerGpu(), p.sendRecv(cs), job.overlapGradReduce(),
        pool, options.progress());
  }
}
