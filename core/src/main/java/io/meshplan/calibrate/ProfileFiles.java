package io.meshplan.calibrate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.Require;
import io.meshplan.util.TreeReaders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads and writes profile files: JSON when the name ends in {@code .json}, YAML otherwise. The
 * layout (version 1):
 *
 * <pre>
 * version: 1
 * cluster: "2x8:h100-80gb:ib-ndr400"
 * entries:
 * - collective: "all_reduce"       # all_reduce, all_gather, reduce_scatter, all_to_all, send_recv
 *   level: "intra-node"            # or inter-node
 *   gpus: 8                        # ranks per group
 *   points: 30                     # measurements behind the entry
 *   alpha: 2.1E-5                  # seconds
 *   beta: 2.2E-12                  # seconds per bus byte (1 / bus bandwidth in bytes/s)
 *   busbwGBps: 454.5               # 1e-9 / beta, for people
 *   tailSlope: 3.9E-12             # seconds per byte beyond the largest size
 *   curve: [[8, 2.2E-5], ...]      # [bytes, seconds], sizes increasing, times non-decreasing
 * compute:                         # optional: fitted by calibrate --train
 *   hopper:                        # GPU architecture (or, in older files, a catalog GPU name
 *                                  # before its first '-', such as h100)
 *     scale: 0.93                  # compute throughput factor: compute seconds are divided by
 *                                  # it (1/16 to ComputeScale.bound, at most 1.2)
 *     runs: 2                      # training runs it was fitted to
 *     folds: [llm-foundry, nemo]   # optional: the public folds those runs came from
 *     band:                        # optional: the 90% interval of its predictions (ErrorBand)
 *       low: 0.9                   #   factor on the predicted time at the low end
 *       high: 1.11                 #   and at the high end
 *       residuals: 30              #   residuals it was taken from
 *       basis: leave-one-stack-out #   or in-sample
 * </pre>
 *
 * <p>Read back, a profile must describe what its cluster could measure: times above 0 and at
 * most {@link #MAX_SECONDS}, alpha at most {@link #MAX_ALPHA}, and rates at most {@link
 * PhysicalBandwidth}'s bound of the cluster it names; anything else is refused at its entry.
 *
 * <p>The {@code compute} section was added without a version change: version 1 files without it
 * read as before (scale 1 everywhere), and a reader that predates it ignores it.
 */
public final class ProfileFiles {
  /**
   * The largest alpha, seconds: one second, the bound a cluster file puts on a fabric's latency
   * (far above any network's microseconds).
   */
  public static final double MAX_ALPHA = 1.0;
  /**
   * The largest time, or time per byte, a profile may state: 1e30 s, the bound shard puts on its
   * cost factors for the same reason: costs are summed over up to millions of operations, and
   * 1e30 keeps every such sum far inside the double range (1.8e308), where 1e308 would make it
   * infinite.
   */
  public static final double MAX_SECONDS = 1e30;

  private ProfileFiles() {}

