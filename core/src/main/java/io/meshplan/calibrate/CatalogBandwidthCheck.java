package io.meshplan.calibrate;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LinkLevel;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Doubts about a fitted profile: entries whose bus bandwidth is below {@link #MIN_FRACTION} of
 * what the catalog gives the link they ran over. Such a fit is more likely a log of
 * latency-bound messages, or of a misconfigured run (NCCL falling back to TCP sockets, a wrong
 * NIC), than the cluster's real rate, and it would make every plan priced with it many times too
 * slow.
 *
 * <p>The catalog rate of a link: inside a node the GPU's NVLink bandwidth per direction, the bus
 * bandwidth nccl-tests reaches there; across nodes one NIC's line rate, the least a group that
 * spans nodes gets through the fabric (a node with several NICs reaches more).
 */
public final class CatalogBandwidthCheck {
  /** The share of the catalog rate below which a fitted bandwidth is doubted. */
  public static final double MIN_FRACTION = 0.10;

  private CatalogBandwidthCheck() {}

  /**
   * The entries fitted far below the catalog.
   *
   * @param profile the fitted profile
   * @param cluster the cluster it was measured on
   * @return one sentence per doubted entry, in the profile's order
   */
  public static List<String> doubts(Profile profile, ClusterSpec cluster) {
    List<String> out = new ArrayList<>();
    for (ProfileEntry e : profile.entries()) {
      double bw = e.busBandwidth();
      boolean intra = e.level() == LinkLevel.INTRA_NODE;
      double rate = intra ? cluster.gpu().nvlinkBandwidth() : cluster.fabric().nicBandwidth();
      if (bw < MIN_FRACTION * rate) {
        out.add(String.format(Locale.ROOT, "%s %s on %d GPUs: the fitted bus bandwidth %.3g"
            + " GB/s is below %.0f%% of the catalog's %.1f GB/s (%s); were the messages too"
            + " small to reach the bandwidth, or did NCCL use another network?",
            CollectiveNames.label(e.collective()), e.level().label(), e.gpus(), bw / 1e9,
            100 * MIN_FRACTION, rate / 1e9, intra ? cluster.gpu().name() + " NVLink"
                : "one " + cluster.fabric().name() + " NIC"));
      }
    }
    return out;
  }
}
