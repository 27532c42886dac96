package io.meshplan.interop;

import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;

/** The outcome of whole-cluster planning: a plan with its simulation, or why there is none. */
public sealed interface PlanResult permits PlanResult.Planned, PlanResult.Infeasible {
  /**
   * A plan.
   *
   * @param plan the plan
   * @param simulation the simulator's run of it
   * @param stats how much work the search did
   */
  record Planned(PipelinePlan plan, SimulationResult simulation, SearchStats stats)
      implements PlanResult {
    /** Validates the fields. */
    public Planned {
      Require.nonNull(plan, "plan");
      Require.nonNull(simulation, "simulation");
      Require.nonNull(stats, "stats");
    }
  }

  /**
   * Nothing fits.
   *
   * @param neededBytesPerGpu the least memory per GPU any candidate needed, bytes
   * @param smallestNodes the fewest nodes of this kind whose GPUs could hold the model state
   * @param message one sentence for the user
   * @param coverage whether the cause is the global batch: no pipeline covers every GPU with
   *     stages whose data-parallel replicas share it (another batch may plan)
   */
  record Infeasible(double neededBytesPerGpu, int smallestNodes, String message,
      boolean coverage) implements PlanResult {
    /** Validates the fields. */
    public Infeasible {
      Require.nonNull(message, "message");
    }

    /**
     * A verdict whose cause is not the global batch.
     *
     * @param neededBytesPerGpu the least memory per GPU any candidate needed, bytes
     * @param smallestNodes the fewest nodes of this kind whose GPUs could hold the model state
     * @param message one sentence for the user
     */
    public Infeasible(double neededBytesPerGpu, int smallestNodes, String message) {
      this(neededBytesPerGpu, smallestNodes, message, false);
    }
  }

  /**
   * Work counters of one search.
   *
   * @param layerSolves intra-op ILP solves of layer graphs
   * @param dpRuns stage DP runs
   * @param simulations schedule simulations
   * @param nodeGranule stages use multiples of this many nodes (1: any Alpa shape), see {@link
   *     SubmeshShape#nodeGranule}
   * @param layerGroup stages start and end on multiples of this many layers (1: any layer), see
   *     {@link SubmeshShape#layerGroup}
   */
  record SearchStats(int layerSolves, int dpRuns, int simulations, int nodeGranule,
      int layerGroup) {
    /** No search: a plan assembled or simulated on its own, before the planner counts its work. */
    public static final SearchStats NONE = new SearchStats(0, 0, 0, 1, 1);
  }
}
