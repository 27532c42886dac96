package io.meshplan.calibrate;

import io.meshplan.framework.TorchtitanKey;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses a torchtitan training log and its TOML job config. torchtitan's metrics processor
 * ({@code torchtitan/components/metrics.py}) logs, every {@code log_freq} steps, a line such as
 * {@code step: 10  loss:  7.9317  memory: 30.52GiB(32.13%)  tps: 6,954  tflops: 403.05  mfu:
 * 40.75%} with ANSI colour codes between the fields and thousands separators in {@code tps}. Its
 * {@code tps} is tokens per second per GPU: the tokens of one data-parallel rank over the elapsed
 * time and the non-data-parallel GPUs (context x tensor x pipeline), so one step takes {@code
 * localBatch * seq / (tps * cp * tp * pp)} seconds.
 *
 * <p>The job is read from the config (printed in the log only with {@code print_config}): {@code
 * [model] name, flavor}; {@code [training] local_batch_size} (older releases: {@code batch_size}),
 * {@code seq_len}; {@code [parallelism] data_parallel_shard_degree, data_parallel_replicate_degree,
 * tensor_parallel_degree, pipeline_parallel_degree, pipeline_parallel_microbatch_size,
 * context_parallel_degree, context_parallel_rotate_method, fsdp_reshard_after_forward}; {@code
 * [activation_checkpoint] mode} and {@code selective_ac_option}.
 */
final class TorchtitanLog {
  private static final Pattern ANSI = Pattern.compile("\u001b\\[[0-9;]*m");
  private static final Pattern STEP = Pattern.compile(
      "step:\\s*([+-]?\\p{Nd}\\S*)\\s.*?tps:\\s*(\\S+)");
  /** A step number or a batch as torchtitan prints them: 1 to 10 ASCII digits. */
  private static final Pattern STEP_NUMBER = Pattern.compile("[0-9]{1,10}");
  /**
   * Tokens per second as torchtitan prints them ({@code f"{round(tps):,}"}): digits in groups of
   * three parted by commas, or plain digits, with an optional fraction.
   */
  private static final Pattern TPS_FIGURE = Pattern.compile(
      "(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,15})(?:\\.[0-9]{1,12})?");
  /** {@code Building 1-D device mesh with ['dp_shard'], [8]}: the mesh's dimensions. */
  private static final Pattern MESH = Pattern.compile(
      "Building \\d+-D device mesh with \\[[^\\]]*\\], \\[([0-9, ]{1,200})\\]");
  /** {@code ... local batch size 1, global batch size 8, ...}. */
  private static final Pattern GLOBAL_BATCH = Pattern.compile("global batch size (\\S+?),?(\\s|$)");

  private TorchtitanLog() {}

  static boolean recognizes(List<String> lines) {
    return lines.stream().anyMatch(l -> STEP.matcher(ANSI.matcher(l).replaceAll("")).find());
  }

