package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The 90% interval around a predicted iteration time, as factors on it: where the measured time
 * of the run is expected to lie, from the residuals of published or logged runs on the same GPU
 * architecture (the calibration's error band).
 *
 * @param low the factor at the low end, in (0, 1]
 * @param high the factor at the high end, >= 1
 */
public record PredictionBand(double low, double high) {
  /** Validates the factors. */
  public PredictionBand {
    Require.that(low > 0 && low <= 1, () -> "band low factor must be in (0, 1], got " + low);
    Require.that(high >= 1 && Double.isFinite(high),
        () -> "band high factor must be >= 1, got " + high);
  }

  /**
   * The band's ends in seconds.
   *
   * @param seconds the predicted time
   * @return {low, high} seconds
   */
  public double[] seconds(double seconds) {
    return new double[] {seconds * low, seconds * high};
  }
}
