package io.meshplan.cluster;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Require;
import io.meshplan.util.Words;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A homogeneous GPU cluster: {@code nodes} NVLink domains of {@code gpusPerNode} GPUs each, joined
 * by one fabric. On boards whose NVLink stops at the board (HGX, DGX) a domain is one host; on
 * rack-scale systems (GB200 and GB300 NVL72: 18 compute trays of 4 GPUs behind NVLink switches)
 * it is {@code gpusPerNode / hostGpus} hosts of {@code hostGpus} GPUs, and meshplan plans and
 * prices it as one node: collectives inside it run over NVLink, and its hosts' NICs together carry
 * its traffic into the fabric. Device ids run node by node: GPU {@code j} of node {@code i} is
 * device {@code i*gpusPerNode + j}.
 *
 * @param nodes number of NVLink domains (hosts, when a domain is one host)
 * @param gpusPerNode GPUs in each domain
 * @param gpu the GPU model
 * @param fabric the inter-node fabric
 * @param hostGpus GPUs one host (one operating system, one launcher process group) holds; it
 *     divides {@code gpusPerNode}, and equals it when NVLink stops at the host
 * @param hostsGrouped whether the GPU's NVLink joins several hosts (its catalog host holds fewer
 *     GPUs than its NVLink domain: GB200, GB300), so the parser groups hosts named {@code
 *     HOSTSxG} into domains, and the canonical string names the domains ({@code NxnvlD}), also a
 *     domain of one host
 */