  static TrainingRun parse(String file, List<String> lines, Map<String, String> cfg) {
    List<Double> tps = new ArrayList<>();
    long world = 0;
    long globalBatch = 0;
    for (int i = 0; i < lines.size(); i++) {
      String l = ANSI.matcher(lines.get(i)).replaceAll("");
      Matcher m = STEP.matcher(l);
      if (m.find()) {
        // The whole printed figure or nothing: '6,402e3' and '6,4,0,2' are not read as 6402,
        // and a signed, zero or non-ASCII figure is no rate a step ran at.
        if (!STEP_NUMBER.matcher(m.group(1)).matches()) {
          throw new InputException(file + ":" + (i + 1) + ": step '"
              + Words.clipped(m.group(1)) + "' is not a step number as "
              + "torchtitan prints them (1 to 10 ASCII digits)");
        }
        String figure = m.group(2);
        double v = TPS_FIGURE.matcher(figure).matches()
            ? AsciiDigits.parseDecimal(figure.replace(",", "")) : 0;
        if (!(v > 0)) {
          throw new InputException(file + ":" + (i + 1) + ": tps '"
              + Words.clipped(figure) + "' is not tokens per second as "
              + "torchtitan prints them (a positive figure in digits, in groups of three parted "
              + "by commas)");
        }
        tps.add(v);
      }
      Matcher mesh = MESH.matcher(l);
      if (mesh.find()) {
        long size = meshSize(file, i + 1, mesh.group(1));
        if (world > 0 && size != world) {
          throw new InputException(file + ":" + (i + 1) + ": a device mesh of " + size
              + " GPUs after one of " + world + ": the log states more than one run");
        }
        world = size;
      }
      Matcher gb = GLOBAL_BATCH.matcher(l);
      if (gb.find()) {
        // Read whole or refused: a figure past 10 digits skipped the check against the config.
        if (!STEP_NUMBER.matcher(gb.group(1)).matches()) {
          throw new InputException(file + ":" + (i + 1) + ": global batch size '"
              + Words.clipped(gb.group(1)) + "' is not a batch as torchtitan "
              + "prints it (1 to 10 ASCII digits)");
        }
        globalBatch = AsciiDigits.parseLong(gb.group(1));
      }
    }
    double perGpu = TrainingLogs.steadyMedian(file, tps, "'step: .. tps: ..'");
    Config c = new Config(file, cfg);
    int tp = c.positive(TorchtitanKey.TENSOR_PARALLEL_DEGREE.path(), 1);
    int pp = c.positive(TorchtitanKey.PIPELINE_PARALLEL_DEGREE.path(), 1);
    int cp = c.positive(TorchtitanKey.CONTEXT_PARALLEL_DEGREE.path(), 1);
    int shard = c.integer(TorchtitanKey.DATA_PARALLEL_SHARD_DEGREE.path(), -1);
    int replicate = c.positive(TorchtitanKey.DATA_PARALLEL_REPLICATE_DEGREE.path(), 1);
    if (shard == 0 || shard < -1) {
      throw new InputException(file + ": [parallelism] data_parallel_shard_degree = " + shard
          + " is neither -1 (the rest of the GPUs) nor a positive degree");
    }
    int local = c.cfg.containsKey(TorchtitanKey.LOCAL_BATCH_SIZE.path())
        ? c.integer(TorchtitanKey.LOCAL_BATCH_SIZE.path(), 0) : c.integer(TorchtitanKey.BATCH_SIZE.path(), 0);
    int seq = c.integer(TorchtitanKey.SEQ_LEN.path(), 0);
    if (local <= 0 || seq <= 0) {
      throw new InputException(c.file + ": its --config has no positive [training] "
          + "local_batch_size (or batch_size) and seq_len");
    }
    String recompute = recompute(c);
    int micro = pp > 1 ? c.integer(TorchtitanKey.PIPELINE_PARALLEL_MICROBATCH_SIZE.path(), 1) : local;
    long dpL = shard < 0 ? 0 : (long) shard * replicate;
    if (dpL > Integer.MAX_VALUE) {
      throw new InputException(file + ": [parallelism] data_parallel_shard_degree x "
          + "data_parallel_replicate_degree = " + dpL + " is past 2^31 - 1 GPUs");
    }
    // data_parallel_shard_degree -1 takes what the other degrees leave of the log's device mesh
    // (torchtitan's ParallelDims); without a mesh line, of --cluster (TrainRunSimulator).
    java.math.BigInteger others = io.meshplan.util.Checked.product(tp, pp, cp, replicate);
    java.math.BigInteger w = java.math.BigInteger.valueOf(world);
    boolean fills = world > 0 && w.mod(others).signum() == 0;
    if (fills && shard < 0) {
      dpL = w.divide(others).longValueExact() * replicate;
    }
    int dp = (int) dpL;
    // job_config.py's Compile: off by default, components "model" and "loss" by default.
    boolean compiledLoss = c.bool(TorchtitanKey.COMPILE_ENABLE.path(), false)
        && c.names(TorchtitanKey.COMPILE_COMPONENTS.path(), List.of("model", "loss")).contains("loss");
    String preset = preset(c);
    // The experts' split of a mixture-of-experts flavor (expert_parallel_degree and
    // expert_tensor_parallel_degree, 1 and 1 by default), which a dense flavor does not use.
    boolean routed = preset.startsWith("qwen3-");
    RunParallel parallel = new RunParallel(tp, pp, dp, 1, micro, local, recompute, false,
        zeroStage(c, shard, replicate, cp, pp), true, false, false, true, RunSplit.NONE,
        compiledLoss, false, cp, cp > 1 && allGather(c), List.of(),
        routed ? c.positive(TorchtitanKey.EXPERT_PARALLEL_DEGREE.path(), 1) : 1,
        routed ? c.positive(TorchtitanKey.EXPERT_TENSOR_PARALLEL_DEGREE.path(), 1) : 1, false);
    // The log's device mesh is the run's world: the config's degrees must fill it, and its
    // global batch is the local batch on every data-parallel rank. Checked after the config's
    // own refusals, which name what the config cannot state.
    if (world > 0 && shard < 0 && !fills) {
      throw new InputException(file + ": its device mesh of " + world + " GPUs is not a "
          + "multiple of the --config's other degrees (tensor x pipeline x context x replicate "
          + "= " + others + ")");
    }
    if (world > 0 && shard > 0
        && !others.multiply(java.math.BigInteger.valueOf(shard)).equals(w)) {
      throw new InputException(file + ": its device mesh has " + world + " GPUs, but the "
          + "--config's degrees make " + others.multiply(java.math.BigInteger.valueOf(shard))
          + " (tensor x pipeline x context x replicate x shard)");
    }
    if (globalBatch > 0 && dpL > 0 && globalBatch != (long) local * dpL) {
      throw new InputException(file + ": its global batch size " + globalBatch + " is not the "
          + "--config's local batch " + local + " x " + dpL + " data-parallel ranks");
    }
    if (replicate > 1 && (shard != 1 || cp > 1)) {
      // HSDP: FSDP inside dp_shard, the sharded state replicated across dp_replicate.
      parallel = parallel.withShardReplicas(replicate);
    }
    // metrics.py: tps counts a data-parallel rank's tokens (the labels before the context split)
    // over the non-data-parallel GPUs, cp x tp x pp.
    double seconds = (double) local * seq / (perGpu * tp * pp * cp);
    return new TrainingRun(file, "torchtitan", new RunModel.Preset(preset, seq, dtype(c), true),
        parallel, TrainingLogs.gpu(lines), seconds, tps.size() - 1);
  }

