package io.meshplan.calibrate;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LinkLevel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The most bus bandwidth a collective can show on a cluster, from its catalog (or cluster file):
 * what no measurement can exceed, so a log row or a profile entry above it is refused as
 * impossible rather than priced.
 *
 * <p>A GPU moves data at most at its NVLink rate per direction ({@code nvlinkBandwidth}) inside a
 * node, and across nodes at most at that plus its share of the node's NICs ({@code nicsPerNode x
 * nicBandwidth / gpusPerNode}: traffic that leaves the node also crosses NVLink or PCIe, so the
 * sum is generous). nccl-tests' bus bandwidth counts the bytes a ring moves ({@code
 * doc/PERFORMANCE.md} in NVIDIA/nccl-tests: all-reduce {@code 2(n-1)/n} of the buffer per rank);
 * an all-reduce reduced in the network (NVLink SHARP inside an H100 node, InfiniBand SHARP
 * across nodes) sends each byte once instead of twice and so shows up to twice the link rate,
 * while every other collective must move its {@code (n-1)/n} share through the GPU's own links.
 * The bound is therefore twice the link rate: above it, no algorithm could have produced the
 * measurement (a zero time, a mistyped unit, a log of another cluster).
 */
public final class PhysicalBandwidth {
  /** How far in-network reduction lifts an all-reduce's bus bandwidth above the link rate. */
  public static final double IN_NETWORK_REDUCTION = 2;

  private PhysicalBandwidth() {}

  /**
   * The bound on bus bandwidth at a link level.
   *
   * @param cluster the cluster
   * @param level where the group runs
   * @return bytes/s
   */
  public static double maxBusBandwidth(ClusterSpec cluster, LinkLevel level) {
    double nvlink = cluster.gpu().nvlinkBandwidth();
    double link = level == LinkLevel.INTRA_NODE ? nvlink
        : nvlink + cluster.fabric().nicsPerNode() * cluster.fabric().nicBandwidth()
            / cluster.gpusPerNode();
    return IN_NETWORK_REDUCTION * link;
  }

  /**
   * The bound in words, for messages.
   *
   * @param cluster the cluster
   * @param level the link level
   * @return e.g. "900 GB/s, twice the h100-80gb NVLink rate per direction"
   */
  public static String describe(ClusterSpec cluster, LinkLevel level) {
    return String.format(Locale.ROOT, "%.4g GB/s on %s, twice %s", maxBusBandwidth(cluster,
        level) / 1e9, cluster.toShortString(), level == LinkLevel.INTRA_NODE
            ? "its " + cluster.gpu().name() + " NVLink rate per direction"
            : "its NVLink rate plus one GPU's share of the node's " + cluster.fabric().name()
                + " NICs");
  }

  /**
   * The measured points this cluster could have produced: a point whose groups need more GPUs or
   * nodes than the cluster has (an nccl-tests log or an Alpa profile of a larger cluster) or
   * whose bus bandwidth is above {@link #maxBusBandwidth} is left out, with a warning at its
   * line (once per file for the first kind).
   *
   * @param points the points of the logs
   * @param cluster the cluster being calibrated
   * @param warnings where the warnings go
   * @return the points kept, in order
   */
  public static List<MeasuredPoint> screen(List<MeasuredPoint> points, ClusterSpec cluster,
      List<ParseWarning> warnings) {
    List<MeasuredPoint> kept = new ArrayList<>();
    Set<String> larger = new HashSet<>();
    for (MeasuredPoint p : points) {
      long gpus = (long) p.gpus() * p.groups();
      if (gpus > cluster.gpuCount() || p.nodes() > cluster.nodes()) {
        if (larger.add(p.file())) {
          warnings.add(new ParseWarning(p.file(), p.line(), "measured on " + p.groups() + " x "
              + p.gpus() + " GPUs on " + p.nodes() + " node(s), more than " + cluster
              .toShortString() + " has (" + cluster.gpuCount() + " GPUs on " + cluster.nodes()
              + " node(s)); is it from another cluster? Its rows that need more are skipped"));
        }
        continue;
      }
      double bound = maxBusBandwidth(cluster, p.level());
      if (p.busbw() > bound) {
        warnings.add(new ParseWarning(p.file(), p.line(), String.format(Locale.ROOT,
            "bus bandwidth %.4g GB/s is above %s, the most any collective can show there; "
            + "row skipped", p.busbw() / 1e9, describe(cluster, p.level()))));
        continue;
      }
      kept.add(p);
    }
    return kept;
  }

  /**
   * Refuses a profile entry whose rates are above the bound of the cluster it was measured on:
   * its fitted bus bandwidth ({@code 1 / beta}), its tail ({@code busFactor / tailSlope}), and
   * the bus bandwidth of each curve point ({@code busFactor x bytes / seconds}; a time of zero
   * is an infinite bandwidth).
   *
   * @param e the entry
   * @param cluster the cluster the profile names
   * @return why the entry is impossible, or null when it is not
   */
  static String impossible(ProfileEntry e, ClusterSpec cluster) {
    double bound = maxBusBandwidth(cluster, e.level());
    double factor = e.collective().busFactor(e.gpus());
    String over = String.format(Locale.ROOT, " is above %s, the most any collective can show "
        + "there", describe(cluster, e.level()));
    if (e.busBandwidth() > bound) {
      return String.format(Locale.ROOT, "beta %s (bus bandwidth %s)", e.fit().beta(),
          gbps(e.busBandwidth())) + over;
    }
    if (e.curve().isEmpty() || factor == 0) {
      return null;
    }
    MonotoneCurve c = e.curve().get();
    if (c.tailSlope() > 0 && factor / c.tailSlope() > bound) {
      return String.format(Locale.ROOT, "tailSlope %s (bus bandwidth %s)", c.tailSlope(),
          gbps(factor / c.tailSlope())) + over;
    }
    double[] b = c.bytes();
    double[] s = c.seconds();
    for (int k = 0; k < b.length; k++) {
      double busbw = factor * b[k] / s[k];
      if (busbw > bound) {
        return String.format(Locale.ROOT, "curve[%d] = [%.0f, %s] (bus bandwidth %s)",
            k, b[k], s[k], gbps(busbw)) + over;
      }
    }
    return null;
  }

  /** A bandwidth in bytes/s as GB/s; one a zero time makes infinite is said so, not 'Infinity'. */
  private static String gbps(double bytesPerSecond) {
    return Double.isInfinite(bytesPerSecond) ? "infinite, from a time of 0"
        : String.format(Locale.ROOT, "%.4g GB/s", bytesPerSecond / 1e9);
  }
}
