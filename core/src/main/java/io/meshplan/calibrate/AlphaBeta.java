package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * A fitted latency-bandwidth pair: time = alpha + beta * busFactor(n) * bytes.
 *
 * @param alpha latency, in seconds
 * @param beta seconds per byte of bus traffic, the inverse of the bus bandwidth in bytes/s
 */
public record AlphaBeta(double alpha, double beta) {
  /** Validates the fields. */
  public AlphaBeta {
    Require.nonNegative(alpha, "alpha");
    Require.nonNegative(beta, "beta");
  }

  /**
   * The predicted time.
   *
   * @param busBytes bus-factor times bytes
   * @return seconds
   */
  public double seconds(double busBytes) {
    return alpha + beta * busBytes;
  }
}