  /** The GPUs of a logged device mesh: the product of its dimensions, at most 2^20. */
  private static long meshSize(String file, int line, String dims) {
    long n = 1;
    for (String d : dims.split(",")) {
      String t = Words.trimmed(d);
      if (t.isEmpty() || t.length() > 7) {
        throw new InputException(file + ":" + line + ": device mesh dimension '"
            + Words.clipped(t) + "' is not a size");
      }
      n *= AsciiDigits.parseLong(t);
      if (n <= 0 || n > io.meshplan.util.Checked.MAX_DEVICES) {
        throw new InputException(file + ":" + line + ": a device mesh of "
            + Words.clipped(dims) + " is not 1 to "
            + io.meshplan.util.Checked.MAX_DEVICES + " GPUs");
      }
    }
    return n;
  }

  /**
   * The ZeRO stage torchtitan's data parallelism amounts to, as meshplan's torchtitan export
   * states it: DDP alone ({@code data_parallel_replicate_degree}, no shard or context group) is
   * ZeRO-0; FSDP over {@code data_parallel_shard_degree x context_parallel_degree} is ZeRO-3 when
   * it reshards after the forward pass and, under a pipeline, ZeRO-1 when it does not ({@code
   * fsdp_reshard_after_forward}: {@code "default"} reshards unless a pipeline is enabled, {@code
   * "always"} and {@code "never"} as they say; v0.2.2 {@code
   * models/llama3/infra/parallelize.py:319-331}). Both FSDP and replication is HSDP: ZeRO-3
   * inside each {@code data_parallel_shard_degree} group, replicated across {@code
   * data_parallel_replicate_degree} of them ({@link RunParallel#shardReplicas}), priced without
   * context or pipeline parallelism. FSDP without resharding and without a pipeline keeps weights
   * sharded yet gathers once per microbatch: no ZeRO stage meshplan prices, refused.
   */
  private static int zeroStage(Config c, int shard, int replicate, int cp, int pp) {
    boolean fsdp = shard != 1 || cp > 1;
    if (!fsdp) {
      return 0;
    }
    if (replicate > 1 && (cp > 1 || pp > 1)) {
      throw new InputException(c.file + ": [parallelism] data_parallel_replicate_degree = "
          + replicate + " with FSDP is HSDP, which meshplan prices without context or pipeline"
          + " parallelism");
    }
    String policy = c.cfg.getOrDefault(TorchtitanKey.FSDP_RESHARD_AFTER_FORWARD.path(), "default");
    boolean reshard = switch (policy) {
      case "default" -> pp == 1;
      case "always" -> true;
      case "never" -> false;
      default -> throw new InputException(c.file + ": [parallelism] fsdp_reshard_after_forward"
          + " = \"" + policy + "\" is not one torchtitan takes (default, always or never)");
    };
    if (reshard) {
      return 3;
    }
    if (replicate > 1) {
      throw new InputException(c.file + ": [parallelism] fsdp_reshard_after_forward = \"never\""
          + " with HSDP keeps weights sharded and gathers them once per microbatch; no ZeRO stage"
          + " meshplan prices states it");
    }
    if (pp == 1) {
      throw new InputException(c.file + ": [parallelism] fsdp_reshard_after_forward = \"never\""
          + " without a pipeline keeps weights sharded and gathers them once per microbatch; "
          + "no ZeRO stage meshplan prices states it");
    }
    return 1;
  }

