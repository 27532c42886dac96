package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Turns measured points into a {@link Profile}: one entry per (collective, link level, group size).
 *
 * <p>Per entry, from the points with a known size:
 *
 * <ol>
 *   <li>alpha and beta by {@link AlphaBetaFitter} on x = busFactor(n) * bytes, so 1/beta is the bus
 *       bandwidth;
 *   <li>the curve: points sorted by size, points of equal size pooled into their mean time, then
 *       made non-decreasing by {@link IsotonicRegression} weighted by the number of pooled points;
 *       beyond the largest size it grows at beta * busFactor(n).
 * </ol>
 *
 * <p>An entry whose points all lack a size (tables of bus bandwidth per GPU count) gets alpha = 0,
 * beta = 1 / (mean busbw) and no curve. Points without a size are ignored by entries that have sized
 * points.
 *
 * <p>An entry with sized points needs at least {@link #MIN_SIZES} distinct message sizes: a line
 * through one size cannot tell the fixed latency (alpha) from the time per byte (beta), and a log
 * of 8-byte messages alone would put all of the latency into the bandwidth. One size is enough
 * only when it is at least {@link #BANDWIDTH_BOUND_BYTES}, as in Alpa's {@code
 * profile_communication} (2 GB per group): there the latency, some microseconds, is under 5% of
 * the time even over NVLink (64 MiB x 1.75 bus bytes at 300 GB/s is 390 us), and the line
 * through the origin gives the bandwidth.
 */
public final class ProfileFitter {
  /** The fewest distinct message sizes that separate latency from bandwidth: two points. */
  public static final int MIN_SIZES = 2;

  /** The smallest lone message size whose time bandwidth sets, not latency: 64 MiB. */
  public static final long BANDWIDTH_BOUND_BYTES = 64L << 20;

  private final String cluster;

  /**
   * Creates a fitter.
   *
   * @param cluster the cluster string to record in the profile
   */
  public ProfileFitter(String cluster) {
    this.cluster = Require.nonNull(cluster, "cluster");
  }

  private record Key(Collective collective, LinkLevel level, int gpus) {}

  /**
   * Fits the profile.
   *
   * @param points the measurements, at least one
   * @return the profile and the per-point predictions
   * @throws InputException when an entry's sized points have fewer than {@link #MIN_SIZES}
   *     distinct message sizes
   */
  public Calibration fit(List<MeasuredPoint> points) {
    Require.that(!points.isEmpty(), "nothing to fit");
    Map<Key, List<MeasuredPoint>> byKey = new TreeMap<>(Comparator.comparing(Key::collective)
        .thenComparing(Key::level).thenComparingInt(Key::gpus));
    for (MeasuredPoint p : points) {
      byKey.computeIfAbsent(new Key(p.collective(), p.level(), p.gpus()), k -> new ArrayList<>())
          .add(p);
    }
    Map<Key, ProfileEntry> entries = new TreeMap<>(Comparator.comparing(Key::collective)
        .thenComparing(Key::level).thenComparingInt(Key::gpus));
    for (Map.Entry<Key, List<MeasuredPoint>> e : byKey.entrySet()) {
      entries.put(e.getKey(), fitEntry(e.getKey(), e.getValue()));
    }
    List<FittedPoint> fitted = new ArrayList<>();
    for (MeasuredPoint p : points) {
      ProfileEntry entry = entries.get(new Key(p.collective(), p.level(), p.gpus()));
      if (p.sized()) {
        fitted.add(new FittedPoint(p, entry.seconds(p.bytes()), entry.alphaBetaSeconds(p.bytes())));
      } else {
        fitted.add(new FittedPoint(p, Double.NaN, Double.NaN));
      }
    }
    return new Calibration(new Profile(Profile.VERSION, cluster, List.copyOf(entries.values())),
        fitted);
  }

  private static ProfileEntry fitEntry(Key key, List<MeasuredPoint> points) {
    List<MeasuredPoint> sized = points.stream().filter(MeasuredPoint::sized)
        .sorted(Comparator.comparingLong(MeasuredPoint::bytes)).toList();
    if (sized.isEmpty()) {
      double sum = 0;
      for (MeasuredPoint p : points) {
        sum += p.busbw();
      }
      double mean = sum / points.size();
      AlphaBeta ab = new AlphaBeta(0.0, mean > 0 ? 1.0 / mean : 0.0);
      return new ProfileEntry(key.collective(), key.level(), key.gpus(), ab, points.size(),
          Optional.empty());
    }
    long distinct = sized.stream().mapToLong(MeasuredPoint::bytes).distinct().count();
    if (distinct < MIN_SIZES && sized.get(0).bytes() < BANDWIDTH_BOUND_BYTES) {
      MeasuredPoint p = sized.get(0);
      throw new InputException(p.file() + ":" + p.line() + ": " + CollectiveNames.label(
          key.collective()) + " " + key.level().label() + " on " + key.gpus() + " GPUs was"
          + " measured at " + distinct + " message size (" + p.bytes() + " bytes); a fit needs"
          + " at least " + MIN_SIZES + " sizes to separate latency from bandwidth (run"
          + " nccl-tests over a range, e.g. -b 8 -e 8G -f 2), or one of at least 64 MiB, where"
          + " the bandwidth alone sets the time");
    }
    double factor = key.collective().busFactor(key.gpus());
    double[] x = new double[sized.size()];
    double[] t = new double[sized.size()];
    for (int i = 0; i < sized.size(); i++) {
      x[i] = factor * sized.get(i).bytes();
      t[i] = sized.get(i).seconds();
    }
    AlphaBeta ab = new AlphaBetaFitter().fit(x, t);
    List<Double> sizes = new ArrayList<>();
    List<Double> means = new ArrayList<>();
    List<Double> counts = new ArrayList<>();
    for (MeasuredPoint p : sized) {
      int last = sizes.size() - 1;
      if (last >= 0 && sizes.get(last) == p.bytes()) {
        double c = counts.get(last);
        means.set(last, (means.get(last) * c + p.seconds()) / (c + 1));
        counts.set(last, c + 1);
      } else {
        sizes.add((double) p.bytes());
        means.add(p.seconds());
        counts.add(1.0);
      }
    }
    double[] y = means.stream().mapToDouble(Double::doubleValue).toArray();
    double[] w = counts.stream().mapToDouble(Double::doubleValue).toArray();
    double[] mono = new IsotonicRegression().fit(y, w);
    MonotoneCurve curve = new MonotoneCurve(sizes.stream().mapToDouble(Double::doubleValue)
        .toArray(), mono, ab.beta() * factor);
    return new ProfileEntry(key.collective(), key.level(), key.gpus(), ab, points.size(),
        Optional.of(curve));
  }
}
