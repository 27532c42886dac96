package io.meshplan.interop.dp;

import io.meshplan.util.Require;
import java.util.OptionalDouble;

/** What the stage DP found: a plan, or why there is none. */
public sealed interface StageDpResult permits StageDpResult.Feasible, StageDpResult.Infeasible {

  /**
   * The optimal plan.
   *
   * @param plan the plan
   * @param latenciesTried how many values of t_max the search evaluated (one DP pass each)
   */
  record Feasible(StagePartition plan, int latenciesTried) implements StageDpResult {
    /** Checks the plan. */
    public Feasible {
      Require.nonNull(plan, "plan");
    }
  }

  /**
   * No plan fits.
   *
   * @param minimumMemoryBytes the smallest per-GPU memory capacity with which some plan would fit,
   *     bytes; empty when no plan exists at any capacity (no stage partition covers the layers with
   *     submeshes whose sizes sum to the cluster)
   * @param reason one line for a person
   */
  record Infeasible(OptionalDouble minimumMemoryBytes, String reason) implements StageDpResult {
    /** Checks the reason. */
    public Infeasible {
      Require.nonNull(minimumMemoryBytes, "minimumMemoryBytes");
      Require.nonNull(reason, "reason");
    }
  }
}
