package io.meshplan.sweep;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.cluster.HardwareCatalog;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.HfConfigReader;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import io.meshplan.util.Words;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import io.meshplan.util.TerminalText;
import java.util.regex.Pattern;

/**
 * Reads a sweep grid from YAML. Every axis takes one value or a list:
 *
 * <pre>
 * models: [llama2-7b, llama2-13b, llama2-70b]   # presets or config.json paths (see below)
 * seq: [2048, 4096]                             # tokens per sequence
 * gpus: [h100-80gb]                             # GPU catalog names
 * fabrics: [ib-ndr400]                          # optional; each GPU's default otherwise
 * clusters: [8x8, 32x8, 128x8]                  # NODESxGPUS_PER_NODE
 * globalBatch: [512, 1024]                      # sequences per iteration
 * microbatches: [auto]                          # optional; auto or a count per iteration
 * overlapGradReduce: [false]                    # optional
 * overlapParamGather: [false]                   # optional; true needs overlapGradReduce true
 * tpCommOverlap: [false]                        # optional
 * fsdpPrefetch: [true]                          # optional
 * gradientAccumulationFusion: [true]            # optional
 * fusedCrossEntropy: [false]                    # optional
 * gradReduceInBf16: [false]                     # optional; true needs bf16 or fp8 training
 * attention: [auto]                             # optional: auto, flash, unfused
 * dtype: [auto]                                 # optional: auto, bf16, f16, f32, fp8, or fp8
 *                                               #   with its recipe: fp8:tensorwise, fp8:mxfp8,
 *                                               #   fp8:nvfp4 (fp8 alone is delayed scaling)
 * moeDispatcher: [alltoall]                     # optional: alltoall, deepep, hybridep
 * </pre>
 *
 * <p>A model is a preset, or the path of a Hugging Face {@code config.json} or its directory,
 * absolute or relative to the grid file's directory, read as {@code --model} reads it ({@link
 * HfConfigReader}; the grid's {@code seq} sets its sequence); its results carry the path as the
 * grid wrote it.
 *
 * <p>GPU and fabric names are looked up in the {@link HardwareCatalog} the reader is given
 * (meshplan's own, or one a user's catalog file extends), which the grid carries to its points
 * ({@link SweepGrid#hardware}).
 *
 * <p>Every value is checked, and the first bad one is reported in one line naming the file, the
 * field and its position.
 */
public final class SweepGridReader {
  /** The largest grid file read, bytes. */
  public static final long MAX_BYTES = 1L << 20;
  /** The most values on one axis. */
  static final int MAX_VALUES = 10_000;
  /** The longest sequence, tokens. */
  static final int MAX_SEQ = 1 << 20;
  /** The largest global batch, sequences. */
  static final int MAX_GLOBAL_BATCH = 1 << 24;
  /** The most microbatches per iteration (the planner's limit). */
  static final int MAX_MICROBATCHES = 1 << 16;
  /** The most GPUs in one node. */
  static final int MAX_GPUS_PER_NODE = 64;
  /** The most GPUs in one cluster. */
  static final int MAX_GPUS = 1 << 20;

  private static final List<String> KEYS = List.of("models", "seq", "gpus", "fabrics",
      "clusters", "globalBatch", "microbatches", "overlapGradReduce", "overlapParamGather",
      "tpCommOverlap", "fsdpPrefetch", "gradientAccumulationFusion", "fusedCrossEntropy",
      "gradReduceInBf16", "attention", "dtype", "moeDispatcher");
  private static final Pattern SHAPE = Pattern.compile("(\\d{1,9})x(\\d{1,9})");

  private final String file;
  private final Path baseDir;
  private final HardwareCatalog catalog;
  /** The config.json files the grid's models name, each to the first value naming it. */
  private final java.util.Map<Path, String> configFiles = new java.util.HashMap<>();
  private final java.util.Map<String, SweepGrid.ConfigModel> configs =
      new java.util.LinkedHashMap<>();

  private SweepGridReader(String file, Path baseDir, HardwareCatalog catalog) {
    this.file = file;
    this.baseDir = baseDir;
    this.catalog = io.meshplan.util.Require.nonNull(catalog, "catalog");
  }

  /**
   * Reads a grid file.
   *
   * @param path the YAML file
   * @return the grid
   * @throws InputException one line naming the file and the bad field
   */
  public static SweepGrid read(Path path) {
    return read(path, HardwareCatalog.shipped());
  }

