package io.meshplan.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import io.meshplan.util.Units;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads hardware catalog YAML (the shipped {@code catalog.yaml}, whose header describes every
 * field, a user's {@code --catalog} file, or one GPU given inline in a cluster file) with the
 * project's strict readers ({@link TreeReaders}: no anchors, aliases or tags, no key given twice,
 * nesting and size limits). Every figure is a number in the unit its field names, within a
 * physical range that every real part lies well inside, at both ends (each constant below says
 * why); anything else is refused in one line naming the file, the entry, the field and the range.
 * A lower bound matters as much as an upper one: a bandwidth or peak of 1e-300 is "above 0" but
 * prices an iteration at 10^300 seconds or more, past a double's range.
 */
final class CatalogReader {
  private static final Set<String> TOP_KEYS = Set.of("gpus", "fabrics");
  private static final Set<String> GPU_KEYS = Set.of("name", "aliases", "architecture",
      "peakTflops", "memoryGiB", "hbmGBps", "nvlinkDomain", "nvlinkGBpsPerDirection", "powerW",
      "boostClockMHz", "defaultFabric", "source", "hostGpus", "meshLinkGBpsPerDirection",
      "attention", "gemm16");
  private static final Set<String> ATTENTION_KEYS = Set.of("forward", "backward",
      "narrowForward", "narrowBackward");
  private static final Set<String> FABRIC_KEYS = Set.of("name", "kind", "nicGbps", "nicsPerNode",
      "latencySeconds", "source");
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
  /** The most entries one list of a catalog may have. */
  static final int MAX_ENTRIES = 1024;
  private static final double TERA = 1e12;
  private static final double GIGA = 1e9;
  private static final double GBIT = 1e9 / 8;
  private static final long GIB = 1L << 30;
  /**
   * The smallest peak, TFLOP/s: 0.1, below any GPU a model is trained on (the shipped catalog's
   * smallest, the V100's fp32, is 15.7).
   */
  static final double MIN_TFLOPS = 0.1;
  /** The largest peak, TFLOP/s: 10^6 (an exaFLOP/s per GPU). */
  static final double MAX_TFLOPS = 1e6;
  /**
   * The smallest memory, GiB: 1, below any GPU a model is trained on (the shipped catalog's
   * smallest is the V100's 16); a smaller figure rounds towards no memory at all.
   */
  static final double MIN_GIB = 1;
  /** The largest memory, GiB: 2^16 (64 TiB per GPU). */
  static final double MAX_GIB = 1 << 16;
  /**
   * The smallest bandwidth, GB/s: 0.1 ({@link ClusterFileReader#MIN_BANDWIDTH}, below 1 Gb/s
   * Ethernet; the shipped catalog's slowest HBM is 900 GB/s, its slowest NVLink 150 GB/s).
   */
  static final double MIN_GBPS = ClusterFileReader.MIN_BANDWIDTH / GIGA;
  /** The largest bandwidth, GB/s: 10^6 (1 PB/s, {@link ClusterFileReader#MAX_BANDWIDTH}). */
  static final double MAX_GBPS = ClusterFileReader.MAX_BANDWIDTH / GIGA;
  /**
   * The smallest fraction of a peak a kernel reaches (attention's fractions, gemm16): 0.01,
   * below any measured kernel (the architectures' tables' least is 0.29, Hopper's and
   * Blackwell's narrow-head backward attention).
   */
  static final double MIN_FRACTION = 0.01;
  /**
   * The range of a board's power, W: 10 to 10^5, around any accelerator's (the shipped
   * catalog's are 300 to 1,400).
   */
  private static final double MIN_WATTS = 10;
  private static final double MAX_WATTS = 1e5;
  /**
   * The range of a boost clock, MHz: 100 to 10^5, around any GPU's (the shipped catalog's are
   * 1,410 to 2,400).
   */
  private static final double MIN_MHZ = 100;
  private static final double MAX_MHZ = 1e5;
  /** The largest NVLink domain, GPUs. */
  private static final int MAX_DOMAIN = 1 << 16;

  private CatalogReader() {}

  /** The entries of one catalog text, in file order. */
  record Entries(List<GpuEntry> gpus, List<FabricEntry> fabrics) {}

