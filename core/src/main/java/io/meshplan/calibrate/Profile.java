package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.Require;
import java.util.Comparator;
import java.util.List;

/**
 * A calibration profile: what {@code meshplan calibrate} writes and {@code --profile} reads.
 *
 * @param version the file format version, {@link #VERSION}
 * @param cluster the cluster string the profile was measured on
 * @param entries one per (collective, level, group size), sorted by collective, level, gpus
 * @param compute fitted compute scales by GPU architecture word ({@link
 *     io.meshplan.cluster.Architecture#word}), sorted by key; empty in profiles fitted to
 *     collective benchmarks only
 */
public record Profile(int version, String cluster, List<ProfileEntry> entries,
    java.util.SortedMap<String, ComputeScale> compute) implements java.io.Serializable {
  /** The format version this code writes and reads. */
  public static final int VERSION = 1;

  /**
   * A profile of collectives only.
   *
   * @param version the file format version, {@link #VERSION}
   * @param cluster the cluster string
   * @param entries the collective entries
   */
  public Profile(int version, String cluster, List<ProfileEntry> entries) {
    this(version, cluster, entries, new java.util.TreeMap<>());
  }

  /**
   * Why this profile's prices may not apply to a cluster: it was measured on another one. A
   * profile that does not name its cluster gives no such doubt.
   *
   * @param file the profile's file, as the user named it
   * @param cluster the cluster it would price, in short form (e.g. {@code 2x8:h100-80gb})
   * @return one sentence, or empty when the profile was measured on that cluster
   */
  public java.util.Optional<String> measuredElsewhere(String file, String cluster) {
    if (this.cluster.isEmpty() || this.cluster.equals(cluster)) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of("--profile " + file + " was measured on " + this.cluster
        + ", not on " + cluster + "; its prices may not apply");
  }

  /** Validates and sorts. */
  public Profile {
    Require.that(version == VERSION, "profile version must be " + VERSION + ", got " + version);
    Require.nonNull(cluster, "cluster");
    compute = java.util.Collections.unmodifiableSortedMap(
        new java.util.TreeMap<>(Require.nonNull(compute, "compute")));
    for (String key : compute.keySet()) {
      Require.that(ComputeScale.architecture(key).word().equals(key),
          "compute scales are keyed by architecture word, got " + key);
    }
    entries = entries.stream()
        .sorted(Comparator.comparing(ProfileEntry::collective)
            .thenComparing(ProfileEntry::level).thenComparingInt(ProfileEntry::gpus))
        .toList();
    for (int i = 1; i < entries.size(); i++) {
      ProfileEntry a = entries.get(i - 1);
      ProfileEntry b = entries.get(i);
      Require.that(a.collective() != b.collective() || a.level() != b.level()
          || a.gpus() != b.gpus(), "duplicate profile entry " + b.collective() + " "
          + b.level().label() + " gpus=" + b.gpus());
    }
  }

  /**
   * The measured compute scale of a GPU's architecture, 1 when the profile has none.
   *
   * @param gpu the GPU
   * @return the scale, > 0
   */
  public double computeScale(io.meshplan.cluster.GpuSpec gpu) {
    return compute(gpu).map(ComputeScale::scale).orElse(1.0);
  }

  /**
   * The fitted compute scale of a GPU's architecture.
   *
   * @param gpu the GPU
   * @return the scale, or empty when the profile has none for the architecture
   */
  public java.util.Optional<ComputeScale> compute(io.meshplan.cluster.GpuSpec gpu) {
    return java.util.Optional.ofNullable(compute.get(gpu.architecture().word()));
  }

  /**
   * This profile with a compute scale set for one architecture.
   *
   * @param architecture the architecture
   * @param scale the scale
   * @return the new profile
   */
  public Profile withCompute(io.meshplan.cluster.Architecture architecture, ComputeScale scale) {
    java.util.TreeMap<String, ComputeScale> m = new java.util.TreeMap<>(compute);
    m.put(architecture.word(), scale);
    return new Profile(version, cluster, entries, m);
  }

  /**
   * The entries for one collective at one level.
   *
   * @param collective the collective
   * @param level the level
   * @return the entries, by increasing group size
   */
  public List<ProfileEntry> find(Collective collective, LinkLevel level) {
    return entries.stream().filter(e -> e.collective() == collective && e.level() == level).toList();
  }

  /**
   * Java serialization writes the profile's numbers, not its records (an entry's optional curve
   * is not serializable), so that a planning task that carries a profile can run in another
   * process; the copy read back equals this one.
   */
  private Object writeReplace() {
    return new Wire(this);
  }

  /** The serialized form of a profile: its fields as arrays, one element per entry. */
  private static final class Wire implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final int version;
    private final String cluster;
    private final Collective[] collectives;
    private final LinkLevel[] levels;
    private final int[] gpus;
    private final int[] points;
    private final double[] alpha;
    private final double[] beta;
    /** Each entry's curve sizes and seconds, or null without a curve. */
    private final double[][] curveBytes;
    private final double[][] curveSeconds;
    private final double[] tailSlope;
    /** The compute scales, as a plain sorted map of serializable records. */
    private final java.util.TreeMap<String, ComputeScale> compute;

    Wire(Profile p) {
      compute = new java.util.TreeMap<>(p.compute());
      int n = p.entries().size();
      version = p.version();
      cluster = p.cluster();
      collectives = new Collective[n];
      levels = new LinkLevel[n];
      gpus = new int[n];
      points = new int[n];
      alpha = new double[n];
      beta = new double[n];
      curveBytes = new double[n][];
      curveSeconds = new double[n][];
      tailSlope = new double[n];
      for (int i = 0; i < n; i++) {
        ProfileEntry e = p.entries().get(i);
        collectives[i] = e.collective();
        levels[i] = e.level();
        gpus[i] = e.gpus();
        points[i] = e.points();
        alpha[i] = e.fit().alpha();
        beta[i] = e.fit().beta();
        if (e.curve().isPresent()) {
          curveBytes[i] = e.curve().get().bytes();
          curveSeconds[i] = e.curve().get().seconds();
          tailSlope[i] = e.curve().get().tailSlope();
        }
      }
    }

    private Object readResolve() {
      List<ProfileEntry> entries = new java.util.ArrayList<>(gpus.length);
      for (int i = 0; i < gpus.length; i++) {
        java.util.Optional<MonotoneCurve> curve = curveBytes[i] == null
            ? java.util.Optional.empty()
            : java.util.Optional.of(new MonotoneCurve(curveBytes[i], curveSeconds[i],
                tailSlope[i]));
        entries.add(new ProfileEntry(collectives[i], levels[i], gpus[i],
            new AlphaBeta(alpha[i], beta[i]), points[i], curve));
      }
      return new Profile(version, cluster, entries, compute);
    }
  }
}
