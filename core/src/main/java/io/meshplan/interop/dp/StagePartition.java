package io.meshplan.interop.dp;

import io.meshplan.util.Require;
import java.util.List;

/**
 * What the stage DP chose: the layers cut into pipeline stages, each on a submesh with one of its
 * options, in order, and the objective of Alpa (OSDI'22, equation 2), {@code sum_i t_i + (B - 1) *
 * max_i t_i} seconds, where t_i is a stage's latency per microbatch and B the number of
 * microbatches. A whole plan, with layouts and predictions, is a {@code plan.PipelinePlan}.
 *
 * @param stages the stages, first to last, covering every layer once
 * @param microbatches B
 * @param objectiveSeconds the objective, computed by {@link #objective} in stage order
 */
public record StagePartition(List<Stage> stages, int microbatches, double objectiveSeconds) {

  /** Copies the list and checks that the stages cover consecutive layers from 0. */
  public StagePartition {
    stages = List.copyOf(stages);
    Require.that(!stages.isEmpty(), "a plan needs at least one stage");
    Require.positive(microbatches, "microbatches");
    int next = 0;
    for (Stage s : stages) {
      int expected = next;
      Require.that(s.firstLayer() == expected, () -> "stage starts at layer " + s.firstLayer()
          + " but layer " + expected + " is next");
      next = s.lastLayer() + 1;
    }
    Require.nonNegative(objectiveSeconds, "objectiveSeconds");
  }

  /**
   * Builds a plan and computes its objective.
   *
   * @param stages the stages
   * @param microbatches B
   * @return the plan
   */
  public static StagePartition of(List<Stage> stages, int microbatches) {
    return new StagePartition(stages, microbatches, objective(stages, microbatches));
  }

  /**
   * Alpa's objective {@code sum t_i + (B - 1) * max t_i}, summed in stage order.
   *
   * @param stages the stages
   * @param microbatches B
   * @return seconds
   */
  public static double objective(List<Stage> stages, int microbatches) {
    double sum = 0;
    double max = 0;
    for (Stage s : stages) {
      sum += s.option().latencySeconds();
      max = Math.max(max, s.option().latencySeconds());
    }
    return sum + (microbatches - 1) * max;
  }

  /**
   * Peak memory per GPU of a stage under 1F1B: stage i of S holds min(S - i, B) microbatches.
   *
   * @param index the stage, 0-based
   * @return bytes per GPU
   */
  public double memoryBytes(int index) {
    int inFlight = Math.min(stages.size() - index, microbatches);
    return stages.get(index).option().memoryBytes(inFlight);
  }

  /**
   * Devices of all stages.
   *
   * @return the sum of the submesh sizes
   */
  public long devices() {
    long d = 0;
    for (Stage s : stages) {
      d += s.submesh().devices();
    }
    return d;
  }
}
