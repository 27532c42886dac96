package io.meshplan.planner;

import io.meshplan.calibrate.ComputeScale;
import io.meshplan.calibrate.ComputeScaleFitter;
import io.meshplan.calibrate.ErrorBand;
import io.meshplan.calibrate.Profile;
import io.meshplan.cluster.Architecture;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fits and scores the compute factor of each GPU architecture on public folds, by protocol:
 *
 * <ol>
 *   <li><b>Kernel:</b> every run simulated at kernel-level prices (scale 1).
 *   <li><b>In-sample:</b> one {@link ComputeScale} per architecture, fitted ({@link
 *       ComputeScaleFitter}, least absolute error in log time) to every run of that architecture in
 *       the folds given; this is the factor that ships.
 *   <li><b>Leave-one-stack-out:</b> for each fold, the factor refitted without it and used to
 *       predict its runs; a fold never scores itself. Where no other fold has runs on the
 *       architecture, the fold is scored at kernel-level prices, as a user of that architecture
 *       would be priced.
 * </ol>
 *
 * <p>What ships for an architecture is chosen by the same protocol ({@link #procedure}): a factor
 * only when fitting one on some stacks predicts the others better than kernel-level prices, and
 * the leave-one-stack-out column runs that whole choice without the fold it scores. Each
 * architecture's 90% {@link ErrorBand} comes from its leave-one-stack-out residuals when two or
 * more folds have runs on it, else from the residuals of the one fold. Simulations are cached
 * per run and scale, so that the fits share them.
 */
public final class FoldCalibration {
  /** The search stops when the bracket on ln(scale) is narrower than this: 0.01%. */
  static final double TOLERANCE = 1e-4;

  private final List<PublicRun> runs;
  private final List<Map<Double, Double>> cache = new ArrayList<>();
  private final double[] measuredSeconds;
  private final Map<List<Integer>, Double> fits = new java.util.HashMap<>();

  /**
   * One run's three predictions, as iteration times.
   *
   * @param run the run
   * @param measured its measured iteration time, seconds
   * @param kernel predicted at kernel-level prices, seconds
   * @param inSample predicted at the factor fitted on every fold, seconds
   * @param leaveOut predicted at the factor fitted without the run's fold, seconds
   * @param leaveOutScale that factor, or empty where kernel-level prices scored it
   */
  public record Scored(PublicRun run, double measured, double kernel, double inSample,
      double leaveOut, OptionalDouble leaveOutScale) {
    /**
     * An error as the published figure sees it: predicted over measured throughput, less 1.
     *
     * @param predicted a predicted time, seconds
     * @return {@code measured / predicted - 1}
     */
    public double error(double predicted) {
      return measured / predicted - 1;
    }
  }

  /**
   * The protocol's outcome.
   *
   * @param profile the in-sample factors, with their folds and bands: what ships
   * @param rows every run, in input order
   */
  public record Result(Profile profile, List<Scored> rows) {}

  /**
   * Prepares the protocol over some runs: simulates each once at kernel-level prices.
   *
   * @param runs the runs of the folds to fit on, at least one
   */
  public FoldCalibration(List<PublicRun> runs) {
    Require.that(!runs.isEmpty(), "no runs to calibrate on");
    this.runs = List.copyOf(runs);
    measuredSeconds = new double[runs.size()];
    for (int i = 0; i < runs.size(); i++) {
      cache.add(new ConcurrentHashMap<>());
    }
    java.util.stream.IntStream.range(0, runs.size()).parallel().forEach(i -> {
      SimulationResult s = this.runs.get(i).simulate(Optional.empty());
      cache.get(i).put(1.0, s.iterationSeconds());
      measuredSeconds[i] = this.runs.get(i).measuredSeconds(s);
    });
  }

  /**
   * Runs the protocol.
   *
   * @return the factors and every run's scores
   */
  public Result run() {
    Map<Architecture, List<Integer>> byArch = new EnumMap<>(Architecture.class);
    for (int i = 0; i < runs.size(); i++) {
      byArch.computeIfAbsent(architecture(i), a -> new ArrayList<>()).add(i);
    }
    double[] inSample = new double[runs.size()];
    double[] leaveOut = new double[runs.size()];
    OptionalDouble[] leaveOutScale = new OptionalDouble[runs.size()];
    Profile profile = new Profile(Profile.VERSION, "", List.of());
    for (Map.Entry<Architecture, List<Integer>> e : byArch.entrySet()) {
      Architecture arch = e.getKey();
      List<Integer> members = e.getValue();
      TreeSet<String> folds = new TreeSet<>();
      members.forEach(i -> folds.add(runs.get(i).fold()));
      OptionalDouble shipped = procedure(arch, members);
      for (int i : members) {
        inSample[i] = predict(i, shipped.orElse(1));
      }
      for (String fold : folds) {
        OptionalDouble s = procedure(arch, members.stream()
            .filter(i -> !runs.get(i).fold().equals(fold)).toList());
        for (int i : members) {
          if (runs.get(i).fold().equals(fold)) {
            leaveOut[i] = predict(i, s.orElse(1));
            leaveOutScale[i] = s;
          }
        }
      }
      boolean crossed = folds.size() >= 2;
      List<Double> ratios = new ArrayList<>();
      for (int i : members) {
        ratios.add(measuredSeconds[i] / (crossed ? leaveOut[i] : inSample[i]));
      }
      String basis = crossed ? ErrorBand.LEAVE_ONE_STACK_OUT
          : shipped.isPresent() ? ErrorBand.IN_SAMPLE : ErrorBand.KERNEL_LEVEL;
      ErrorBand band = ErrorBand.of(ratios, basis).map(FoldCalibration::roundBand).orElse(null);
      profile = profile.withCompute(arch, new ComputeScale(shipped.orElse(1), members.size(),
          new ArrayList<>(folds), band));
    }
    List<Scored> rows = new ArrayList<>();
    for (int i = 0; i < runs.size(); i++) {
      rows.add(new Scored(runs.get(i), measuredSeconds[i], predict(i, 1), inSample[i],
          leaveOut[i], leaveOutScale[i]));
    }
    return new Result(profile, rows);
  }

  /**
   * What the protocol ships for some runs of one architecture: the factor fitted to all of them,
   * when that fit, made without each of their folds in turn, predicts the left-out fold better
   * (in squared log error over its runs) than kernel-level prices do; otherwise nothing. A factor
   * that does not carry from stack to stack describes the stacks, not the GPU. Runs of one fold
   * give no such check, and no factor.
   */
  private OptionalDouble procedure(Architecture arch, List<Integer> members) {
    TreeSet<String> folds = new TreeSet<>();
    members.forEach(i -> folds.add(runs.get(i).fold()));
    if (folds.size() < 2) {
      return OptionalDouble.empty();
    }
    double kernel = 0;
    double crossed = 0;
    for (String fold : folds) {
      double s = fit(arch, members.stream().filter(i -> !runs.get(i).fold().equals(fold))
          .toList());
      for (int i : members) {
        if (runs.get(i).fold().equals(fold)) {
          kernel += square(Math.log(predict(i, 1) / measuredSeconds[i]));
          crossed += square(Math.log(predict(i, s) / measuredSeconds[i]));
        }
      }
    }
    return crossed < kernel ? OptionalDouble.of(fit(arch, members)) : OptionalDouble.empty();
  }

  private static double square(double x) {
    return x * x;
  }

  private Architecture architecture(int i) {
    return runs.get(i).cluster().gpu().architecture();
  }

  /** The fitted factor of some runs of one architecture, memoized by run set. */
  private double fit(Architecture arch, List<Integer> members) {
    return fits.computeIfAbsent(List.copyOf(members), m -> search(arch, m));
  }

  private double search(Architecture arch, List<Integer> members) {
    double max = ComputeScale.bound(arch).orElse(ComputeScale.MAX);
    List<ComputeScaleFitter.Run> fitRuns = new ArrayList<>();
    for (int i : members) {
      fitRuns.add(new ComputeScaleFitter.Run(runs.get(i).name(), measuredSeconds[i],
          s -> predict(i, s)));
    }
    return round(new ComputeScaleFitter(max, TOLERANCE).fitLoose(fitRuns));
  }

  /** A run's simulated iteration time at a scale, cached. */
  private double predict(int i, double scale) {
    return cache.get(i).computeIfAbsent(scale, s -> runs.get(i).simulate(Optional.of(
        new Profile(Profile.VERSION, "", List.of()).withCompute(architecture(i),
            new ComputeScale(s, 1)))).iterationSeconds());
  }

  /** Four significant digits: what the fits agree to across platforms. */
  private static double round(double v) {
    return io.meshplan.util.Units.roundSignificant(v, 4);
  }

  private static ErrorBand roundBand(ErrorBand b) {
    return new ErrorBand(Math.min(1, round(b.low())), Math.max(1, round(b.high())),
        b.residuals(), b.basis());
  }
}
