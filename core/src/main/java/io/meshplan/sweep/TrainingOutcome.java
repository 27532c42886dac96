package io.meshplan.sweep;

import io.meshplan.util.Require;

/**
 * A planned point's run of {@code --train-tokens}: its iterations, its expected wall-clock time
 * (with interruptions when a checkpoint bandwidth was given, else the productive time) and its
 * effective training time ratio.
 *
 * @param iterations the run's iterations, >= 1
 * @param wallSeconds the expected wall-clock time, seconds, > 0 (infinite when interruptions come
 *     faster than a checkpointed segment completes)
 * @param ettr productive over wall-clock time, in (0, 1], or NaN without interruptions priced
 */
public record TrainingOutcome(long iterations, double wallSeconds, double ettr)
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the numbers. */
  public TrainingOutcome {
    Require.that(iterations >= 1, "iterations must be >= 1");
    Require.that(wallSeconds > 0, "wall-clock time must be > 0");
    Require.that(Double.isNaN(ettr) || (ettr > 0 && ettr <= 1), "ETTR must be in (0, 1]");
  }

  /**
   * The run's cost.
   *
   * @param gpus the point's GPUs
   * @param usdPerGpuHour the price of a GPU-hour
   * @return USD, or NaN for an unbounded run
   */
  public double usd(int gpus, double usdPerGpuHour) {
    return Double.isFinite(wallSeconds) ? wallSeconds / 3600 * gpus * usdPerGpuHour : Double.NaN;
  }

  /**
   * The wall-clock time in days.
   *
   * @return days, NaN for an unbounded run
   */
  public double days() {
    return Double.isFinite(wallSeconds) ? wallSeconds / 86400 : Double.NaN;
  }
}
