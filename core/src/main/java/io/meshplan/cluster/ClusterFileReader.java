package io.meshplan.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import io.meshplan.util.Units;
import java.io.IOException;
import java.nio.file.Path;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * Reads a YAML cluster file:
 *
 * <pre>
 * nodes: 4
 * gpusPerNode: 8
 * gpu: a100-80gb             # a catalog name, or one GPU entry inline (a mapping with the
 *                            #   fields of a catalog.yaml entry, see HardwareCatalog)
 * fabric: ib-hdr200          # optional; the GPU's default otherwise
 * nvlinkBandwidth: 240GB/s   # optional overrides; numbers are bytes/s,
 * hbmBandwidth: 2039GB/s     #   or text with units (GB/s, Gbps, ...)
 * nicBandwidth: 200Gbps
 * nicsPerNode: 4
 * fabricLatency: 6e-6        # seconds
 * </pre>
 *
 * <p>Every bandwidth is from {@link #MIN_BANDWIDTH} to {@link #MAX_BANDWIDTH}, the latency from 0
 * to {@link #MAX_LATENCY}: a figure outside is refused in one line naming the file, the field and
 * the range, where it would price an iteration at an absurd or infinite time.
 */
final class ClusterFileReader {
  private static final Set<String> KEYS = Set.of("nodes", "gpusPerNode", "gpu", "fabric",
      "nvlinkBandwidth", "hbmBandwidth", "nicBandwidth", "nicsPerNode", "fabricLatency");

  /** The largest fabric latency: one second, far above any network's microseconds. */
  static final double MAX_LATENCY = 1.0;
  /**
   * The smallest bandwidth of any link, NVLink, HBM or NIC: 1e8 bytes/s (0.1 GB/s, 0.8 Gb/s),
   * below 1 Gb/s Ethernet (0.125 GB/s), the slowest link a GPU is sold with; the shipped
   * catalog's slowest is 25 Gb/s Ethernet (3.125 GB/s). Above it a collective of a model's
   * gradients takes hours, not the 10^300 seconds a tiny bandwidth such as 1e-300 prices.
   */
  static final double MIN_BANDWIDTH = 1e8;
  /** The largest bandwidth: 1e15 bytes/s (1 PB/s), beyond any link. */
  static final double MAX_BANDWIDTH = 1e15;
  /** The most NICs per node. */
  static final int MAX_NICS = 64;

  private ClusterFileReader() {}

  static ClusterSpec read(Path file, HardwareCatalog catalog) {
    return of(file.toString(), description(file), catalog);
  }

  /**
   * The cluster a cluster file's mapping describes.
   *
   * @param file where the mapping came from, for messages
   * @param root the mapping
   * @param catalog the hardware it may name
   * @return the cluster
   */
  static ClusterSpec of(String file, JsonNode root, HardwareCatalog catalog) {
    checkKeys(file, root);
    int nodes = intField(file, root, "nodes");
    int gpus = intField(file, root, "gpusPerNode");
    JsonNode gpu = root.get("gpu");
    HardwareCatalog hardware = catalog;
    if (gpu != null && gpu.isObject()) {
      GpuEntry inline = CatalogReader.gpu(gpu, file + ": gpu");
      hardware = catalog.with(inline, file);
      gpu = gpu.get("name");
    } else if (gpu == null || !gpu.isTextual()) {
      throw new InputException(file + ": field 'gpu' is required, e.g. gpu: a100-80gb, or a "
          + "GPU entry inline in the catalog's form");
    }
    JsonNode fabric = root.get("fabric");
    if (fabric != null && !fabric.isNull() && !fabric.isTextual()) {
      // A fabric is named from the catalog; a mapping read as text was "unknown fabric ''".
      throw new InputException(file + ": field 'fabric' must name a fabric of the catalog (such "
          + "as ib-ndr400), got " + shown(fabric) + "; define a new one in a --catalog file");
    }
    // The GPU count's limit first, named by the file: the cluster's own check names no file.
    Checked.intProduct(file + ": the GPU count of cluster " + nodes + "x" + gpus,
        Checked.MAX_DEVICES, nodes, gpus);
    ClusterSpec c = ClusterSpec.fromParts(file, nodes, gpus, gpu.asText(),
        fabric == null ? null : fabric.asText(), hardware);
    GpuSpec g = c.gpu();
    Fabric f = c.fabric();
    OptionalDouble nv = bandwidth(file, root, "nvlinkBandwidth");
    if (nv.isPresent()) {
      g = g.withNvlinkBandwidth(nv.getAsDouble());
    }
    OptionalDouble hbm = bandwidth(file, root, "hbmBandwidth");
    if (hbm.isPresent()) {
      g = g.withHbmBandwidth(hbm.getAsDouble());
    }
    OptionalDouble nic = bandwidth(file, root, "nicBandwidth");
    if (nic.isPresent()) {
      f = f.withNicBandwidth(nic.getAsDouble());
    }
    if (root.has("nicsPerNode")) {
      int nics = intField(file, root, "nicsPerNode");
      if (nics > MAX_NICS) {
        throw new InputException(file + ": nicsPerNode " + nics + " is more than " + MAX_NICS);
      }
      f = f.withNicsPerNode(nics);
    }
    if (root.has("fabricLatency")) {
      JsonNode l = root.get("fabricLatency");
      if (!l.isNumber() || !(l.asDouble() >= 0) || l.asDouble() > MAX_LATENCY) {
        throw new InputException(file + ": fabricLatency must be a number of seconds from 0 to "
            + MAX_LATENCY + ", got '" + l.asText() + "'");
      }
      f = f.withLatency(l.asDouble());
    }
    return new ClusterSpec(c.nodes(), c.gpusPerNode(), g, f, c.hostGpus(), c.hostsGrouped());
  }

  /**
   * A cluster file's top-level mapping, every key one a cluster file may have: what a plan made
   * on the cluster embeds, so that the plan is priced again on the same figures without the file.
   *
   * @param file the cluster file
   * @return its top-level mapping
   */
  static JsonNode description(Path file) {
    JsonNode root;
    try {
      root = TreeReaders.yaml().readTree(
          InputFiles.readString(file, InputFiles.CLUSTER_MAX_BYTES, "YAML cluster file"));
    } catch (IOException e) {
      throw new InputException(file + ": not a valid YAML cluster file: "
          + JsonErrors.describe(e), e);
    }
    checkKeys(file.toString(), root);
    return root;
  }

  /** Refuses anything but a mapping of the keys a cluster file may have. */
  private static void checkKeys(String file, JsonNode root) {
    if (root == null || !root.isObject()) {
      throw new InputException(file + ": expected a YAML mapping with nodes, gpusPerNode, gpu");
    }
    io.meshplan.util.TreeReaders.requireKnownFields(file, root, KEYS);
  }

  /** A value as the file holds it: a scalar quoted, a list or mapping as written. */
  private static String shown(JsonNode n) {
    return n.isValueNode() ? "'" + io.meshplan.util.TerminalText.escape(n.asText()) + "'"
        : io.meshplan.util.Words.clipped(n.toString());
  }

  private static int intField(String file, JsonNode root, String key) {
    JsonNode n = root.get(key);
    if (n == null || !n.canConvertToInt() || !n.isIntegralNumber() || n.asInt() <= 0) {
      throw new InputException(file + ": field '" + key + "' must be a positive integer, got "
          + (n == null ? "nothing" : shown(n)));
    }
    return n.asInt();
  }

  private static OptionalDouble bandwidth(String file, JsonNode root, String key) {
    JsonNode n = root.get(key);
    if (n == null) {
      return OptionalDouble.empty();
    }
    OptionalDouble v = n.isNumber() ? OptionalDouble.of(n.asDouble())
        : Units.parseBandwidth(n.asText());
    if (v.isEmpty() || !(v.getAsDouble() >= MIN_BANDWIDTH)
        || v.getAsDouble() > MAX_BANDWIDTH) {
      throw new InputException(file + ": field '" + key + "' must be a bandwidth from 0.1 GB/s "
          + "to 1 PB/s (1e8 to 1e15 bytes/s), such as 200Gbps, 450GB/s or a number of bytes/s, "
          + "got " + shown(n));
    }
    return v;
  }
}
