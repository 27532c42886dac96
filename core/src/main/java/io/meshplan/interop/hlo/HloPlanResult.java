package io.meshplan.interop.hlo;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;

/**
 * A pipeline plan of an HLO training step with its simulation under 1F1B and what the search
 * did. The plan's source is the module ({@link PlanSource.HloModule}); its batch is one
 * microbatch.
 *
 * @param plan the plan
 * @param simulation the simulated iteration
 * @param stageCosts what the simulator was given for each stage, first to last
 * @param stats how much the search did ({@link Stats#NONE} for a plan priced again from its file)
 */
public record HloPlanResult(PipelinePlan plan, SimulationResult simulation,
    java.util.List<io.meshplan.sim.StageCost> stageCosts, Stats stats) {
  /** Checks the fields. */
  public HloPlanResult {
    Require.nonNull(plan, "plan");
    Require.that(plan.source() instanceof PlanSource.HloModule,
        "the plan of an HLO step trains its module");
    Require.nonNull(simulation, "simulation");
    stageCosts = java.util.List.copyOf(stageCosts);
    Require.that(stageCosts.size() == plan.stages().size(), "one cost per stage");
    Require.nonNull(stats, "stats");
  }

  /**
   * What the search did.
   *
   * @param distinctLayers layers with different fingerprints (each is solved per mesh)
   * @param meshes logical meshes tried
   * @param layerSolves ILP solves
   * @param latenciesTried values of the DP's t_max evaluated
   */
  public record Stats(int distinctLayers, int meshes, int layerSolves, int latenciesTried) {
    /** No search: a saved plan priced again. */
    public static final Stats NONE = new Stats(0, 0, 0, 0);
  }
}
