package io.meshplan.interop.dp;

import io.meshplan.interop.space.SubmeshShape;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

/**
 * The reference for {@link StageDp}: every contiguous partition of the layers, every submesh for
 * each stage with sizes summing to N * M, and every option per stage. Exponential; for small L.
 */
final class BruteForceStageDp {
  private final StageDpProblem problem;
  private final boolean placeableOnly;
  private double bestObjective = Double.POSITIVE_INFINITY;
  private List<Stage> bestStages;
  private double leastMemory = Double.POSITIVE_INFINITY;

  BruteForceStageDp(StageDpProblem problem) {
    this(problem, false);
  }

  /**
   * The reference over partitions whose submeshes can also be placed on the nodes ({@link
   * io.meshplan.interop.space.SubmeshPlacement}), when asked.
   */
  BruteForceStageDp(StageDpProblem problem, boolean placeableOnly) {
    this.problem = problem;
    this.placeableOnly = placeableOnly;
  }

  /** The least objective over plans that fit in memory, or empty. */
  OptionalDouble objective() {
    search(0, problem.devices(), new ArrayList<>());
    return Double.isInfinite(bestObjective) ? OptionalDouble.empty()
        : OptionalDouble.of(bestObjective);
  }

  /** A plan with the least objective (after {@link #objective()}), or null. */
  List<Stage> stages() {
    return bestStages;
  }

  /** The least capacity at which some plan fits (after {@link #objective()}), or empty. */
  OptionalDouble leastMemory() {
    return Double.isInfinite(leastMemory) ? OptionalDouble.empty()
        : OptionalDouble.of(leastMemory);
  }

  private void search(int first, int devicesLeft, List<Stage> chosen) {
    int layers = problem.layers();
    if (first == layers) {
      if (devicesLeft == 0) {
        score(chosen);
      }
      return;
    }
    for (int last = first; last < layers; last++) {
      for (int j = 0; j < problem.shapes().size(); j++) {
        SubmeshShape shape = problem.shapes().get(j);
        if (shape.devices() > devicesLeft) {
          continue;
        }
        for (StageOption o : problem.table().options(first, last, j)) {
          chosen.add(new Stage(first, last, j, shape, o));
          search(last + 1, devicesLeft - shape.devices(), chosen);
          chosen.remove(chosen.size() - 1);
        }
      }
    }
  }

  private void score(List<Stage> stages) {
    if (placeableOnly && !PackedStageDp.placeable(problem, StagePartition.of(stages, 1))) {
      return;
    }
    int b = problem.microbatches();
    double worst = 0;
    boolean fits = true;
    for (int i = 0; i < stages.size(); i++) {
      double m = stages.get(i).option().memoryBytes(Math.min(stages.size() - i, b));
      worst = Math.max(worst, m);
      fits &= m <= problem.memoryCapacityBytes();
    }
    leastMemory = Math.min(leastMemory, worst);
    if (fits) {
      double objective = StagePartition.objective(stages, b);
      if (objective < bestObjective) {
        bestObjective = objective;
        bestStages = List.copyOf(stages);
      }
    }
  }
}