  /**
   * Reads catalog text.
   *
   * @param text the YAML
   * @param where the file, for messages
   * @return its entries
   * @throws InputException naming the file and what is wrong
   */
  static Entries read(String text, String where) {
    JsonNode root;
    try {
      root = TreeReaders.yaml().readTree(text);
    } catch (IOException e) {
      throw new InputException(where + ": not a valid YAML catalog: " + JsonErrors.describe(e),
          e);
    }
    if (root == null || !root.isObject()) {
      throw new InputException(where + ": expected a YAML mapping with gpus: and fabrics: lists");
    }
    checkKeys(root, TOP_KEYS, where);
    List<GpuEntry> gpus = new ArrayList<>();
    for (JsonNode n : list(root, "gpus", where)) {
      gpus.add(gpu(n, where + ": gpus[" + gpus.size() + "]"));
    }
    List<FabricEntry> fabrics = new ArrayList<>();
    for (JsonNode n : list(root, "fabrics", where)) {
      fabrics.add(fabric(n, where + ": fabrics[" + fabrics.size() + "]"));
    }
    return new Entries(gpus, fabrics);
  }

  private static List<JsonNode> list(JsonNode root, String key, String where) {
    JsonNode l = root.get(key);
    if (l == null) {
      return List.of();
    }
    if (!l.isArray() || l.size() > MAX_ENTRIES) {
      throw new InputException(where + ": '" + key + "' must be a list of at most " + MAX_ENTRIES
          + " entries");
    }
    List<JsonNode> out = new ArrayList<>();
    l.forEach(out::add);
    return out;
  }

  /**
   * Reads one GPU entry.
   *
   * @param n the entry's mapping
   * @param where the file and entry, for messages
   * @return the entry
   */
  static GpuEntry gpu(JsonNode n, String where) {
    String name = name(n, where);
    String at = where + " '" + name + "'";
    checkKeys(n, GPU_KEYS, at);
    Architecture arch = architecture(n, at);
    Map<Precision, Double> peaks = peaks(n.get("peakTflops"), arch, at);
    double gemm16 = n.has("gemm16") ? gemm16(n, arch, at) : 0;
    long bytes = memory(n, at);
    double hbm = gbps(n, "hbmGBps", at) * GIGA;
    int domain = (int) integer(n, "nvlinkDomain", MAX_DOMAIN, at);
    double nvlink = gbps(n, "nvlinkGBpsPerDirection", at) * GIGA;
    double link = n.has("meshLinkGBpsPerDirection")
        ? gbps(n, "meshLinkGBpsPerDirection", at) * GIGA : 0;
    int host = n.has("hostGpus") ? (int) integer(n, "hostGpus", MAX_DOMAIN, at) : domain;
    if (domain % host != 0) {
      throw new InputException(at + ": hostGpus " + host + " must divide nvlinkDomain " + domain);
    }
    mesh(arch, domain, host, nvlink, link, at);
    GpuSpec spec = new GpuSpec(name, arch, peaks, bytes, hbm, domain, nvlink, link,
        attention(n.get("attention"), arch, at), gemm16);
    return new GpuEntry(spec, aliases(n, at), word(n, "defaultFabric", at),
        optional(n, "powerW", MIN_WATTS, MAX_WATTS, "W", at),
        optional(n, "boostClockMHz", MIN_MHZ, MAX_MHZ, "MHz", at),
        text(n, "source", at), host);
  }

  /**
   * The rules of a GPU's links inside its node: an AMD GPU has no NVLink, its Infinity Fabric
   * stops at the host (hostGpus, if given, is the whole nvlinkDomain); a fully connected mesh
   * joins each pair of the domain's GPUs by one link, so a GPU's total is at most its domain's
   * other GPUs times the link.
   */
  private static void mesh(Architecture arch, int domain, int host, double nvlink, double link,
      String at) {
    if (arch.vendor() == Architecture.Vendor.AMD && host != domain) {
      throw new InputException(at + ": " + arch.word() + " GPUs have no NVLink: Infinity Fabric "
          + "joins the GPUs of one host only, so hostGpus " + host + " must equal nvlinkDomain "
          + domain);
    }
    if (link > 0 && (domain < 2 || nvlink > (domain - 1) * link * (1 + 1e-9))) {
      throw new InputException(at + ": a mesh of " + domain + " GPUs gives each GPU at most "
          + (domain - 1) + " links of meshLinkGBpsPerDirection, less than its "
          + "nvlinkGBpsPerDirection");
    }
  }