  /**
   * Reads a grid file whose GPUs and fabrics are those of a catalog.
   *
   * @param path the YAML file
   * @param catalog the hardware its {@code gpus} and {@code fabrics} may name
   * @return the grid
   * @throws InputException one line naming the file and the bad field
   */
  public static SweepGrid read(Path path, HardwareCatalog catalog) {
    String text = InputFiles.readString(path, MAX_BYTES, "sweep grid");
    return parse(text, path.toString(), path.toAbsolutePath().getParent(), catalog);
  }

  /**
   * Parses grid text.
   *
   * @param text the YAML
   * @param name the file name, for messages
   * @return the grid
   * @throws InputException one line naming the file and the bad field
   */
  public static SweepGrid parse(String text, String name) {
    return parse(text, name, null);
  }

  /**
   * Parses grid text whose config.json paths are relative to a directory.
   *
   * @param text the YAML
   * @param name the file name, for messages
   * @param baseDir the directory relative model paths start from, or null for the working one
   * @return the grid
   * @throws InputException one line naming the file and the bad field
   */
  public static SweepGrid parse(String text, String name, Path baseDir) {
    return parse(text, name, baseDir, HardwareCatalog.shipped());
  }

  /**
   * Parses grid text whose GPUs and fabrics are those of a catalog.
   *
   * @param text the YAML
   * @param name the file name, for messages
   * @param baseDir the directory relative model paths start from, or null for the working one
   * @param catalog the hardware its {@code gpus} and {@code fabrics} may name
   * @return the grid
   * @throws InputException one line naming the file and the bad field
   */
  public static SweepGrid parse(String text, String name, Path baseDir,
      HardwareCatalog catalog) {
    SweepGridReader r = new SweepGridReader(name, baseDir, catalog);
    JsonNode root = tree(text, name);
    List<String> models = r.values(root, "models", true, r::model);
    List<Integer> seqs = r.values(root, "seq", true, (v, at) -> r.integer(v, at, 1, MAX_SEQ));
    List<String> gpus = r.values(root, "gpus", true, r::gpu);
    List<String> fabrics = r.values(root, "fabrics", false, r::fabric);
    List<SweepGrid.Shape> clusters = r.values(root, "clusters", true, r::shape);
    List<Integer> batches = r.values(root, "globalBatch", true,
        (v, at) -> r.integer(v, at, 1, MAX_GLOBAL_BATCH));
    List<Integer> micro = r.values(root, "microbatches", false, r::microbatches);
    List<Overlaps> overlaps = r.overlaps(root);
    List<String> attention = r.values(root, "attention", false, r::attention);
    List<String> dtypes = r.values(root, "dtype", false, r::dtype);
    r.checkPrecisions(gpus, dtypes);
    try {
      return new SweepGrid(models, seqs, gpus, fabrics, clusters, batches,
          micro.isEmpty() ? List.of(0) : micro, overlaps,
          attention.isEmpty() ? List.of("auto") : attention,
          dtypes.isEmpty() ? List.of("auto") : dtypes, r.configs, SweepHardware.of(catalog));
    } catch (InputException e) {
      throw new InputException(name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Refuses a grid with a training precision that none of its GPUs has ({@link
   * io.meshplan.cluster.GpuSpec#requireTraining}), as {@code plan --dtype} refuses it: not one of
   * its points could plan. A precision that only some of the GPUs lack stays, as the grid is a
   * cross product: those points are rejected with the reason in their row.
   */
  private void checkPrecisions(List<String> gpus, List<String> dtypes) {
    for (String d : dtypes) {
      if (d.equals("auto")) {
        continue;
      }
      InputException last = null;
      io.meshplan.model.Fp8Scaling recipe = io.meshplan.model.Fp8Scaling.ofPrecision(d);
      for (String g : gpus) {
        try {
          io.meshplan.cluster.GpuSpec spec = catalog.gpu(g).orElseThrow().spec();
          spec.requireTraining(Fp8Training.parse(io.meshplan.model.Fp8Scaling.stripRecipe(d)));
          if (!io.meshplan.plan.BoundConfig.runsFp8Recipe(recipe, spec.architecture())) {
            throw new InputException("the FP8 recipe " + recipe.word() + " runs on Blackwell "
                + "GPUs only");
          }
          last = null;
          break;
        } catch (InputException e) {
          last = e;
        }
      }
      if (last != null) {
        throw new InputException(file + ": key 'dtype': no GPU of the grid trains in " + d + "; "
            + last.getMessage(), last);
      }
    }
  }

  /** The YAML mapping, with every key one of {@link #KEYS}. */
  private static JsonNode tree(String text, String name) {
    JsonNode root;
    try {
      ObjectMapper m = TreeReaders.yaml();
      m.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
      root = m.readTree(text);
    } catch (IOException e) {
      throw new InputException(name + ": not a valid YAML sweep grid: "
          + JsonErrors.describe(e), e);
    }
    if (root == null || !root.isObject()) {
      throw new InputException(name + ": expected a YAML mapping with models, seq, gpus, "
          + "clusters and globalBatch");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!KEYS.contains(k)) {
        throw new InputException(name + ": unknown field '" + k + "'; valid: "
            + String.join(", ", KEYS));
      }
    }
    return root;
  }

  private interface Value<T> {
    T read(JsonNode v, String at);
  }

  private <T> List<T> values(JsonNode root, String key, boolean required, Value<T> f) {
    JsonNode n = root.get(key);
    if (n == null || n.isNull()) {
      if (required) {
        throw new InputException(file + ": field '" + key + "' is required, e.g. "
            + example(key));
      }
      return List.of();
    }
    List<T> out = new ArrayList<>();
    if (n.isArray()) {
      if (n.size() == 0) {
        throw bad(key, "needs at least one value, e.g. " + example(key));
      }
      if (n.size() > MAX_VALUES) {
        throw bad(key, "has " + n.size() + " values, more than " + MAX_VALUES);
      }
      java.util.Set<T> seen = new java.util.HashSet<>();
      for (int i = 0; i < n.size(); i++) {
        T v = f.read(n.get(i), key + "[" + i + "]");
        // A value listed twice would plan every point it is in twice: a slip, not a request.
        if (!seen.add(v)) {
          JsonNode raw = n.get(i);
          throw bad(key + "[" + i + "]", "'" + io.meshplan.util.Words.clipped(raw.isTextual()
              ? raw.asText() : raw.toString()) + "' repeats an earlier value; list each once");
        }
        out.add(v);
      }
    } else {
      out.add(f.read(n, key));
    }
    return out;
  }

  private static String example(String key) {
    return switch (key) {
      case "models" -> "models: [llama2-7b, llama2-70b]";
      case "seq" -> "seq: [2048, 4096]";
      case "gpus" -> "gpus: [h100-80gb]";
      case "clusters" -> "clusters: [8x8, 128x8]";
      case "globalBatch" -> "globalBatch: [512, 1024]";
      default -> key + ": [...]";
    };
  }

  private InputException bad(String at, String what) {
    return new InputException(file + ": field '" + at + "': " + what);
  }

  private String text(JsonNode v, String at) {
    if (!v.isTextual() || v.asText().isBlank()) {
      throw bad(at, "expected a name, got " + shown(v));
    }
    return Words.trimmed(v.asText());
  }

  private int integer(JsonNode v, String at, int min, int max) {
    if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min
        || v.asLong() > max) {
      throw bad(at, String.format(Locale.ROOT, "expected an integer from %d to %d, got %s",
          min, max, v.isTextual() ? "the quoted text '" + io.meshplan.util.Words.clipped(
              v.asText()) + "' (write a number without quotes)" : shown(v)));
    }
    return (int) v.asLong();
  }

  /** A value as a refusal quotes it: a scalar as written, a list or a mapping by its kind. */
  private static String shown(JsonNode v) {
    return v.isObject() ? "a mapping" : v.isArray() ? "a list" : v.isNull() ? "nothing"
        : "'" + io.meshplan.util.Words.clipped(v.asText()) + "'";
  }

  /** The presets a sweep plans: every transformer decoder, in catalog order. */
  private static List<String> decoderPresets() {
    List<String> out = new java.util.ArrayList<>();
    for (String n : Presets.names()) {
      if (Presets.get(n).family() != ModelSpec.Family.ALPA_MLP) {
        out.add(n);
      }
    }
    return out;
  }

  private String model(JsonNode v, String at) {
    String s = text(v, at);
    Path config = Presets.contains(s) ? null : configPath(s);
    if (config != null) {
      try {
        configs.putIfAbsent(s, new SweepGrid.ConfigModel(HfConfigReader.configFile(config),
            HfConfigReader.readConfig(config).spec()));
      } catch (InputException e) {
        throw bad(at, e.getMessage());
      }
      // The same file spelled two ways (a/x.json, a/../a/x.json, a link to it) is one model.
      Path real;
      try {
        real = HfConfigReader.configFile(config).toRealPath();
      } catch (java.io.IOException e) {
        real = HfConfigReader.configFile(config).toAbsolutePath().normalize();
      }
      String first = configFiles.putIfAbsent(real, s);
      if (first != null && !first.equals(s)) {
        throw bad(at, "'" + io.meshplan.util.Words.clipped(s) + "' names the config.json '"
            + io.meshplan.util.Words.clipped(first) + "' names; list each once");
      }
      return s;
    }
    if (!Presets.contains(s) || Presets.get(s).family() == ModelSpec.Family.ALPA_MLP) {
      throw bad(at, (Presets.contains(s) ? "model '" + s + "' is Alpa's MLP test step, not a "
          + "transformer decoder (a model for meshplan shard)" : "unknown model '" + s + "'")
          + "; valid presets: " + String.join(", ", decoderPresets())
          + "; or the path of a config.json, absolute or relative to the grid's directory");
    }
    return s;
  }

  /**
   * The config.json a model value names, as {@code --model} decides: a value that is no preset
   * and ends in {@code .json} or names an existing path; relative to the grid's directory.
   */
  private Path configPath(String s) {
    Path p;
    try {
      p = Path.of(s);
    } catch (java.nio.file.InvalidPathException e) {
      return null;
    }
    Path resolved = p.isAbsolute() || baseDir == null ? p : baseDir.resolve(p);
    return s.endsWith(".json") || java.nio.file.Files.exists(resolved) ? resolved : null;
  }

  private String gpu(JsonNode v, String at) {
    String s = text(v, at);
    // A short name (h100) stands for its catalog name in the results.
    return catalog.gpu(s).orElseThrow(() -> bad(at, catalog.unknownGpu(s))).name();
  }

  private String fabric(JsonNode v, String at) {
    String s = text(v, at);
    if (catalog.fabric(s).isEmpty()) {
      throw bad(at, catalog.unknownFabric(s));
    }
    return s;
  }

  /** A microbatch count, or 0 for {@code auto}. */
  private int microbatches(JsonNode v, String at) {
    return v.isTextual() && Words.trimmed(v.asText()).equalsIgnoreCase("auto") ? 0
        : integer(v, at, 1, MAX_MICROBATCHES);
  }

  private boolean bool(JsonNode v, String at) {
    if (!v.isBoolean()) {
      throw bad(at, "expected true or false, got " + (v.isTextual() ? "the quoted text '"
          + TerminalText.escape(v.asText()) + "'" : "'" + v.asText() + "'"));
    }
    return v.asBoolean();
  }

  /**
   * The overlap axes' product, in key order, each axis defaulting to the frameworks' default
   * ({@link Overlaps#DEFAULTS}); a parameter gather overlapped without the gradient reduction,
   * which Megatron-LM refuses, is left out, and a grid with nothing else is refused.
   */
  private List<Overlaps> overlaps(JsonNode root) {
    List<Boolean> gr = orDefault(values(root, "overlapGradReduce", false, this::bool),
        Overlaps.DEFAULTS.gradReduce());
    List<Boolean> pg = orDefault(values(root, "overlapParamGather", false, this::bool),
        Overlaps.DEFAULTS.paramGather());
    List<Boolean> tc = orDefault(values(root, "tpCommOverlap", false, this::bool),
        Overlaps.DEFAULTS.tensorComm());
    List<Boolean> fp = orDefault(values(root, "fsdpPrefetch", false, this::bool),
        Overlaps.DEFAULTS.fsdpPrefetch());
    List<Boolean> ga = orDefault(values(root, "gradientAccumulationFusion", false, this::bool),
        Overlaps.DEFAULTS.gradAccumFusion());
    List<Boolean> ce = orDefault(values(root, "fusedCrossEntropy", false, this::bool),
        Overlaps.DEFAULTS.lossFusion());
    List<Boolean> bf = orDefault(values(root, "gradReduceInBf16", false, this::bool),
        Overlaps.DEFAULTS.bf16GradReduce());
    // The product in key order, the last axis fastest; values refuses a value listed twice, so
    // it is at most 2^7 = 128 combinations, times the dispatchers.
    List<List<Boolean>> points = List.of(List.of());
    for (List<Boolean> axis : List.of(gr, pg, tc, fp, ga, ce, bf)) {
      List<List<Boolean>> longer = new java.util.ArrayList<>();
      for (List<Boolean> p : points) {
        for (boolean v : axis) {
          List<Boolean> q = new java.util.ArrayList<>(p);
          q.add(v);
          longer.add(q);
        }
      }
      points = longer;
    }
    List<io.meshplan.model.ExpertDispatcher> dispatchers = values(root, "moeDispatcher", false,
        this::dispatcher);
    if (dispatchers.isEmpty()) {
      dispatchers = List.of(Overlaps.DEFAULTS.dispatcher());
    }
    List<Overlaps> out = new java.util.ArrayList<>();
    for (List<Boolean> v : points) {
      if (!v.get(1) || v.get(0)) {
        // The dispatcher varies fastest, after the overlap axes.
        for (io.meshplan.model.ExpertDispatcher d : dispatchers) {
          out.add(new Overlaps(v.get(0), v.get(1), v.get(2), v.get(3), v.get(4), false, v.get(5),
              v.get(6), d));
        }
      }
    }
    if (out.isEmpty()) {
      throw new InputException(file + ": overlapParamGather true needs overlapGradReduce true"
          + " (as in Megatron-LM)");
    }
    return out;
  }

  private static List<Boolean> orDefault(List<Boolean> values, boolean dflt) {
    return values.isEmpty() ? List.of(dflt) : values;
  }

  private String attention(JsonNode v, String at) {
    String s = Words.trimmed(v.asText()).toLowerCase(Locale.ROOT);
    if (!v.isTextual() || !(s.equals("auto") || s.equals("flash") || s.equals("unfused"))) {
      throw bad(at, "expected auto, flash or unfused, got '" + v.asText() + "'");
    }
    return s;
  }

  private io.meshplan.model.ExpertDispatcher dispatcher(JsonNode v, String at) {
    if (!v.isTextual()) {
      throw bad(at, "expected " + io.meshplan.model.ExpertDispatcher.words() + ", got '"
          + v.asText() + "'");
    }
    return io.meshplan.model.ExpertDispatcher.of(Words.trimmed(v.asText())).orElseThrow(() ->
        bad(at, "expected " + io.meshplan.model.ExpertDispatcher.words() + ", got '"
            + v.asText() + "'"));
  }

  /**
   * A training precision: {@code auto}, a precision word, or {@code fp8:RECIPE} naming the FP8
   * recipe ({@link io.meshplan.model.Fp8Scaling}, as the public folds and training logs write
   * FP8 runs); returned in one form, {@code fp8} for delayed scaling.
   */
  private String dtype(JsonNode v, String at) {
    String s = Words.trimmed(v.asText()).toLowerCase(Locale.ROOT);
    if (v.isTextual() && s.equals("auto")) {
      return s;
    }
    String base = io.meshplan.model.Fp8Scaling.stripRecipe(s);
    io.meshplan.graph.DType t = Fp8Training.parse(base);
    boolean trains = v.isTextual() && t != null && Fp8Training.trains(t);
    // A recipe after the colon names FP8's scaling; none is delayed scaling, written fp8.
    java.util.Optional<io.meshplan.model.Fp8Scaling> recipe = s.equals(base)
        ? java.util.Optional.of(io.meshplan.model.Fp8Scaling.DELAYED)
        : io.meshplan.model.Fp8Scaling.parse(s.substring(base.length() + 1))
            .filter(r -> trains && Fp8Training.on(t));
    if (!trains || recipe.isEmpty()) {
      throw bad(at, "expected auto, bf16, f16, f32, fp8 or fp8:RECIPE (RECIPE "
          + io.meshplan.model.Fp8Scaling.words() + "), got '" + v.asText() + "'");
    }
    String word = Fp8Training.word(t);
    return recipe.get() == io.meshplan.model.Fp8Scaling.DELAYED ? word
        : word + ":" + recipe.get().word();
  }

  private SweepGrid.Shape shape(JsonNode v, String at) {
    String s = Words.trimmed(v.asText()).toLowerCase(Locale.ROOT);
    Matcher m = SHAPE.matcher(s);
    if (!v.isTextual() || !m.matches()) {
      throw bad(at, "expected NODESxGPUS_PER_NODE such as 128x8, got '" + v.asText() + "'");
    }
    long nodes = AsciiDigits.parseLong(m.group(1));
    long per = AsciiDigits.parseLong(m.group(2));
    if (nodes < 1 || per < 1 || per > MAX_GPUS_PER_NODE || nodes * per > MAX_GPUS) {
      throw bad(at, "'" + v.asText() + "' needs 1 to " + MAX_GPUS_PER_NODE + " GPUs per node "
          + "and at most " + MAX_GPUS + " GPUs in all");
    }
    return new SweepGrid.Shape((int) nodes, (int) per);
  }
}
