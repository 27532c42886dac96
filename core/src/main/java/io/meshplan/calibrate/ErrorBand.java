package io.meshplan.calibrate;

import io.meshplan.util.Require;
import java.util.List;

/**
 * How far a prediction's iteration time may lie from the measured one: a 90% prediction interval
 * taken from the residuals of published or logged runs, as factors on the predicted time. For a
 * residual {@code r_i = ln(measured_i / predicted_i)} of each of {@code n} runs, the half-width
 * in log time is {@code t(0.95, n - 1) * rms(r) * sqrt(1 + 1/n)}: the Student-t prediction
 * interval for one new run (Hahn and Meeker, "Statistical Intervals", Wiley 1991, section 4.5),
 * with the root mean square of the residuals standing for their standard deviation so that a
 * residual bias widens the band instead of moving it. The band is centred on the prediction:
 * {@code [predicted / exp(w), predicted * exp(w)]}.
 *
 * @param low the factor on the predicted time at the band's low end, in (0, 1]
 * @param high the factor at its high end, >= 1
 * @param residuals the number of residuals behind it, >= 3
 * @param basis how the residuals were taken: {@link #LEAVE_ONE_STACK_OUT}, {@link #IN_SAMPLE} or
 *     {@link #KERNEL_LEVEL}
 */
public record ErrorBand(double low, double high, int residuals, String basis)
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  /** Residuals of runs scored by factors fitted without their own stack. */
  public static final String LEAVE_ONE_STACK_OUT = "leave-one-stack-out";
  /** Residuals of the runs the factor was fitted to. */
  public static final String IN_SAMPLE = "in-sample";
  /** Residuals of runs at kernel-level prices, where nothing was fitted. */
  public static final String KERNEL_LEVEL = "kernel-level";
  /** The fewest residuals a band is taken from: two give one degree of freedom and no band. */
  public static final int MIN_RESIDUALS = 3;
  /** The band's coverage. */
  public static final double COVERAGE = 0.90;

  /**
   * Two-sided 90% quantiles of Student's t, {@code t(0.95, df)} for df = 1..30 (Abramowitz and
   * Stegun, "Handbook of Mathematical Functions", table 26.10).
   */
  private static final double[] T95 = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
      1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721,
      1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};

  /** Validates the numbers. */
  public ErrorBand {
    Require.that(low > 0 && low <= 1 && Double.isFinite(low),
        "error band low factor must be in (0, 1], got " + low);
    Require.that(high >= 1 && Double.isFinite(high),
        "error band high factor must be >= 1, got " + high);
    Require.that(residuals >= MIN_RESIDUALS, "an error band needs at least " + MIN_RESIDUALS
        + " residuals, got " + residuals);
    Require.that(LEAVE_ONE_STACK_OUT.equals(basis) || IN_SAMPLE.equals(basis)
        || KERNEL_LEVEL.equals(basis), "error band basis must be " + LEAVE_ONE_STACK_OUT + ", "
        + IN_SAMPLE + " or " + KERNEL_LEVEL + ", got " + basis);
  }

  /**
   * The band of a set of runs.
   *
   * @param measuredOverPredicted each run's measured over predicted iteration time, > 0
   * @param basis {@link #LEAVE_ONE_STACK_OUT}, {@link #IN_SAMPLE} or {@link #KERNEL_LEVEL}
   * @return the band, or empty with fewer than {@link #MIN_RESIDUALS} runs
   */
  public static java.util.Optional<ErrorBand> of(List<Double> measuredOverPredicted,
      String basis) {
    int n = measuredOverPredicted.size();
    if (n < MIN_RESIDUALS) {
      return java.util.Optional.empty();
    }
    double sum = 0;
    for (double ratio : measuredOverPredicted) {
      Require.that(ratio > 0 && Double.isFinite(ratio), "time ratio must be > 0, got " + ratio);
      double r = Math.log(ratio);
      sum += r * r;
    }
    double w = t95(n - 1) * Math.sqrt(sum / n) * Math.sqrt(1 + 1.0 / n);
    return java.util.Optional.of(new ErrorBand(Math.exp(-w), Math.exp(w), n, basis));
  }

  /**
   * {@code t(0.95, df)}: the table up to 30 degrees of freedom; past it the normal quantile,
   * 1.645, with the first-order correction {@code (z^3 + z) / (4 df)} (Abramowitz and Stegun
   * 26.7.5), within 0.002 of the exact value from 31 degrees on.
   *
   * @param df degrees of freedom, >= 1
   * @return the quantile
   */
  static double t95(int df) {
    Require.positive(df, "degrees of freedom");
    if (df <= T95.length) {
      return T95[df - 1];
    }
    double z = 1.6448536;
    return z + (z * z * z + z) / (4.0 * df);
  }

  /**
   * Whether a measured time lies inside this band around a prediction.
   *
   * @param predicted the predicted time, > 0
   * @param measured the measured time, > 0
   * @return whether {@code predicted * low <= measured <= predicted * high}
   */
  public boolean covers(double predicted, double measured) {
    return measured >= predicted * low && measured <= predicted * high;
  }
}