  private static ObjectMapper mapperFor(Path file) {
    if (isJson(file)) {
      return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
    return new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
  }

  /**
   * The profile as text in the format the file name selects.
   *
   * @param file the target name (only its extension matters)
   * @param profile the profile
   * @return the text, ending in a newline
   */
  public static String format(Path file, Profile profile) {
    ObjectMapper m = mapperFor(file);
    ObjectNode root = m.createObjectNode();
    root.put("version", profile.version());
    root.put("cluster", profile.cluster());
    ArrayNode entries = root.putArray("entries");
    for (ProfileEntry e : profile.entries()) {
      ObjectNode o = entries.addObject();
      o.put("collective", CollectiveNames.label(e.collective()));
      o.put("level", e.level().label());
      o.put("gpus", e.gpus());
      o.put("points", e.points());
      o.put("alpha", e.fit().alpha());
      o.put("beta", e.fit().beta());
      if (e.fit().beta() > 0) {
        o.put("busbwGBps", Math.round(1e-9 / e.fit().beta() * 1000) / 1000.0);
      }
      if (e.curve().isPresent()) {
        MonotoneCurve c = e.curve().get();
        o.put("tailSlope", c.tailSlope());
        ArrayNode pts = o.putArray("curve");
        double[] b = c.bytes();
        double[] s = c.seconds();
        for (int i = 0; i < b.length; i++) {
          ArrayNode p = pts.addArray();
          p.add((long) b[i]);
          p.add(s[i]);
        }
      }
    }
    if (!profile.compute().isEmpty()) {
      ObjectNode compute = root.putObject("compute");
      for (java.util.Map.Entry<String, ComputeScale> e : profile.compute().entrySet()) {
        ObjectNode o = compute.putObject(e.getKey());
        ComputeScale c = e.getValue();
        o.put("scale", c.scale());
        o.put("runs", c.runs());
        if (!c.folds().isEmpty()) {
          ArrayNode folds = o.putArray("folds");
          c.folds().forEach(folds::add);
        }
        c.errorBand().ifPresent(b -> o.putObject("band").put("low", b.low())
            .put("high", b.high()).put("residuals", b.residuals()).put("basis", b.basis()));
      }
    }
    try {
      String text = m.writeValueAsString(root);
      return text.endsWith("\n") ? text : text + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a profile", e);
    }
  }

  /**
   * Writes a profile, after reading its text back as {@code --profile} would: a fit that meshplan
   * would refuse to read (a bus bandwidth above the cluster's bound, an infinite one from beta = 0)
   * is refused here instead of written.
   *
   * @param file the target
   * @param profile the profile
   * @throws InputException if {@link #parse} refuses the text, or the file cannot be written
   */
  public static void write(Path file, Profile profile) {
    String text = format(file, profile);
    try {
      parse(file, text);
    } catch (InputException e) {
      String why = e.getMessage().startsWith(file + ": ")
          ? e.getMessage().substring(file.toString().length() + 2) : e.getMessage();
      throw new InputException("--out " + file + ": not written, since meshplan would refuse"
          + " the fitted profile on reading: " + why, e);
    }
    try {
      io.meshplan.util.AtomicFiles.writeString(file, text);
    } catch (IOException e) {
      throw new InputException("--out " + file + ": cannot write the profile ("
          + InputFiles.describe(e) + ")", e);
    }
  }

  private static boolean isJson(Path file) {
    return file.toString().toLowerCase(Locale.ROOT).endsWith(".json");
  }

  /**
   * Reads a profile.
   *
   * @param file the profile file
   * @return the profile
   * @throws InputException naming the file and the bad field
   */
  public static Profile read(Path file) {
    return parse(file, InputFiles.readString(file, InputFiles.PROFILE_MAX_BYTES,
        "calibration profile"));
  }

  /**
   * Reads a profile's text.
   *
   * @param file the name it came from, for messages and its format (JSON or YAML)
   * @param text the text
   * @return the profile
   * @throws InputException naming the file and the bad field
   */
  public static Profile parse(Path file, String text) {
    JsonNode root;
    try {
      root = (isJson(file) ? TreeReaders.json() : TreeReaders.yaml()).readTree(text);
    } catch (IOException e) {
      throw new InputException(file + ": not a valid profile (" + JsonErrors.describe(e) + ")",
          e);
    }
    if (root == null || !root.isObject()) {
      throw new InputException(file + ": a profile is a mapping with version, cluster, entries");
    }
    try {
      known("", root, TOP_KEYS);
    } catch (IllegalArgumentException e) {
      throw new InputException(file + ": " + e.getMessage(), e);
    }
    JsonNode v = root.path("version");
    if (!v.isMissingNode() && !(v.isIntegralNumber() && v.canConvertToInt())) {
      throw new InputException(file + ": version must be a whole number (this meshplan reads "
          + Profile.VERSION + "), got " + io.meshplan.util.Words.clipped(v.toString()));
    }
    int version = v.isMissingNode() ? -1 : v.intValue();
    if (version != Profile.VERSION) {
      throw new InputException(file + ": profile version " + root.path("version").asText("missing")
          + " is not supported; this meshplan reads version " + Profile.VERSION
          + " (re-run meshplan calibrate)");
    }
    String cluster = root.path("cluster").asText("");
    Optional<ClusterSpec> measured = measuredOn(cluster);
    List<ProfileEntry> entries = new ArrayList<>();
    JsonNode list = root.path("entries");
    for (int i = 0; i < list.size(); i++) {
      entries.add(entry(file, i, list.get(i), measured));
    }
    try {
      return new Profile(version, cluster, entries, compute(file, root.path("compute")));
    } catch (IllegalArgumentException e) {
      throw new InputException(file + ": " + e.getMessage(), e);
    }
  }

  private static java.util.TreeMap<String, ComputeScale> compute(Path file, JsonNode node) {
    java.util.TreeMap<String, ComputeScale> out = new java.util.TreeMap<>();
    if (node.isMissingNode() || node.isNull()) {
      return out;
    }
    if (!node.isObject()) {
      throw new InputException(file + ": compute must be a mapping of GPU architecture to "
          + "{scale, runs}");
    }
    for (java.util.Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      JsonNode o = node.get(key);
      io.meshplan.cluster.Architecture arch;
      ComputeScale scale;
      try {
        if (!o.isObject()) {
          throw new IllegalArgumentException("must be a mapping of scale, runs, folds and band");
        }
        known("", o, COMPUTE_KEYS);
        arch = ComputeScale.architecture(key);
        scale = new ComputeScale(number(o, "scale"), (int) count(o, "runs", 1, MAX_COUNT),
            folds(o), band(o.path("band")));
      } catch (IllegalArgumentException | InputException e) {
        throw new InputException(file + ": compute." + key + ": " + e.getMessage(), e);
      }
      java.util.OptionalDouble bound = ComputeScale.bound(arch);
      if (bound.isEmpty()) {
        throw new InputException(file + ": compute." + key + ": no GPU of meshplan's catalog "
            + "is of the " + arch.word() + " architecture");
      }
      if (scale.scale() > bound.getAsDouble()) {
        throw new InputException(String.format(Locale.ROOT, "%s: compute.%s.scale %s is above "
            + "%.4g: kernels faster than their kernel-level price by more than that point at a "
            + "run stated wrongly, and no kernel runs faster than the hardware's peak", file, key,
            o.get("scale").asText(), bound.getAsDouble()));
      }
      if (scale.scale() < ComputeScaleFitter.MIN) {
        throw new InputException(String.format(Locale.ROOT, "%s: compute.%s.scale %s is below "
            + "%s, the slowest scale meshplan fits to a training log (kernels 16 times slower "
            + "than modelled); a slower run points at the log, not the kernels", file, key,
            o.get("scale").asText(), ComputeScaleFitter.MIN));
      }
      if (out.put(arch.word(), scale) != null) {
        throw new InputException(file + ": compute." + key + ": a second scale for the "
            + arch.word() + " architecture");
      }
    }
    return out;
  }

  private static List<String> folds(JsonNode o) {
    JsonNode f = o.path("folds");
    if (f.isMissingNode() || f.isNull()) {
      return List.of();
    }
    if (!f.isArray() || f.size() > 64) {
      throw new IllegalArgumentException("folds must be a list of at most 64 fold names");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode n : f) {
      if (!n.isTextual() || !n.asText().matches("[a-z0-9][a-z0-9._-]{0,63}")) {
        throw new IllegalArgumentException("a fold name is lower-case letters, digits, '.', '_'"
            + " and '-', at most 64 characters");
      }
      out.add(n.asText());
    }
    return out;
  }

  private static ErrorBand band(JsonNode b) {
    if (b.isMissingNode() || b.isNull()) {
      return null;
    }
    if (!b.isObject()) {
      throw new IllegalArgumentException("band must be a mapping of low, high, residuals, basis");
    }
    known("band: ", b, BAND_KEYS);
    double low = number(b, "low");
    double high = number(b, "high");
    // The factors a fitted scale may move a time by (ComputeScaleFitter.MIN, 1/16 to 16): a band
    // past them would print times no fit could give, and an infinite one "Infinity".
    Require.that(low >= ComputeScaleFitter.MIN && high <= 1 / ComputeScaleFitter.MIN, () ->
        "band low " + low + " and high " + high + " must lie within " + ComputeScaleFitter.MIN
            + " and " + 1 / ComputeScaleFitter.MIN + " of the predicted time");
    return new ErrorBand(low, high, (int) count(b, "residuals", 0, MAX_COUNT),
        b.path("basis").asText(""));
  }

  private static ProfileEntry entry(Path file, int i, JsonNode o, Optional<ClusterSpec> measured) {
    String where = file + ": entries[" + i + "]";
    ProfileEntry e;
    try {
      if (!o.isObject()) {
        throw new IllegalArgumentException("an entry is a mapping of collective, level, gpus, "
            + "points, alpha and beta");
      }
      known("", o, ENTRY_KEYS);
      Collective c = CollectiveNames.of(o.path("collective").asText(""));
      String lv = o.path("level").asText("");
      LinkLevel level = switch (lv) {
        case "intra-node" -> LinkLevel.INTRA_NODE;
        case "inter-node" -> LinkLevel.INTER_NODE;
        default -> throw new IllegalArgumentException("level '" + lv
            + "' must be intra-node or inter-node");
      };
      double alpha = number(o, "alpha");
      Require.that(alpha <= MAX_ALPHA, () -> "alpha " + alpha + " s is above " + MAX_ALPHA
          + " s, far above any network's microseconds of latency");
      AlphaBeta ab = new AlphaBeta(alpha, time(number(o, "beta"), "beta", false));
      Optional<MonotoneCurve> curve = o.has("curve") ? Optional.of(curve(o)) : Optional.empty();
      // A collective runs on two GPUs at least, and on no more than a cluster holds.
      int gpus = (int) count(o, "gpus", 2, io.meshplan.util.Checked.MAX_DEVICES);
      e = new ProfileEntry(c, level, gpus, ab, (int) count(o, "points", 0, MAX_COUNT), curve);
    } catch (IllegalArgumentException ex) {
      throw new InputException(where + ": " + ex.getMessage(), ex);
    }
    String impossible = measured.map(m -> PhysicalBandwidth.impossible(e, m)).orElse(null);
    if (impossible != null) {
      throw new InputException(where + ": " + impossible);
    }
    return e;
  }

  /** The curve of an entry: [bytes, seconds] points, each time above 0 and at most MAX_SECONDS. */
  private static MonotoneCurve curve(JsonNode o) {
    JsonNode pts = o.get("curve");
    double[] b = new double[pts.size()];
    double[] s = new double[pts.size()];
    for (int k = 0; k < pts.size(); k++) {
      JsonNode p = pts.get(k);
      if (p.size() != 2 || !p.get(0).isNumber() || !p.get(1).isNumber()) {
        throw new IllegalArgumentException("curve[" + k + "] must be [bytes, seconds]");
      }
      b[k] = p.get(0).asDouble();
      double bytes = b[k];
      int at = k;
      Require.that(bytes >= 1 && bytes <= MAX_CURVE_BYTES, () -> "curve[" + at + "] size "
          + bytes + " bytes must be at least 1 and at most " + (long) MAX_CURVE_BYTES);
      s[k] = time(p.get(1).asDouble(), "curve[" + k + "] time", true);
    }
    return new MonotoneCurve(b, s, time(number(o, "tailSlope"), "tailSlope", false));
  }

  /**
   * A time (or a time per byte) of a profile: finite, not negative, above 0 where it is one
   * operation's time, and at most {@link #MAX_SECONDS}.
   */
  private static double time(double v, String what, boolean positive) {
    Require.that(Double.isFinite(v) && (positive ? v > 0 : v >= 0) && v <= MAX_SECONDS,
        () -> what + " " + v + " must be " + (positive ? "above 0" : "at least 0") + " and at "
            + "most " + MAX_SECONDS + " seconds (a collective of zero time would be infinitely "
            + "fast)");
    return v;
  }

  /**
   * The cluster a profile names, when it is a cluster string ({@code 2x8:h100-80gb:ib-ndr400},
   * which calibrate writes); empty for a path or a name meshplan does not know, whose rates then
   * go unchecked against the catalog.
   */
  private static Optional<ClusterSpec> measuredOn(String cluster) {
    if (!cluster.matches("[0-9]+x[0-9]+:[A-Za-z0-9._:-]+")) {
      return Optional.empty();
    }
    try {
      return Optional.of(ClusterSpec.parse(cluster));
    } catch (InputException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The most runs, residuals or points a profile counts. */
  static final long MAX_COUNT = 1_000_000_000L;

  /** The largest message size of a curve, bytes: 1 PiB, the largest tensor meshplan reads. */
  static final double MAX_CURVE_BYTES = 0x1p50;

  private static final java.util.Set<String> TOP_KEYS = java.util.Set.of("version", "cluster",
      "entries", "compute");
  private static final java.util.Set<String> ENTRY_KEYS = java.util.Set.of("collective", "level",
      "gpus", "points", "alpha", "beta", "busbwGBps", "tailSlope", "curve");
  private static final java.util.Set<String> COMPUTE_KEYS = java.util.Set.of("scale", "runs",
      "folds", "band");
  private static final java.util.Set<String> BAND_KEYS = java.util.Set.of("low", "high",
      "residuals", "basis");

  /** Refuses a field the profile format does not have, as cluster files do. */
  private static void known(String prefix, JsonNode o, java.util.Set<String> keys) {
    for (java.util.Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!keys.contains(k)) {
        throw new IllegalArgumentException(prefix + "unknown field '"
            + io.meshplan.util.Words.clipped(k)
            + "' (a profile's fields are "
            + String.join(", ", new java.util.TreeSet<>(keys)) + ")");
      }
    }
  }

  /**
   * A whole number of a profile in {@code [min, max]}: an integral JSON or YAML number, never a
   * fraction or a string, read without wrapping.
   */
  private static long count(JsonNode o, String key, long min, long max) {
    JsonNode n = o.get(key);
    Require.that(n != null && n.isIntegralNumber() && n.canConvertToLong()
        && n.longValue() >= min && n.longValue() <= max, () -> "field '" + key + "' must be a "
        + "whole number from " + min + " to " + max + ", got " + (n == null ? "nothing"
        : io.meshplan.util.Words.clipped(n.toString())));
    return n.longValue();
  }

  private static double number(JsonNode o, String key) {
    JsonNode n = o.get(key);
    if (n == null || !n.isNumber()) {
      throw new IllegalArgumentException("field '" + key + "' must be a number");
    }
    return n.asDouble();
  }
}
