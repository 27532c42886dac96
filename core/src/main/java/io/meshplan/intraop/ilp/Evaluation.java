package io.meshplan.intraop.ilp;

import java.util.List;

/**
 * What {@link SolutionEvaluator} finds for an assignment.
 *
 * @param objective the recomputed objective
 * @param nodeCost the node part of the objective
 * @param edgeCost the edge (resharding) part of the objective
 * @param peakMemoryBytes the largest per-device memory over the checked steps, bytes
 * @param peakStep the step where it occurs, or -1 without a memory bound
 * @param violations one line per violated constraint; empty when feasible
 */
public record Evaluation(
    double objective, double nodeCost, double edgeCost, double peakMemoryBytes, int peakStep,
    List<String> violations) {
  /** Copies the list. */
  public Evaluation {
    violations = List.copyOf(violations);
  }

  /**
   * Whether every constraint holds.
   *
   * @return true when there are no violations
   */
  public boolean feasible() {
    return violations.isEmpty();
  }
}
