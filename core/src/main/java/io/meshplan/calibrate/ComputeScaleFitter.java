package io.meshplan.calibrate;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleUnaryOperator;

/**
 * Fits one compute scale to measured iteration times: the {@code s} that minimizes {@code
 * sum_i |ln predicted_i(s) - ln measured_i|}, where {@code predicted_i(s)} simulates run {@code
 * i} with every kernel time divided by {@code s} and communication unchanged. Log time makes a
 * 10% miss on a long run weigh as much as on a short one. One run determines {@code s} (the
 * predicted time falls monotonically as {@code s} grows); more runs overdetermine it and leave
 * residuals.
 *
 * <p>Absolute, not squared, log errors: the least-absolute-deviations fit (Boscovich's, the
 * median's estimator; Bloomfield and Steiger, "Least Absolute Deviations", 1983), which a few
 * runs far off, such as a mixture-of-experts run whose host stalls no kernel price holds, move
 * no further than any other run on their side. Across stacks the residuals are heavy-tailed;
 * on meshplan's public folds the least-absolute fit predicts the stacks it did not see better
 * than least squares by every measure: on the 46 Hopper runs, each predicted by the factor fitted
 * without its stack, MAPE 10.2% against 11.1% and a sum of squared log errors of 0.951 against
 * 1.033; on the 18 held-out Hopper runs 14.2% against 15.3% (FidelityBench; docs/fidelity.md).
 *
 * <p>Golden-section search (Kiefer 1953) over {@code ln s} in {@code [ln MIN, ln max]} to
 * {@link #TOLERANCE}; it needs no derivative, which the simulator does not give. The upper end is
 * the GPU's: the scale at which its fastest kernel reaches the dense peak. The simulator is
 * passed in: this class only searches.
 */
public final class ComputeScaleFitter {
  /** The slowest scale searched: kernels 16 times slower than modelled. */
  public static final double MIN = 1.0 / 16;
  /** The search stops when the bracket on {@code ln s} is narrower than this. */
  public static final double TOLERANCE = 1e-7;

  private final double max;
  private final double tolerance;

  /**
   * Creates the fitter.
   *
   * @param max the largest scale searched, > {@link #MIN}: where the fastest kernel reaches the
   *     GPU's dense peak ({@code KernelTimeModel.maxScale})
   */
  public ComputeScaleFitter(double max) {
    this(max, TOLERANCE);
  }

  /**
   * Creates the fitter with its own tolerance.
   *
   * @param max the largest scale searched, > {@link #MIN}
   * @param tolerance the width of the final bracket on {@code ln s}, in (0, 0.01]
   */
  public ComputeScaleFitter(double max, double tolerance) {
    Require.that(max > MIN && Double.isFinite(max), "largest scale must be > " + MIN);
    Require.that(tolerance > 0 && tolerance <= 0.01, "tolerance must be in (0, 0.01]");
    this.max = max;
    this.tolerance = tolerance;
  }

  /**
   * One run to fit.
   *
   * @param name the run's name, for messages
   * @param measured the measured iteration time, seconds
   * @param predict the simulated iteration time at a scale, seconds
   */
  public record Run(String name, double measured, DoubleUnaryOperator predict) {
    /** Validates the fields. */
    public Run {
      Require.nonNull(name, "name");
      Require.that(measured > 0 && Double.isFinite(measured), "measured time must be > 0");
      Require.nonNull(predict, "predict");
    }
  }

  /**
   * One run's times before and after the fit.
   *
   * @param name the run
   * @param measured seconds
   * @param before predicted at scale 1, seconds
   * @param after predicted at the fitted scale, seconds
   */
  public record Row(String name, double measured, double before, double after) {
    /**
     * The relative error after the fit.
     *
     * @return {@code after / measured - 1}
     */
    public double error() {
      return after / measured - 1;
    }
  }

  /**
   * The fit.
   *
   * @param scale the fitted scale
   * @param rows one per run, in input order
   */
  public record Fit(double scale, List<Row> rows) {}

  /**
   * Fits the scale.
   *
   * @param what what is fitted, for messages (e.g. "h100")
   * @param runs at least one run
   * @return the fit
   * @throws InputException when a run's time lies outside what any scale in [MIN, MAX] gives
   */
  public Fit fit(String what, List<Run> runs) {
    Require.that(!runs.isEmpty(), "no runs to fit");
    for (Run r : runs) {
      double fastest = r.predict().applyAsDouble(max);
      if (r.measured() < fastest) {
        throw new InputException(r.name() + ": measured " + seconds(r.measured()) + " per "
            + "iteration is below " + seconds(fastest) + ", the time with " + what + " kernels at"
            + " the dense peak and the modelled communication; no compute scale explains it"
            + " (check the log's parallel sizes and --cluster's fabric)");
      }
      double slowest = r.predict().applyAsDouble(MIN);
      if (r.measured() > slowest) {
        throw new InputException(r.name() + ": measured " + seconds(r.measured()) + " per "
            + "iteration is above " + seconds(slowest) + ", the time with kernels " + (1 / MIN)
            + "x slower than modelled; check the log's configuration and --cluster");
      }
    }
    double scale = search(runs);
    List<Row> rows = new ArrayList<>();
    for (Run r : runs) {
      rows.add(new Row(r.name(), r.measured(), r.predict().applyAsDouble(1),
          r.predict().applyAsDouble(scale)));
    }
    return new Fit(scale, rows);
  }

  /**
   * The fitted scale of runs that need not each lie within the searched range: published
   * runs whose residuals are part of what a fit is scored on. The scale is the minimizer in
   * [{@link #MIN}, max].
   *
   * @param runs at least one run
   * @return the scale
   */
  public double fitLoose(List<Run> runs) {
    Require.that(!runs.isEmpty(), "no runs to fit");
    return search(runs);
  }

  private double search(List<Run> runs) {
    double lo = Math.log(MIN);
    double hi = Math.log(max);
    double g = (Math.sqrt(5) - 1) / 2;
    double a = hi - g * (hi - lo);
    double b = lo + g * (hi - lo);
    double fa = loss(runs, a);
    double fb = loss(runs, b);
    while (hi - lo > tolerance) {
      if (fa <= fb) {
        hi = b;
        b = a;
        fb = fa;
        a = hi - g * (hi - lo);
        fa = loss(runs, a);
      } else {
        lo = a;
        a = b;
        fa = fb;
        b = lo + g * (hi - lo);
        fb = loss(runs, b);
      }
    }
    return Math.exp((lo + hi) / 2);
  }

  private static double loss(List<Run> runs, double lnScale) {
    double s = Math.exp(lnScale);
    // Runs are simulated in parallel; the sum is taken in input order, so it does not depend on
    // the threads.
    double[] d = runs.parallelStream().mapToDouble(r -> Math.log(r.predict().applyAsDouble(s))
        - Math.log(r.measured())).toArray();
    double sum = 0;
    for (double x : d) {
      sum += Math.abs(x);
    }
    return sum;
  }

  private static String seconds(double s) {
    return String.format(java.util.Locale.ROOT, "%.4f s", s);
  }
}
