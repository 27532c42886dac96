package io.meshplan.sweep;

import io.meshplan.util.Require;
import java.io.Serializable;

/**
 * The outcome of one sweep point. Figures that do not apply to the status are {@code NaN}.
 *
 * @param point the point
 * @param status what became of it
 * @param iterationSeconds predicted seconds per iteration ({@link PointStatus#OK})
 * @param tokensPerSecond predicted tokens per second over the cluster
 * @param tflopsPerGpu model TFLOP/s per GPU (10^12 FLOP/s)
 * @param mfu model FLOPs utilization, 0 to 1
 * @param peakMemoryBytesPerGpu the largest peak memory of any GPU, bytes
 * @param neededBytesPerGpu for {@link PointStatus#INFEASIBLE}: the least memory per GPU any
 *     candidate needed, bytes ({@code NaN} when unknown)
 * @param lowerBoundSeconds for {@link PointStatus#TIMED_OUT}: a lower bound on the iteration time,
 *     seconds (the model FLOPs at every GPU's dense peak)
 * @param layout the chosen layout in words (stages or Megatron-LM sizes), or empty
 * @param message the planner's sentence for a point that is not {@link PointStatus#OK}, or empty
 */
public record PointResult(SweepPoint point, PointStatus status, double iterationSeconds,
    double tokensPerSecond, double tflopsPerGpu, double mfu, double peakMemoryBytesPerGpu,
    double neededBytesPerGpu, double lowerBoundSeconds, String layout, String message)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the fields. */
  public PointResult {
    Require.nonNull(point, "point");
    Require.nonNull(status, "status");
    Require.nonNull(layout, "layout");
    Require.nonNull(message, "message");
    Require.that(status != PointStatus.OK || iterationSeconds > 0,
        "a planned point needs a positive iteration time");
  }

  /**
   * A point that could not be planned.
   *
   * @param point the point
   * @param status why
   * @param neededBytesPerGpu memory needed per GPU, bytes, or NaN
   * @param lowerBoundSeconds a lower bound on the iteration time, seconds, or NaN
   * @param message one sentence
   * @return the result
   */
  public static PointResult failed(SweepPoint point, PointStatus status, double neededBytesPerGpu,
      double lowerBoundSeconds, String message) {
    Require.that(status != PointStatus.OK, "a failed point cannot be OK");
    return new PointResult(point, status, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
        Double.NaN, neededBytesPerGpu, lowerBoundSeconds, "", message);
  }
}