  /**
   * Reads one fabric entry.
   *
   * @param n the entry's mapping
   * @param where the file and entry, for messages
   * @return the entry
   */
  static FabricEntry fabric(JsonNode n, String where) {
    String name = name(n, where);
    String at = where + " '" + name + "'";
    checkKeys(n, FABRIC_KEYS, at);
    String k = word(n, "kind", at);
    FabricKind kind;
    try {
      kind = FabricKind.valueOf(k.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InputException(at + ": unknown kind '" + k + "'; valid: infiniband, roce,"
          + " ethernet");
    }
    double nic = number(n, "nicGbps", MIN_GBPS * 8, MAX_GBPS * 8, "Gb/s", at) * GBIT;
    int nics = (int) integer(n, "nicsPerNode", ClusterFileReader.MAX_NICS, at);
    JsonNode l = n.get("latencySeconds");
    if (l == null || !l.isNumber() || !(l.asDouble() >= 0)
        || l.asDouble() > ClusterFileReader.MAX_LATENCY) {
      throw new InputException(at + ": 'latencySeconds' must be a number of seconds from 0 to "
          + ClusterFileReader.MAX_LATENCY + ", got " + shown(l));
    }
    return new FabricEntry(new Fabric(name, kind, nic, nics, l.asDouble()),
        text(n, "source", at));
  }

  private static String name(JsonNode n, String where) {
    if (n == null || !n.isObject()) {
      throw new InputException(where + ": expected a mapping with name: and the entry's fields");
    }
    String name = word(n, "name", where);
    if (!NAME.matcher(name).matches()) {
      throw new InputException(where + ": name '" + name + "' must be 1 to 64 lower-case "
          + "letters, digits, '.', '_' or '-', starting with a letter or digit");
    }
    return name;
  }

  private static Architecture architecture(JsonNode n, String at) {
    String a = word(n, "architecture", at);
    try {
      return Architecture.parse(a);
    } catch (InputException e) {
      throw new InputException(at + ": " + e.getMessage());
    }
  }

  /**
   * A GPU's own fused attention fractions ({@link GpuSpec#fusedAttention}): forward and backward
   * at wide heads, and optionally at narrow ones (else the architecture's), at {@link
   * SequenceScaling#REFERENCE} tokens, moving with the sequence as the architecture's kernels
   * do; null when absent.
   */
  private static FusedAttentionKernels attention(JsonNode a, Architecture arch, String at) {
    if (a == null) {
      return null;
    }
    String where = at + ": attention";
    if (!a.isObject()) {
      throw new InputException(where + " must be a mapping of fractions of the dense 16-bit "
          + "peak, e.g. {forward: 0.681, backward: 0.499}");
    }
    checkKeys(a, ATTENTION_KEYS, where);
    FusedAttentionKernels base = arch.attention().orElseThrow(() -> new InputException(at
        + ": " + arch.word() + " has no priced fused attention kernel to state the fractions "
        + "of; leave 'attention' out"));
    double narrowForward = a.has("narrowForward") ? fraction(a, "narrowForward", where)
        : base.narrowForwardEfficiency();
    double narrowBackward = a.has("narrowBackward") ? fraction(a, "narrowBackward", where)
        : base.narrowBackwardEfficiency();
    double forward = fraction(a, "forward", where);
    double backward = fraction(a, "backward", where);
    SequenceScaling lengths = base.lengths();
    if (FusedAttentionKernels.peakEfficiency(forward, backward, narrowForward, narrowBackward,
        lengths) > 1) {
      throw new InputException(String.format(java.util.Locale.ROOT, "%s: the fractions are "
          + "stated at %d tokens, and %s's kernels run up to %.3f times faster at longer "
          + "sequences, which would pass the dense peak; state smaller fractions", where,
          SequenceScaling.REFERENCE, arch.word(), lengths.max()));
    }
    return new FusedAttentionKernels(forward, backward, narrowForward, narrowBackward, lengths);
  }

  /**
   * A GPU's own large-GEMM fraction of its 16-bit dense peak ({@link GpuSpec#gemm16Efficiency}),
   * on an architecture whose 16-bit GEMMs are priced.
   */
  private static double gemm16(JsonNode n, Architecture arch, String at) {
    if (!arch.prices(Precision.BF16) && !arch.prices(Precision.FP16)) {
      throw new InputException(at + ": " + arch.word() + " has no priced 16-bit GEMM to state "
          + "the fraction of; leave 'gemm16' out");
    }
    return fraction(n, "gemm16", at);
  }

  private static Map<Precision, Double> peaks(JsonNode p, Architecture arch, String at) {
    if (p == null || !p.isObject()) {
      throw new InputException(at + ": 'peakTflops' must be a mapping of precision to dense "
          + "TFLOP/s, e.g. {fp32: 67, bf16: 989.5}");
    }
    Map<Precision, Double> m = new EnumMap<>(Precision.class);
    for (Iterator<String> it = p.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      Precision q = precision(k, at);
      if (!arch.has(q)) {
        throw new InputException(at + ": " + arch.word() + " has no " + k + " math; leave its "
            + "peak out");
      }
      m.put(q, number(p, k, MIN_TFLOPS, MAX_TFLOPS, "TFLOP/s", at + ": peakTflops") * TERA);
    }
    if (!m.containsKey(Precision.FP32)) {
      throw new InputException(at + ": 'peakTflops' needs an fp32 peak");
    }
    return m;
  }

  private static Precision precision(String k, String at) {
    for (Precision q : Precision.values()) {
      if (q.name().toLowerCase(Locale.ROOT).equals(k)) {
        return q;
      }
    }
    throw new InputException(at + ": unknown precision '" + k + "' in peakTflops; valid: fp32,"
        + " tf32, bf16, fp16, fp8");
  }

  private static long memory(JsonNode n, String at) {
    double gib = number(n, "memoryGiB", MIN_GIB, MAX_GIB, "GiB", at);
    JsonNode m = n.get("memoryGiB");
    return m.isIntegralNumber() ? m.asLong() * GIB : Math.round(gib * GIB);
  }

  private static List<String> aliases(JsonNode n, String at) {
    JsonNode a = n.get("aliases");
    if (a == null) {
      return List.of();
    }
    if (!a.isArray() || a.size() > MAX_ENTRIES) {
      throw new InputException(at + ": 'aliases' must be a list of short names, e.g. [h100]");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode s : a) {
      if (!s.isTextual() || !NAME.matcher(s.asText()).matches()) {
        throw new InputException(at + ": alias " + shown(s) + " must be 1 to 64 lower-case "
            + "letters, digits, '.', '_' or '-'");
      }
      out.add(s.asText());
    }
    return out;
  }

  /** A bandwidth, GB/s, from {@link #MIN_GBPS} to {@link #MAX_GBPS}. */
  private static double gbps(JsonNode n, String key, String at) {
    return number(n, key, MIN_GBPS, MAX_GBPS, "GB/s", at);
  }

  /** A fraction of a peak, from {@link #MIN_FRACTION} to 1. */
  private static double fraction(JsonNode n, String key, String at) {
    return number(n, key, MIN_FRACTION, 1, "of the peak", at);
  }

  /**
   * A figure from min to max, both included; refused in one line naming the field, the range
   * and its unit.
   */
  private static double number(JsonNode n, String key, double min, double max, String unit,
      String at) {
    JsonNode v = n.get(key);
    if (v == null || !v.isNumber() || !(v.asDouble() >= min) || v.asDouble() > max) {
      throw new InputException(at + ": '" + key + "' must be " + Units.range(min, max, unit)
          + ", got " + shown(v));
    }
    return v.asDouble();
  }

  private static long integer(JsonNode n, String key, long max, String at) {
    JsonNode v = n.get(key);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 1
        || v.asLong() > max) {
      throw new InputException(at + ": '" + key + "' must be a whole number from 1 to " + max
          + ", got " + shown(v));
    }
    return v.asLong();
  }

