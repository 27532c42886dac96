package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * Fits time = alpha + beta * x by weighted least squares, where x is bus bytes (the collective's
 * nccl-tests bus factor times the message size), so that 1/beta is the bus bandwidth.
 *
 * <p>The weights are 1/t^2: the fit minimizes the sum of squared relative errors. Benchmark sweeps
 * run from 8 bytes to gigabytes; unweighted least squares would fit the largest messages only and
 * leave alpha, which decides the small-message regime, at the mercy of rounding in the largest
 * times.
 *
 * <p>Constraints: alpha &gt;= 0 and beta &gt;= 0. If the unconstrained alpha is negative the fit is
 * redone through the origin (alpha = 0); if beta is negative (times fall with size) beta = 0 and alpha
 * is the weighted mean time. With a single distinct x the line is through the origin when x &gt; 0.
 */
public final class AlphaBetaFitter {
  /** Creates the fitter. */
  public AlphaBetaFitter() {}

  /**
   * Fits the line.
   *
   * @param x bus bytes per point, each &gt;= 0
   * @param t seconds per point, each &gt; 0
   * @return alpha (seconds) and beta (seconds per bus byte)
   */
  public AlphaBeta fit(double[] x, double[] t) {
    Require.that(x.length == t.length && x.length > 0, "need as many times as sizes, at least one");
    double s = 0;
    double sx = 0;
    double sxx = 0;
    double st = 0;
    double sxt = 0;
    for (int i = 0; i < x.length; i++) {
      Require.that(x[i] >= 0 && t[i] > 0, "need x >= 0 and t > 0 at point " + i);
      double w = 1.0 / (t[i] * t[i]);
      s += w;
      sx += w * x[i];
      sxx += w * x[i] * x[i];
      st += w * t[i];
      sxt += w * x[i] * t[i];
    }
    double det = s * sxx - sx * sx;
    if (det > 1e-12 * s * sxx) {
      double beta = (s * sxt - sx * st) / det;
      double alpha = (st - beta * sx) / s;
      if (alpha >= 0 && beta >= 0) {
        return new AlphaBeta(alpha, beta);
      }
      if (beta < 0) {
        return new AlphaBeta(st / s, 0.0);
      }
    }
    if (sxx > 0) {
      return new AlphaBeta(0.0, Math.max(0.0, sxt / sxx));
    }
    return new AlphaBeta(st / s, 0.0);
  }
}