  /**
   * Whether context parallelism all-gathered keys and values: PyTorch's rotate method {@code
   * allgather}, torchtitan's default ({@code context_parallel_rotate_method}); its {@code
   * alltoall} rotation is not one meshplan prices, and is refused.
   */
  private static boolean allGather(Config c) {
    String method = c.cfg.getOrDefault(TorchtitanKey.CONTEXT_PARALLEL_ROTATE_METHOD.path(),
        "allgather");
    if (!method.equals("allgather")) {
      throw new InputException(c.file + ": [parallelism] context_parallel_rotate_method = \""
          + method + "\" is not an exchange meshplan prices for torchtitan (it prices "
          + "\"allgather\", torchtitan's default)");
    }
    return true;
  }

  /**
   * The recomputation of a torchtitan config (job_config.py's ActivationCheckpoint: mode {@code
   * selective} by default, whose {@code selective_ac_option} is {@code "op"} for per-op
   * checkpointing or an integer n, its default 2, for full checkpointing of every nth block):
   * {@code none}, {@code full}, or {@code op} for the per-op mode. The layer-wise mode
   * recomputes some blocks and not others, which one recomputation per stage cannot state, and
   * the compiler's memory budget is not a policy meshplan knows; both are refused.
   */
  private static String recompute(Config c) {
    String mode = c.cfg.getOrDefault(TorchtitanKey.ACTIVATION_CHECKPOINT_MODE.path(), "selective")
        .toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "none", "full" -> mode;
      case "selective" -> {
        String option = c.cfg.getOrDefault(TorchtitanKey.SELECTIVE_AC_OPTION.path(), "2");
        if (option.equals("op")) {
          yield "op";
        }
        throw new InputException(c.file + (option.matches("[1-9][0-9]{0,8}")
            ? ": [activation_checkpoint] mode = \"selective\" with selective_ac_option = \""
                + option + "\" checkpoints one block in " + option + " whole (torchtitan's"
                + " layer-wise mode), which meshplan cannot state; use \"op\", or mode \"full\""
                + " or \"none\""
            : ": [activation_checkpoint] selective_ac_option = \"" + option + "\" is neither"
                + " \"op\" nor a whole number of blocks, as torchtitan reads it"));
      }
      default -> throw new InputException(c.file + ": [activation_checkpoint] mode = \"" + mode
          + "\" is not one meshplan reads (none, full, or selective with selective_ac_option"
          + " \"op\")");
    };
  }

  /**
   * The training precision of a torchtitan config: {@code fp8} when its model converters swap
   * the linear layers for torchao's Float8Linear ({@code "quantize.linear.float8"} in v0.2.2,
   * {@code "float8"} before), else {@code training.mixed_precision_param} ({@code bfloat16} by
   * default, or {@code float32}). The MX converters (Blackwell's MXFP8) are refused: meshplan does
   * not price them.
   */
  private static String dtype(Config c) {
    List<String> converters = c.names(TorchtitanKey.MODEL_CONVERTERS.path(), List.of());
    if (converters.stream().anyMatch(n -> n.equals("mx") || n.contains(".mx"))) {
      throw new InputException(c.file + ": [model] converters = " + converters + " trains with "
          + "MX formats, which meshplan does not price; it prices float8 (tensor-wise scaling)");
    }
    if (converters.contains("quantize.linear.float8") || converters.contains("float8")) {
      // torchao's float8 scales each tensor by its amax in the step: current scaling.
      return "fp8:tensorwise";
    }
    String param = c.cfg.getOrDefault(TorchtitanKey.MIXED_PRECISION_PARAM.path(), "bfloat16");
    return switch (param) {
      case "bfloat16" -> "bf16";
      case "float32" -> "f32";
      default -> throw new InputException(c.file + ": [training] mixed_precision_param = "
          + param + " is not one torchtitan takes (bfloat16 or float32)");
    };
  }

  /**
   * torchtitan's flavors that are meshplan presets (same dimensions): llama3 8B, 70B and 405B,
   * and qwen3's mixture-of-experts flavors 30B-A3B and 235B-A22B (v0.2.2 {@code
   * models/qwen3/__init__.py:145-191}: 128 experts of 768 and 1536, 8 per token, no shared
   * expert, every block routed).
   */
  private static String preset(Config c) {
    String name = c.cfg.getOrDefault(TorchtitanKey.MODEL_NAME.path(), "");
    String flavor = c.cfg.getOrDefault(TorchtitanKey.MODEL_FLAVOR.path(), "");
    if (name.equals("llama3") && List.of("8B", "70B", "405B").contains(flavor)
        || name.equals("qwen3") && List.of("30B-A3B", "235B-A22B").contains(flavor)) {
      return name + "-" + flavor.toLowerCase(Locale.ROOT);
    }
    throw new InputException(c.file + ": [model] name = \"" + name + "\", flavor = \"" + flavor
        + "\" has no meshplan preset; calibrate reads llama3 8B, 70B and 405B and qwen3 "
        + "30B-A3B and 235B-A22B");
  }

  /** The config, read with messages that name the file and the key. */
  private record Config(String file, Map<String, String> cfg) {
    int positive(String key, int fallback) {
      int v = integer(key, fallback);
      if (v <= 0) {
        throw new InputException(file + ": " + key + " = " + v + " is not a positive degree");
      }
      return v;
    }

    int integer(String key, int fallback) {
      String v = cfg.get(key);
      if (v == null) {
        return fallback;
      }
      try {
        return AsciiDigits.parseInt(v);
      } catch (NumberFormatException e) {
        throw new InputException(file + ": " + key + " = " + v + " is not a whole number");
      }
    }

    /**
     * A list of names, as torchtitan's {@code list[str]} fields take it: a flat TOML array of
     * quoted strings; anything else is refused in one line.
     */
    List<String> names(String key, List<String> fallback) {
      String v = cfg.get(key);
      if (v == null) {
        return fallback;
      }
      String t = Words.trimmed(v);
      InputException bad = new InputException(file + ": its --config has " + key + " = " + t
          + ", not a list of quoted names");
      if (t.length() < 2 || t.charAt(0) != '[' || t.charAt(t.length() - 1) != ']') {
        throw bad;
      }
      List<String> out = new ArrayList<>();
      String body = t.substring(1, t.length() - 1);
      int i = skipSpace(body, 0);
      while (i < body.length()) {
        char q = body.charAt(i);
        int end = q == '"' || q == '\'' ? body.indexOf(q, i + 1) : -1;
        if (end < 0 || q == '"' && body.substring(i + 1, end).indexOf('\\') >= 0) {
          throw bad;
        }
        out.add(body.substring(i + 1, end));
        i = skipSpace(body, end + 1);
        if (i < body.length() && body.charAt(i) != ',') {
          throw bad;
        }
        i = skipSpace(body, i + 1);
      }
      return out;
    }

    private static int skipSpace(String s, int from) {
      int i = from;
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      return i;
    }

    boolean bool(String key, boolean fallback) {
      String v = cfg.get(key);
      if (v == null) {
        return fallback;
      }
      if (!v.equals("true") && !v.equals("false")) {
        throw new InputException(file + ": its --config has " + key + " = " + v
            + ", not true or false");
      }
      return v.equals("true");
    }
  }
}