  private static OptionalDouble optional(JsonNode n, String key, double min, double max,
      String unit, String at) {
    return n.has(key) ? OptionalDouble.of(number(n, key, min, max, unit, at))
        : OptionalDouble.empty();
  }

  private static String word(JsonNode n, String key, String at) {
    JsonNode v = n.get(key);
    if (v == null || !v.isTextual() || v.asText().isBlank() || v.asText().length() > 64) {
      throw new InputException(at + ": '" + key + "' must be a word, got " + shown(v));
    }
    return v.asText();
  }

  private static String text(JsonNode n, String key, String at) {
    JsonNode v = n.get(key);
    if (v == null || !v.isTextual() || v.asText().isBlank() || v.asText().length() > 4096) {
      throw new InputException(at + ": '" + key + "' must be text citing where the numbers "
          + "come from (a datasheet, a paper), got " + shown(v));
    }
    return v.asText().strip();
  }

  private static void checkKeys(JsonNode n, Set<String> keys, String at) {
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!keys.contains(k)) {
        throw new InputException(at + ": unknown field '" + shorter(k) + "'; valid: "
            + String.join(", ", keys.stream().sorted().toList()));
      }
    }
  }

  private static String shown(JsonNode v) {
    if (v == null) {
      return "nothing";
    }
    return v.isContainerNode() ? "a " + (v.isArray() ? "list" : "mapping")
        : "'" + shorter(v.asText()) + "'";
  }

  private static String shorter(String s) {
    String one = s.replaceAll("[\\p{Cntrl}]", "?");
    return one.length() > 64 ? one.substring(0, 64) + "..." : one;
  }
}
