package io.meshplan.cluster;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Require;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A homogeneous GPU cluster: {@code nodes} nodes of {@code gpusPerNode} GPUs each, joined by one
 * fabric. Device ids run node by node: GPU {@code j} of node {@code i} is device {@code
 * i*gpusPerNode + j}.
 *
 * @param nodes number of nodes
 * @param gpusPerNode GPUs in each node
 * @param gpu the GPU model
 * @param fabric the inter-node fabric
 */
public record ClusterSpec(int nodes, int gpusPerNode, GpuSpec gpu, Fabric fabric) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private static final Pattern SHORT =
      Pattern.compile("([0-9]+)x([0-9]+):([A-Za-z0-9._-]+?)(?::([A-Za-z0-9._-]+))?");

  /** Validates the counts. */
  public ClusterSpec {
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    Require.nonNull(gpu, "gpu");
    Require.nonNull(fabric, "fabric");
    Checked.intProduct("the GPU count of cluster " + nodes + "x" + gpusPerNode,
        Checked.MAX_DEVICES, nodes, gpusPerNode);
  }

  /**
   * Parses {@code NODESxGPUS:gpu[:fabric]} (e.g. {@code 50x4:a100-40gb}, {@code
   * 128x8:h100-80gb:ib-ndr400}) or, if the text is not of that form, reads it as the path of a YAML
   * cluster file (see {@link ClusterFileReader}), with the GPUs and fabrics of meshplan's own
   * catalog ({@link HardwareCatalog#shipped}).
   *
   * @param text the cluster string or file path
   * @return the cluster
   * @throws InputException naming the bad part and listing the valid names
   */
  public static ClusterSpec parse(String text) {
    return parse(text, HardwareCatalog.shipped());
  }

  /**
   * Parses a cluster string or file as {@link #parse(String)} does, naming the GPUs and fabrics
   * of a catalog.
   *
   * @param text the cluster string or file path
   * @param catalog the hardware it may name
   * @return the cluster
   * @throws InputException naming the bad part and listing the valid names
   */
  public static ClusterSpec parse(String text, HardwareCatalog catalog) {
    Require.nonNull(text, "cluster");
    Require.nonNull(catalog, "catalog");
    Matcher m = SHORT.matcher(text.trim());
    if (m.matches()) {
      return fromParts(text, parseCount(text, m.group(1), "node count"),
          parseCount(text, m.group(2), "GPUs per node"), m.group(3), m.group(4), catalog);
    }
    Path p;
    try {
      p = text.isBlank() ? null : Path.of(text);
    } catch (java.nio.file.InvalidPathException e) {
      p = null;
    }
    if (p != null && Files.exists(p)) {
      InputFiles.checkRegular(p, "YAML cluster file");
      return ClusterFileReader.read(p, catalog);
    }
    String t = text.trim();
    if (t.contains("/") || t.endsWith(".yaml") || t.endsWith(".yml") || t.endsWith(".json")) {
      throw new InputException("cluster '" + text + "': no such file; give a YAML cluster file"
          + " that exists, or NODESxGPUS:gpu[:fabric] such as 50x4:a100-40gb");
    }
    throw new InputException("cluster '" + text + "': expected NODESxGPUS:gpu[:fabric] such as"
        + " 50x4:a100-40gb or 128x8:h100-80gb:ib-ndr400, or the path of a YAML cluster file");
  }

  private static int parseCount(String text, String digits, String what) {
    try {
      int v = AsciiDigits.parseInt(digits);
      if (v > 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // falls through to the message below
    }
    throw new InputException("cluster '" + text + "': the " + what + " '" + digits
        + "' must be a positive integer");
  }

  /**
   * Builds a cluster from catalog names.
   *
   * @param where the text being parsed, for messages
   * @param nodes node count
   * @param gpusPerNode GPUs per node
   * @param gpuName catalog GPU name
   * @param fabricName catalog fabric name, or null for the GPU's default
   * @param catalog the hardware the names are looked up in
   * @return the cluster
   */
  static ClusterSpec fromParts(String where, int nodes, int gpusPerNode, String gpuName,
      String fabricName, HardwareCatalog catalog) {
    GpuEntry gpu = catalog.gpu(gpuName).orElseThrow(() -> new InputException(
        "cluster '" + where + "': " + catalog.unknownGpu(gpuName)));
    String fname = fabricName == null ? gpu.defaultFabric() : fabricName;
    Fabric fabric = catalog.fabric(fname).orElseThrow(() -> new InputException(
        "cluster '" + where + "': " + catalog.unknownFabric(fname)));
    return new ClusterSpec(nodes, gpusPerNode, gpu.spec(), fabric);
  }

  /**
   * The total GPU count.
   *
   * @return nodes * gpusPerNode
   */
  public int gpuCount() {
    return nodes * gpusPerNode;
  }

  /**
   * The node that holds a device.
   *
   * @param device the device id
   * @return its node index
   */
  public int nodeOf(int device) {
    return device / gpusPerNode;
  }

  /**
   * The NICs a node uses for GPU traffic: the fabric's count, but never more than one per GPU.
   *
   * @return NICs per node
   */
  public int nicsInUse() {
    return Math.min(fabric.nicsPerNode(), gpusPerNode);
  }

  /**
   * The bandwidth out of one node into the fabric, in one direction.
   *
   * @return bytes/s: NICs in use times the per-NIC bandwidth
   */
  public double nodeNetworkBandwidth() {
    return nicsInUse() * fabric.nicBandwidth();
  }

  /**
   * The canonical cluster string, e.g. {@code 2x8:h100-80gb:ib-ndr400}.
   *
   * @return the string (overridden bandwidths are not shown)
   */
  public String toShortString() {
    return nodes + "x" + gpusPerNode + ":" + gpu.name() + ":" + fabric.name();
  }
}
