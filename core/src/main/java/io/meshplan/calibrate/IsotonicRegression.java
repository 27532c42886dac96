package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * Weighted isotonic regression by pool-adjacent-violators (Ayer et al., Ann. Math. Statist. 1955;
 * Barlow et al., "Statistical Inference under Order Restrictions", 1972): the non-decreasing
 * sequence closest to the data in weighted least squares. Whenever a value is below its
 * predecessor, the two blocks are pooled into their weighted mean, and pooling repeats backwards
 * until the blocks are in order. Runs in O(n).
 */
public final class IsotonicRegression {
  /** Creates the regression. */
  public IsotonicRegression() {}

  /**
   * Fits a non-decreasing sequence.
   *
   * @param y the values, in the order that must become non-decreasing
   * @param w positive weights, one per value
   * @return the fitted values, same length; equal to {@code y} when {@code y} is already
   *     non-decreasing
   */
  public double[] fit(double[] y, double[] w) {
    Require.that(y.length == w.length, "need one weight per value");
    int n = y.length;
    double[] mean = new double[n];
    double[] weight = new double[n];
    int[] size = new int[n];
    int blocks = 0;
    for (int i = 0; i < n; i++) {
      Require.that(w[i] > 0 && Double.isFinite(y[i]), "need finite values and positive weights");
      mean[blocks] = y[i];
      weight[blocks] = w[i];
      size[blocks] = 1;
      blocks++;
      while (blocks > 1 && mean[blocks - 2] > mean[blocks - 1]) {
        double wt = weight[blocks - 2] + weight[blocks - 1];
        mean[blocks - 2] =
            (mean[blocks - 2] * weight[blocks - 2] + mean[blocks - 1] * weight[blocks - 1]) / wt;
        weight[blocks - 2] = wt;
        size[blocks - 2] += size[blocks - 1];
        blocks--;
      }
    }
    double[] out = new double[n];
    int k = 0;
    for (int b = 0; b < blocks; b++) {
      for (int j = 0; j < size[b]; j++) {
        out[k++] = mean[b];
      }
    }
    return out;
  }
}