public record ClusterSpec(int nodes, int gpusPerNode, GpuSpec gpu, Fabric fabric, int hostGpus,
    boolean hostsGrouped) implements java.io.Serializable {
  private static final long serialVersionUID = 3L;

  private static final Pattern SHORT = Pattern.compile(
      "([0-9]+)x(nvl)?([0-9]+):([A-Za-z0-9._-]+?)(?::([A-Za-z0-9._-]+))?");

  /** Validates the counts. */
  public ClusterSpec {
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    Require.nonNull(gpu, "gpu");
    Require.nonNull(fabric, "fabric");
    Checked.intProduct("the GPU count of cluster " + nodes + "x" + gpusPerNode,
        Checked.MAX_DEVICES, nodes, gpusPerNode);
    Require.that(hostGpus > 0 && gpusPerNode % hostGpus == 0, "GPUs per host must divide the "
        + gpusPerNode + " GPUs of an NVLink domain, got " + hostGpus);
    Require.that(hostsGrouped || hostGpus == gpusPerNode, "a domain of several hosts groups "
        + "them");
  }

  /**
   * A cluster whose NVLink stops at the host: each node one host.
   *
   * @param nodes number of nodes
   * @param gpusPerNode GPUs in each node
   * @param gpu the GPU model
   * @param fabric the inter-node fabric
   */
  public ClusterSpec(int nodes, int gpusPerNode, GpuSpec gpu, Fabric fabric) {
    this(nodes, gpusPerNode, gpu, fabric, gpusPerNode);
  }

  /**
   * A cluster whose domains are {@code gpusPerNode / hostGpus} hosts each; the hosts are grouped
   * (rack-scale) exactly when a domain holds more than one.
   *
   * @param nodes number of NVLink domains
   * @param gpusPerNode GPUs in each domain
   * @param gpu the GPU model
   * @param fabric the inter-node fabric
   * @param hostGpus GPUs one host holds
   */
  public ClusterSpec(int nodes, int gpusPerNode, GpuSpec gpu, Fabric fabric, int hostGpus) {
    this(nodes, gpusPerNode, gpu, fabric, hostGpus, hostGpus < gpusPerNode);
  }

  /**
   * Whether an NVLink domain spans several hosts (an NVL72 rack).
   *
   * @return {@code hostGpus < gpusPerNode}
   */
  public boolean rackScale() {
    return hostGpus < gpusPerNode;
  }

  /**
   * The hosts of the cluster: what a launcher starts one process group on.
   *
   * @return {@code nodes * gpusPerNode / hostGpus}
   */
  public int hosts() {
    return nodes * (gpusPerNode / hostGpus);
  }

  /**
   * The same cluster with another number of NVLink domains (nodes).
   *
   * @param n domains
   * @return the cluster
   */
  public ClusterSpec withNodes(int n) {
    return new ClusterSpec(n, gpusPerNode, gpu, fabric, hostGpus, hostsGrouped);
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
   * Whether a cluster text is the short form {@code NODESxGPUS:gpu[:fabric]} (or {@code
   * DOMAINSxnvlD:gpu[:fabric]}) rather than the path of a cluster file.
   *
   * @param text the cluster text
   * @return true for the short form
   */
  public static boolean isShortForm(String text) {
    return text != null && SHORT.matcher(Words.trimmed(text)).matches();
  }

  /**
   * The content of the YAML cluster file a cluster text names, which a plan made on the cluster
   * embeds so that it is priced again on the file's figures (its bandwidth overrides, an inline
   * GPU) without the file: its short string ({@link #toShortString}) names only catalog entries.
   *
   * @param text the cluster string or file path, as {@link #parse} takes it
   * @return the file's top-level mapping, or empty when the text is a cluster string
   */
  public static java.util.Optional<com.fasterxml.jackson.databind.JsonNode> fileDescription(
      String text) {
    Require.nonNull(text, "cluster");
    return isShortForm(text) ? java.util.Optional.empty()
        : clusterFile(text).map(ClusterFileReader::description);
  }

  /**
   * The cluster file a text that is not the short form names: an existing path, checked to be a
   * regular file.
   *
   * @param text the cluster text
   * @return the file, or empty when no file of that name exists
   */
  private static java.util.Optional<Path> clusterFile(String text) {
    Path p;
    try {
      p = text.isBlank() ? null : Path.of(text);
    } catch (java.nio.file.InvalidPathException e) {
      return java.util.Optional.empty();
    }
    if (p == null || !Files.exists(p)) {
      return java.util.Optional.empty();
    }
    InputFiles.checkRegular(p, "YAML cluster file");
    return java.util.Optional.of(p);
  }

  /**
   * The cluster a cluster file's content describes ({@link #fileDescription}), checked as the
   * file is.
   *
   * @param where where the content was found, for messages
   * @param description the file's top-level mapping
   * @param catalog the hardware it may name
   * @return the cluster
   * @throws InputException naming the bad field
   */
  public static ClusterSpec ofDescription(String where,
      com.fasterxml.jackson.databind.JsonNode description, HardwareCatalog catalog) {
    Require.nonNull(where, "where");
    Require.nonNull(catalog, "catalog");
    return ClusterFileReader.of(where, description, catalog);
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
    Matcher m = SHORT.matcher(Words.trimmed(text));
    if (m.matches()) {
      int count = parseCount(text, m.group(1), "node count");
      int per = parseCount(text, m.group(3), m.group(2) != null ? "NVLink domain size"
          : "GPUs per node");
      return fromParts(text, count, per, m.group(2) != null, m.group(4), m.group(5), catalog);
    }
    java.util.Optional<Path> file = clusterFile(text);
    if (file.isPresent()) {
      return ClusterFileReader.read(file.get(), catalog);
    }
    String t = Words.trimmed(text);
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
      // SHORT matched ASCII digits, so only a number too long for an int gets here: already past
      // the GPU-count limit.
      throw new InputException("cluster '" + text + "': the " + what + " " + digits
          + " is more than the limit of " + Checked.MAX_DEVICES + " GPUs", e);
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
    return fromParts(where, nodes, gpusPerNode, false, gpuName, fabricName, catalog);
  }

  /**
   * Builds a cluster from catalog names: {@code count} hosts of {@code per} GPUs, or with {@code
   * domains} set, {@code count} NVLink domains of {@code per} GPUs ({@code NxnvlD}). On a
   * rack-scale GPU (its catalog's {@code hostGpus} below its {@code nvlinkDomain}) hosts are
   * grouped into domains of {@code nvlinkDomain} GPUs, or of all of them when they are fewer;
   * hosts that do not fill whole domains are refused, and so is a node or domain larger than a
   * host on a GPU whose NVLink stops at the host (8 on HGX boards, a bridged pair on the H100
   * NVL), and any NVLink domain on an AMD GPU, which has none.
   */
  static ClusterSpec fromParts(String where, int count, int per, boolean domains, String gpuName,
      String fabricName, HardwareCatalog catalog) {
    GpuEntry gpu = catalog.gpu(gpuName).orElseThrow(() -> new InputException(
        "cluster '" + where + "': " + catalog.unknownGpu(gpuName)));
    String fname = fabricName == null ? gpu.defaultFabric() : fabricName;
    Fabric fabric = catalog.fabric(fname).orElseThrow(() -> new InputException(
        "cluster '" + where + "': " + catalog.unknownFabric(fname)));
    int host = gpu.hostGpus();
    int domain = gpu.spec().nvlinkDomain();
    boolean amd = gpu.spec().architecture().vendor() == Architecture.Vendor.AMD;
    if (domains && amd) {
      throw new InputException("cluster '" + where + "': the " + gpu.name() + " has no NVLink: "
          + "AMD Infinity Fabric joins the " + domain + " GPUs of one host and no more; give "
          + "NODESx" + domain + ":" + gpu.name());
    }
    if (host >= domain) {
      if (!domains) {
        requireWithinDomain(where, count, per, gpu.spec());
      }
      if (domains && per > domain) {
        throw new InputException("cluster '" + where + "': " + gpu.name() + "'s NVLink joins "
            + domain + " GPUs of one host; an NVLink domain of " + per + " needs a rack-scale "
            + "system (gb200, gb300)");
      }
      return new ClusterSpec(count, per, gpu.spec(), fabric);
    }
    if (!domains) {
      return ofHosts(where, count, per, gpu.spec(), host, fabric);
    }
    if (per > domain || per % host != 0) {
      throw new InputException("cluster '" + where + "': an NVLink domain of " + per + " "
          + gpu.name() + " GPUs must be whole hosts of " + host + " and at most " + domain);
    }
    return new ClusterSpec(count, per, gpu.spec(), fabric, host, true);
  }

  /**
   * A cluster of {@code hosts} hosts of {@code perHost} GPUs: one NVLink domain per host where
   * the GPU's NVLink stops at the host, else hosts of the GPU's {@code hostGpus} grouped into
   * NVLink domains of its {@code nvlinkDomain} GPUs (or one domain of all of them when they are
   * fewer); hosts of another size, or that do not fill whole domains, are refused.
   *
   * @param where the cluster's text, for messages
   * @param hosts hosts
   * @param perHost GPUs per host
   * @param gpu the GPU
   * @param hostGpus the GPUs one of its hosts holds
   * @param fabric the fabric
   * @return the cluster
   * @throws InputException naming what does not fit
   */
  public static ClusterSpec ofHosts(String where, int hosts, int perHost, GpuSpec gpu,
      int hostGpus, Fabric fabric) {
    int domain = gpu.nvlinkDomain();
    if (hostGpus >= domain) {
      requireWithinDomain(where, hosts, perHost, gpu);
      return new ClusterSpec(hosts, perHost, gpu, fabric);
    }
    if (perHost != hostGpus) {
      throw new InputException("cluster '" + where + "': a " + gpu.name() + " host holds "
          + hostGpus + " GPUs; give HOSTSx" + hostGpus + ":" + gpu.name() + " or DOMAINSxnvl"
          + domain + ":" + gpu.name());
    }
    // The limit first: a count too large for any cluster has no whole racks to advise.
    long gpus = Checked.intProduct("the GPU count of cluster " + hosts + "x" + perHost,
        Checked.MAX_DEVICES, hosts, perHost);
    if (gpus <= domain) {
      return new ClusterSpec(1, (int) gpus, gpu, fabric, hostGpus, true);
    }
    if (gpus % domain != 0) {
      throw new InputException("cluster '" + where + "': " + gpus + " GPUs do not fill whole "
          + "NVLink domains of " + domain + " (" + gpu.name() + "); give a multiple of "
          + domain / hostGpus + " hosts");
    }
    return new ClusterSpec((int) (gpus / domain), domain, gpu, fabric, hostGpus, true);
  }

  /**
   * Refuses a node of more GPUs than one NVLink domain of a GPU whose domain stops at the host
   * (8 on HGX boards, a bridged pair on the H100 NVL; on AMD, the 8 that Infinity Fabric joins):
   * meshplan prices a node as one domain, and would price GPUs that talk over PCIe or the fabric
   * at NVLink's rate. A GPU count past the limit is named first.
   */
  private static void requireWithinDomain(String where, int nodes, int per, GpuSpec gpu) {
    int domain = gpu.nvlinkDomain();
    if (per <= domain) {
      return;
    }
    Checked.intProduct("the GPU count of cluster " + nodes + "x" + per, Checked.MAX_DEVICES,
        nodes, per);
    if (gpu.architecture().vendor() == Architecture.Vendor.AMD) {
      throw new InputException("cluster '" + where + "': a node of " + per + " " + gpu.name()
          + " GPUs is more than the " + domain + " that AMD Infinity Fabric joins; give "
          + "NODESx" + domain + ":" + gpu.name());
    }
    throw new InputException("cluster '" + where + "': a node of " + per + " " + gpu.name()
        + " GPUs is more than the " + domain + " that its NVLink joins; give " + (domain == 2
        ? "PAIRSx2:" + gpu.name() + ": each bridged pair is a node, and the pairs of a host "
            + "talk over PCIe, priced at the fabric's rate as between hosts"
        : "NODESx" + domain + ":" + gpu.name()));
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
   * The NICs a node uses for GPU traffic: the fabric's count per host, but never more than one
   * per GPU, times the hosts of an NVLink domain.
   *
   * @return NICs per node (per NVLink domain)
   */
  public int nicsInUse() {
    return Math.min(fabric.nicsPerNode(), hostGpus) * (gpusPerNode / hostGpus);
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
   * The advice to plan on more nodes of this kind: {@code try at least } and the canonical string
   * of the same cluster with {@code n} NVLink domains (nodes), which {@link #parse} reads back as
   * that cluster ({@code 3xnvl16:gb200:ib-ndr400} where the domain spans hosts, never a
   * {@code 3x16:gb200} the parser refuses for a GPU whose hosts hold 4), or, past the largest
   * cluster meshplan plans ({@link Checked#MAX_DEVICES} GPUs), that no cluster of this GPU holds
   * it.
   *
   * @param n domains, at least 1
   * @return the advice
   */
  public String tryAtLeast(long n) {
    Require.that(n >= 1, "a node count must be at least 1, got " + n);
    if (n > Checked.MAX_DEVICES / gpusPerNode) {
      return "it needs more than the " + Checked.MAX_DEVICES + " GPUs of the largest cluster"
          + " meshplan plans";
    }
    return "try at least " + withNodes((int) n).toShortString();
  }

  /**
   * The canonical cluster string, e.g. {@code 2x8:h100-80gb:ib-ndr400}, which {@link #parse}
   * reads back as this cluster. On a GPU whose NVLink spans more GPUs than a host holds (GB200,
   * GB300) it names the domains, {@code 3xnvl4:gb200:ib-ndr400}, also where a domain is one host:
   * the parser would read {@code 3x4:gb200} as three hosts in one domain of 12.
   *
   * @return the string (overridden bandwidths are not shown)
   */
  public String toShortString() {
    // A rack-scale cluster's hosts are grouped (the constructor's rule).
    return nodes + "x" + (hostsGrouped ? "nvl" : "") + gpusPerNode + ":" + gpu.name() + ":"
        + fabric.name();
  }
}
