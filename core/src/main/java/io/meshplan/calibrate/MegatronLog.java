package io.meshplan.calibrate;

import io.meshplan.framework.MegatronArg;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses a Megatron-LM training log. Two parts are read, as Megatron-LM prints them
 * ({@code megatron/training/arguments.py} {@code _print_args}, {@code
 * megatron/training/training.py} {@code training_log}):
 *
 * <ul>
 *   <li>the block between {@code ---- arguments ----} and {@code ---- end of arguments ----}, one
 *       {@code "  name ....... value"} line per argument (the dots pad the name to 48 characters);
 *   <li>the iteration lines {@code " [date] iteration   N/ M | ... | elapsed time per iteration
 *       (ms): 1234.5 | ..."}, whose time is the mean over the last {@code log_interval}
 *       iterations. The {@code throughput per GPU (TFLOP/s/GPU)} field appears only with {@code
 *       --log-throughput}; the fit needs only the elapsed time.
 * </ul>
 */
final class MegatronLog {
  private static final Pattern ARG = Pattern.compile("^\\s*(\\w+) \\.+ ?(.*)$");
  private static final Pattern ITERATION = Pattern.compile(
      "iteration\\s+(\\d+)/\\s*\\d+ \\|.*elapsed time per iteration \\(ms\\): ([^\\s|]*)");
  /** A time as Megatron-LM prints it ({@code %.1f}): digits, a point and digits. */
  private static final Pattern MILLISECONDS = Pattern.compile("[0-9]{1,12}(?:\\.[0-9]{1,12})?");

  private MegatronLog() {}

  static boolean recognizes(List<String> lines) {
    return lines.stream().anyMatch(l -> l.contains("-------- arguments --------"));
  }

  static TrainingRun parse(String file, List<String> lines) {
    Args a = new Args(file, arguments(file, lines));
    RunModel model = model(a);
    RunParallel parallel = parallel(a);
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = ITERATION.matcher(lines.get(i));
      if (m.find()) {
        // The whole printed figure or nothing: '700.8e3' is not read as 700.8.
        if (!MILLISECONDS.matcher(m.group(2)).matches()) {
          throw new InputException(file + ":" + (i + 1) + ": elapsed time per iteration '"
              + io.meshplan.util.Words.clipped(m.group(2)) + "' is not milliseconds as "
              + "Megatron-LM prints them (digits and a decimal point)");
        }
        double v = AsciiDigits.parseDecimal(m.group(2));
        if (!(v > 0) || !Double.isFinite(v)) {
          throw new InputException(file + ":" + (i + 1) + ": elapsed time per iteration '"
              + io.meshplan.util.Words.clipped(m.group(2)) + "' is not a positive time");
        }
        ms.add(v);
      }
    }
    double seconds = TrainingLogs.steadyMedian(file, ms, "'elapsed time per iteration (ms)'")
        / 1000;
    return new TrainingRun(file, "megatron", model, parallel, TrainingLogs.gpu(lines),
        seconds, ms.size() - 1);
  }

  /**
   * The arguments block. Megatron-LM prints it once, one line per argument, so a second block (a
   * restarted job appended to the same log) or an argument printed twice (with the same value
   * or not) means the log does not state one run; each is refused at its line.
   */
  private static Map<String, String> arguments(String file, List<String> lines) {
    Map<String, String> args = new HashMap<>();
    Map<String, Integer> at = new HashMap<>();
    int start = -1;
    boolean ended = false;
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      if (l.contains("-------- arguments --------")) {
        if (start >= 0) {
          throw new InputException(file + ":" + (i + 1) + ": a second '---- arguments ----' "
              + "block (the first is at line " + (start + 1) + "); calibrate reads one run per "
              + "log, so split the log at each start-up");
        }
        start = i;
      } else if (start >= 0 && l.contains("end of arguments")) {
        ended = true;
      } else if (start >= 0 && !ended) {
        Matcher m = ARG.matcher(l);
        if (m.matches()) {
          Integer first = at.putIfAbsent(m.group(1), i + 1);
          if (first != null) {
            throw new InputException(file + ":" + (i + 1) + ": argument " + m.group(1)
                + " is printed twice in the arguments block (first at line " + first + ", = "
                + args.get(m.group(1)) + "; here = " + Words.trimmed(m.group(2))
                + "); Megatron-LM "
                + "prints each argument once, so this log does not state one run");
          }
          args.put(m.group(1), Words.trimmed(m.group(2)));
        }
      }
    }
    return args;
  }

  private static RunModel model(Args a) {
    // Per-document attention depends on the documents' lengths, which a log does not hold: the
    // run cannot be priced as it ran (meshplan's --mean-doc-len and --packed-seqs state them).
    for (String packed : new String[] {MegatronArg.DATALOADER_INTER_DOCUMENT_MASKING.dest(),
        "reset_attention_mask", "sft"}) {
      if (a.flag(packed)) {
        throw a.bad(packed, "masks attention by document, whose lengths the log does not give; "
            + "meshplan calibrates runs on whole sequences");
      }
    }
    int hidden = a.integer(MegatronArg.HIDDEN_SIZE.dest());
    int heads = a.integer(MegatronArg.NUM_ATTENTION_HEADS.dest());
    dense(a, hidden, heads);
    int kv = a.flag(MegatronArg.GROUP_QUERY_ATTENTION.dest()) ? a.integer(MegatronArg.NUM_QUERY_GROUPS.dest()) : heads;
    int ffn = a.optionalInt(MegatronArg.FFN_HIDDEN_SIZE.dest()).orElse(4 * hidden);
    int vocab = a.optionalInt(MegatronArg.PADDED_VOCAB_SIZE.dest()).or(() -> a.optionalInt(MegatronArg.VOCAB_SIZE.dest()))
        .orElseThrow(() -> a.missing(MegatronArg.PADDED_VOCAB_SIZE.dest()));
    String dtype = fp8(a).orElse(a.flag(MegatronArg.BF16.dest()) ? "bf16"
        : a.flag(MegatronArg.FP16.dest()) ? "f16" : "f32");
    // Megatron-Core's AttnBackend: flash, fused (cuDNN) and auto (Transformer Engine picks one
    // of them) run one fused kernel; unfused and local do not.
    String backend = a.args.getOrDefault(MegatronArg.ATTENTION_BACKEND.dest(), "");
    backend = backend.substring(backend.lastIndexOf('.') + 1);
    boolean flash = a.flag(MegatronArg.USE_FLASH_ATTN.dest()) || backend.equals("flash")
        || backend.equals("fused") || backend.equals("auto");
    int layers = a.integer(MegatronArg.NUM_LAYERS.dest());
    // fp8_param_gather: the FP8 recipes keep the weights in FP8 and gather them so; under FP4
    // Megatron-LM gathers with fp4_param_gather, which meshplan does not price.
    boolean fp8Weights = a.flag(MegatronArg.FP8_PARAM_GATHER.dest()) && dtype.startsWith("fp8");
    if (fp8Weights && dtype.equals("fp8:nvfp4")) {
      throw a.bad(MegatronArg.FP8_PARAM_GATHER.dest(), "is set on an FP4 run; meshplan prices "
          + "FP8 weights under the FP8 recipes only");
    }
    return new RunModel.Dims(layers, hidden, heads, kv, ffn, vocab, a.integer(MegatronArg.SEQ_LENGTH.dest()),
        a.flag(MegatronArg.SWIGLU.dest()), dtype, flash, moe(a, layers, ffn), fp8Weights);
  }

  /**
   * The routed experts ({@code num_experts} set): {@code moe_router_topk} (2 by default), {@code
   * moe_ffn_hidden_size} (the dense size by default), {@code moe_shared_expert_intermediate_size},
   * {@code moe_expert_capacity_factor} (None: dropless) and {@code moe_layer_freq} (an integer n,
   * one expert block in n starting with the first, or the 0/1 list it was expanded to). The
   * all-to-all dispatcher and the {@code flex} dispatcher with DeepEP or Hybrid-EP are priced
   * ({@link #dispatcher}); Megatron-Core's default {@code allgather} is refused.
   */
  private static RunModel.Moe moe(Args a, int layers, int ffn) {
    Optional<Integer> experts = a.optionalInt(MegatronArg.NUM_EXPERTS.dest());
    if (experts.isEmpty()) {
      return RunModel.Moe.NONE;
    }
    if (!a.args.containsKey(MegatronArg.MOE_TOKEN_DISPATCHER_TYPE.dest())) {
      throw new InputException(a.file() + ": argument moe_token_dispatcher_type is not in the "
          + "arguments block, so the run used Megatron-Core's default, allgather, which is not "
          + "the token dispatcher meshplan prices (alltoall)");
    }
    dispatcher(a);
    return new RunModel.Moe(experts.get(), a.optionalInt(MegatronArg.MOE_ROUTER_TOPK.dest()).orElse(2),
        a.optionalInt(MegatronArg.MOE_FFN_HIDDEN_SIZE.dest()).orElse(ffn),
        a.optionalInt(MegatronArg.MOE_SHARED_EXPERT_INTERMEDIATE_SIZE.dest()).orElse(0), capacity(a),
        denseLayers(a, layers));
  }

  /**
   * The token dispatcher: {@code alltoall}, or the {@code flex} dispatcher's backend when it is
   * DeepEP or Hybrid-EP ({@code moe_flex_dispatcher_backend}, Megatron-Core's default {@code
   * deepep}); {@code allgather} and NCCL-EP ({@code ncclep}) are refused.
   */
  private static String dispatcher(Args a) {
    String type = a.args.get(MegatronArg.MOE_TOKEN_DISPATCHER_TYPE.dest());
    if (type.equals("alltoall")) {
      return type;
    }
    if (!type.equals("flex")) {
      throw a.bad(MegatronArg.MOE_TOKEN_DISPATCHER_TYPE.dest(), "is not a token dispatcher "
          + "meshplan prices (alltoall, or flex with deepep or hybridep)");
    }
    String backend = a.args.getOrDefault(MegatronArg.MOE_FLEX_DISPATCHER_BACKEND.dest(), "deepep");
    if (!backend.equals("deepep") && !backend.equals("hybridep")) {
      throw a.bad(MegatronArg.MOE_FLEX_DISPATCHER_BACKEND.dest(), "is not a flex backend meshplan "
          + "prices (deepep or hybridep)");
    }
    return backend;
  }

  /** {@code moe_expert_capacity_factor}: 0 for None (dropless), else a positive number. */
  private static double capacity(Args a) {
    String cf = a.args.getOrDefault(MegatronArg.MOE_EXPERT_CAPACITY_FACTOR.dest(), "None");
    if (cf.equals("None")) {
      return 0;
    }
    double capacity = Double.NaN;
    try {
      capacity = AsciiDigits.parseDecimal(cf);
    } catch (NumberFormatException e) {
      // NaN: refused below, as a non-positive factor is.
    }
    if (!(capacity > 0) || !Double.isFinite(capacity)) {
      throw a.bad(MegatronArg.MOE_EXPERT_CAPACITY_FACTOR.dest(), "is not a positive capacity factor");
    }
    return capacity;
  }

  /** The blocks without experts by {@code moe_layer_freq}. */
  private static List<Integer> denseLayers(Args a, int layers) {
    String freq = Words.trimmed(
        a.args.getOrDefault(MegatronArg.MOE_LAYER_FREQ.dest(), "1"));
    List<Integer> dense = new ArrayList<>();
    if (freq.matches("[0-9]{1,9}")) {
      int n = AsciiDigits.parseInt(freq);
      if (n < 1) {
        throw a.bad(MegatronArg.MOE_LAYER_FREQ.dest(), "is not a positive frequency");
      }
      for (int i = 0; i < layers; i++) {
        if (i % n != 0) {
          dense.add(i);
        }
      }
      return dense;
    }
    List<String> flags = listOf(freq);
    if (flags.size() != layers || !flags.stream().allMatch(f -> f.equals("0") || f.equals("1"))) {
      throw a.bad(MegatronArg.MOE_LAYER_FREQ.dest(), "is neither a frequency nor a list of " + layers + " 0s and "
          + "1s, one per layer");
    }
    for (int i = 0; i < layers; i++) {
      if (flags.get(i).equals("0")) {
        dense.add(i);
      }
    }
    return dense;
  }

  /**
   * Refuses what {@link RunModel.Dims} cannot state, each in one line naming the argument:
   * multi-head latent attention, multi-token prediction modules, experts in a latent width
   * ({@code moe_latent_size}, Nemotron 3's LatentMoE), sliding-window attention ({@code
   * window_size}), and heads whose width ({@code kv_channels}, which validate_args sets to {@code
   * hidden_size / num_attention_heads} when not given) is not the hidden size over the heads.
   * Read as a decoder of standard attention, such a run would be fitted to the wrong model.
   */
  private static void dense(Args a, int hidden, int heads) {
    String rebuilds = "; calibrate --train rebuilds decoders of standard attention from a "
        + "Megatron-LM log, which this run is not";
    if (a.flag(MegatronArg.MULTI_LATENT_ATTENTION.dest())) {
      throw a.bad(MegatronArg.MULTI_LATENT_ATTENTION.dest(), "trains multi-head latent attention" + rebuilds);
    }
    if (a.optionalInt(MegatronArg.MTP_NUM_LAYERS.dest()).isPresent()) {
      throw a.bad(MegatronArg.MTP_NUM_LAYERS.dest(), "trains multi-token prediction modules" + rebuilds);
    }
    if (a.optionalInt(MegatronArg.MOE_LATENT_SIZE.dest()).isPresent()) {
      throw a.bad(MegatronArg.MOE_LATENT_SIZE.dest(), "trains its experts in a latent width "
          + "(LatentMoE)" + rebuilds);
    }
    if (!a.args.getOrDefault(MegatronArg.WINDOW_SIZE.dest(), "None").equals("None")) {
      throw a.bad(MegatronArg.WINDOW_SIZE.dest(), "trains sliding-window attention" + rebuilds);
    }
    Optional<Integer> kv = a.optionalInt(MegatronArg.KV_CHANNELS.dest());
    if (kv.isPresent() && (hidden % heads != 0 || kv.get() != hidden / heads)) {
      throw a.bad(MegatronArg.KV_CHANNELS.dest(), "is not hidden_size / num_attention_heads (" + hidden + " / "
          + heads + ")" + rebuilds);
    }
  }

  private static RunParallel parallel(Args a) {
    int tp = a.integer(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE.dest());
    int pp = a.integer(MegatronArg.PIPELINE_MODEL_PARALLEL_SIZE.dest());
    int cp = a.optionalInt(MegatronArg.CONTEXT_PARALLEL_SIZE.dest()).orElse(1);
    int dp = a.optionalInt(MegatronArg.DATA_PARALLEL_SIZE.dest())
        .orElseGet(() -> java.math.BigInteger.valueOf(a.integer(MegatronArg.WORLD_SIZE.dest()))
            .divide(Checked.product(tp, pp, cp)).intValue());
    if (dp <= 0) {
      throw a.bad(MegatronArg.WORLD_SIZE.dest(), "smaller than tensor x pipeline x context parallel size");
    }
    // Megatron-LM derives the data-parallel size from the world size: a log that prints both
    // must have them agree (world = tensor x pipeline x context x data), or it states no one run.
    Optional<Integer> world = a.optionalInt(MegatronArg.WORLD_SIZE.dest());
    if (world.isPresent() && !Checked.product(tp, pp, cp, dp)
        .equals(java.math.BigInteger.valueOf(world.get()))) {
      throw a.bad(MegatronArg.WORLD_SIZE.dest(), "not tensor x pipeline x context x data "
          + "parallel size (" + tp + " x " + pp + " x " + cp + " x " + dp + " = "
          + Checked.product(tp, pp, cp, dp) + ")");
    }
    int global = a.integer(MegatronArg.GLOBAL_BATCH_SIZE.dest());
    if (global % dp != 0) {
      throw a.bad(MegatronArg.GLOBAL_BATCH_SIZE.dest(), "not a multiple of the data-parallel size " + dp);
    }
    String rc = a.args.getOrDefault(MegatronArg.RECOMPUTE_GRANULARITY.dest(), "None");
    String recompute = rc.equals("full") ? "full" : rc.equals("selective") ? "selective" : "none";
    int vpp = a.optionalInt(MegatronArg.VIRTUAL_PIPELINE_MODEL_PARALLEL_SIZE.dest()).orElse(1);
    int recomputeLayers = recompute.equals("full") ? partialRecompute(a, pp * vpp) : 0;
    List<String> modules = recompute.equals("selective") ? modules(a) : List.of();
    // Experts' sizes only for a mixture-of-experts run; Megatron-LM's validate_args sets the
    // expert tensor size to the tensor size when not given.
    boolean routed = a.optionalInt(MegatronArg.NUM_EXPERTS.dest()).isPresent();
    int zero = zeroStage(a);
    int instances = a.optionalInt(MegatronArg.NUM_DISTRIBUTED_OPTIMIZER_INSTANCES.dest())
        .orElse(1);
    if (instances > 1 && zero != 3) {
      throw new InputException(a.file + ": num_distributed_optimizer_instances " + instances
          + " shards the optimizer inside partial data-parallel groups, which meshplan prices "
          + "only as Megatron-FSDP's hybrid sharding (data_parallel_sharding_strategy "
          + "optim_grads_params)");
    }
    // Megatron-FSDP's hybrid sharding: FSDP inside dp / instances, instances replicas.
    return new RunParallel(tp, pp, dp, vpp,
        a.integer(MegatronArg.MICRO_BATCH_SIZE.dest()), global / dp, recompute, a.flag(MegatronArg.SEQUENCE_PARALLEL.dest()),
        zero, a.flag(MegatronArg.OVERLAP_GRAD_REDUCE.dest()),
        a.flag(MegatronArg.OVERLAP_PARAM_GATHER.dest()), a.flag(MegatronArg.TP_COMM_OVERLAP.dest()),
        !"False".equals(a.args.get(MegatronArg.NO_GRADIENT_ACCUMULATION_FUSION.dest())), split(a), false,
        bf16GradReduce(a), cp, cp > 1 ? cpCommType(a) : "p2p", modules,
        routed ? a.optionalInt(MegatronArg.EXPERT_MODEL_PARALLEL_SIZE.dest()).orElse(1) : 1,
        routed ? a.optionalInt(MegatronArg.EXPERT_TENSOR_PARALLEL_SIZE.dest()).orElse(tp) : 1,
        routed && a.flag(MegatronArg.OVERLAP_MOE_EXPERT_PARALLEL_COMM.dest()),
        routed ? dispatcher(a) : "alltoall", instances, recomputeLayers);
  }

  /**
   * The ZeRO stage of a run: Megatron-FSDP's ({@code use_megatron_fsdp}, the older {@code
   * use_custom_fsdp}) by its {@code data_parallel_sharding_strategy} (no_shard 0, optim 1,
   * optim_grads 2, optim_grads_params 3, the default), else 1 with the distributed optimizer
   * and 0 without (Megatron-FSDP v1 sets use_distributed_optimizer too, so it is read first).
   */
  private static int zeroStage(Args a) {
    boolean fsdp = a.flag(MegatronArg.USE_MEGATRON_FSDP.dest()) || a.flag("use_custom_fsdp");
    if (!fsdp) {
      return a.flag(MegatronArg.USE_DISTRIBUTED_OPTIMIZER.dest()) ? 1 : 0;
    }
    String strategy = a.args.getOrDefault(MegatronArg.DATA_PARALLEL_SHARDING_STRATEGY.dest(),
        "optim_grads_params");
    return switch (strategy) {
      case "no_shard" -> 0;
      case "optim" -> 1;
      case "optim_grads" -> 2;
      case "optim_grads_params" -> 3;
      default -> throw new InputException(a.file + ": data_parallel_sharding_strategy "
          + strategy + " is not one Megatron-LM takes (no_shard, optim, optim_grads, "
          + "optim_grads_params)");
    };
  }

  /**
   * Full recomputation of only some layers: {@code recompute_method block} recomputes the first
   * {@code recompute_num_layers} layers of each model chunk and keeps the rest; {@code uniform}
   * recomputes every layer, in groups of that many (the same work; only the kept group inputs
   * differ), as does {@code block} over all of a chunk's layers. Another method is refused, as
   * Megatron-Core refuses it.
   *
   * @return the layers recomputed per chunk, or 0 for every layer
   */
  private static int partialRecompute(Args a, int chunks) {
    String method = a.args.getOrDefault(MegatronArg.RECOMPUTE_METHOD.dest(), "None");
    if (!List.of("block", "uniform", "None").contains(method)) {
      // TransformerConfig.__post_init__ (d98e8a6, transformer_config.py:1908-1912).
      throw a.bad(MegatronArg.RECOMPUTE_METHOD.dest(), "is not a recompute method Megatron-LM "
          + "takes (block or uniform)");
    }
    if (!method.equals("block")) {
      return 0;
    }
    int layers = a.integer(MegatronArg.NUM_LAYERS.dest());
    int per = (layers + chunks - 1) / chunks;
    // Args.integer refuses a count below 1.
    int n = a.integer(MegatronArg.RECOMPUTE_NUM_LAYERS.dest());
    return n < per ? n : 0;
  }

  /**
   * What selective recomputation recomputed ({@code recompute_modules}, printed as a Python list
   * such as {@code ['core_attn', 'mlp']}): empty for Megatron-Core's default, the attention core.
   */
  private static List<String> modules(Args a) {
    List<String> names = listOf(a.args.getOrDefault(MegatronArg.RECOMPUTE_MODULES.dest(), "None"));
    return names.isEmpty() || names.equals(List.of("core_attn")) ? List.of() : names;
  }

  /**
   * How context parallelism exchanged the sequence's shares ({@code cp_comm_type}, a list, one
   * entry for all layers or one per layer): {@code p2p} the ring, {@code all_gather} (or
   * {@code allgather}) the all-gather, {@code a2a} Ulysses' head-parallel all-to-alls; {@code
   * a2a+p2p} (all-to-alls inside a node, a ring across) and a mix over layers are refused.
   */
  private static String cpCommType(Args a) {
    List<String> types = listOf(a.args.getOrDefault(MegatronArg.CP_COMM_TYPE.dest(), "p2p"));
    java.util.Set<String> kinds = new java.util.HashSet<>();
    for (String t : types) {
      switch (t) {
        case "p2p" -> kinds.add("p2p");
        case "all_gather", "allgather" -> kinds.add("all_gather");
        case "a2a" -> kinds.add("a2a");
        default -> throw a.bad(MegatronArg.CP_COMM_TYPE.dest(), "is not a context-parallel "
            + "exchange meshplan prices (p2p, all_gather or a2a)");
      }
    }
    if (kinds.size() > 1) {
      throw a.bad(MegatronArg.CP_COMM_TYPE.dest(), "mixes exchanges over layers; meshplan prices one for all");
    }
    return kinds.isEmpty() ? "p2p" : kinds.iterator().next();
  }

  /** The items of a printed Python list of strings, or of one bare word; none for None. */
  private static List<String> listOf(String printed) {
    String t = Words.trimmed(printed);
    if (t.equals("None") || t.isEmpty() || t.equals("[]")) {
      return List.of();
    }
    if (t.startsWith("[") && t.endsWith("]")) {
      t = t.substring(1, t.length() - 1);
    }
    List<String> out = new ArrayList<>();
    for (String item : t.split(",")) {
      String w = Words.trimmed(item);
      if (w.length() >= 2 && (w.charAt(0) == '\'' || w.charAt(0) == '"')
          && w.charAt(w.length() - 1) == w.charAt(0)) {
        w = w.substring(1, w.length() - 1);
      }
      if (!w.isEmpty()) {
        out.add(w);
      }
    }
    return out;
  }

  /**
   * The FP8 precision the run trained in through Transformer Engine, if any: {@code fp8} (the
   * format, printed from {@code --fp8-format}) is {@code e4m3} or {@code hybrid}, which meshplan
   * prices alike (same operand bytes and rates), under the delayed or per-tensor current scaling
   * recipe ({@code fp8_recipe}, TransformerConfig's {@code delayed} default or {@code
   * tensorwise}) or Blackwell's MXFP8 block scaling ({@code mxfp8}); the block-wise and custom
   * recipes are refused, as meshplan does not price them. A run in NVFP4 ({@code fp4}, printed
   * from {@code --fp4-format}, {@code e2m1}, with {@code fp4_recipe} {@code nvfp4}) trains
   * through the same autocast, as {@code fp8:nvfp4}.
   *
   * @return {@code fp8} (delayed scaling), {@code fp8:tensorwise} (current scaling, which may
   *     recompute what delayed scaling may not), {@code fp8:mxfp8}, {@code fp8:nvfp4}, or empty
   *     when the run did not train in FP8 or FP4
   */
  private static java.util.Optional<String> fp8(Args a) {
    String format = a.args.getOrDefault(MegatronArg.FP8_FORMAT.dest(), "None");
    String fp4 = a.args.getOrDefault(MegatronArg.FP4_FORMAT.dest(), "None");
    if (!fp4.equals("None")) {
      if (!fp4.equals("e2m1")) {
        throw a.bad(MegatronArg.FP4_FORMAT.dest(), "is not an FP4 format Megatron-LM has (e2m1)");
      }
      String recipe = a.args.getOrDefault(MegatronArg.FP4_RECIPE.dest(), "nvfp4");
      if (!recipe.equals("nvfp4")) {
        throw a.bad(MegatronArg.FP4_RECIPE.dest(), "is not a recipe meshplan prices (it prices "
            + "Transformer Engine's nvfp4, not custom)");
      }
      return java.util.Optional.of("fp8:nvfp4");
    }
    if (format.equals("None")) {
      return java.util.Optional.empty();
    }
    if (!format.equals("e4m3") && !format.equals("hybrid")) {
      throw a.bad(MegatronArg.FP8_FORMAT.dest(), "is not an FP8 format Megatron-LM has (e4m3 or hybrid)");
    }
    String recipe = a.args.getOrDefault(MegatronArg.FP8_RECIPE.dest(), "delayed");
    if (!recipe.equals("delayed") && !recipe.equals("tensorwise") && !recipe.equals("mxfp8")) {
      throw a.bad(MegatronArg.FP8_RECIPE.dest(), "is not a recipe meshplan prices (it prices Transformer Engine's"
          + " delayed, per-tensor and mxfp8 scaling, not blockwise or custom)");
    }
    // The words are model.Fp8Scaling's, which this layer may not import (LayeringTest).
    return java.util.Optional.of(recipe.equals("delayed") ? "fp8" : "fp8:" + recipe);
  }

  /**
   * Whether a bf16 run reduced its gradients in bf16: {@code grad_reduce_in_bf16}, or {@code
   * accumulate_allreduce_grads_in_fp32} False (Megatron-LM's validate_args sets it True for bf16
   * unless {@code --grad-reduce-in-bf16}).
   */
  private static boolean bf16GradReduce(Args a) {
    return a.flag(MegatronArg.BF16.dest()) && (a.flag(MegatronArg.GRAD_REDUCE_IN_BF16.dest())
        || "False".equals(a.args.get(MegatronArg.ACCUMULATE_ALLREDUCE_GRADS_IN_FP32.dest())));
  }

  /**
   * The pipeline split the arguments state: uneven first and last stages, the embedding and loss
   * counted as layers, or a layout (printed as the string it was given).
   */
  private static RunSplit split(Args a) {
    String layout = a.args.getOrDefault(MegatronArg.PIPELINE_MODEL_PARALLEL_LAYOUT.dest(), "None");
    return new RunSplit(a.optionalInt(MegatronArg.DECODER_FIRST_PIPELINE_NUM_LAYERS.dest()).orElse(0),
        a.optionalInt(MegatronArg.DECODER_LAST_PIPELINE_NUM_LAYERS.dest()).orElse(0),
        a.flag(MegatronArg.ACCOUNT_FOR_EMBEDDING_IN_PIPELINE_SPLIT.dest()),
        a.flag(MegatronArg.ACCOUNT_FOR_LOSS_IN_PIPELINE_SPLIT.dest()), layout.equals("None") ? "" : layout);
  }

  /** The arguments block, read with messages that name the log and the argument. */
  private record Args(String file, Map<String, String> args) {
    Optional<Integer> optionalInt(String name) {
      String v = args.get(name);
      if (v == null || v.equals("None")) {
        return Optional.empty();
      }
      if (v.startsWith("+")) {
        // Megatron-LM prints an int argument in digits: '+16' is not its form.
        throw bad(name, "is not a whole number");
      }
      try {
        int n = AsciiDigits.parseInt(v);
        if (n <= 0) {
          throw bad(name, "must be positive");
        }
        return Optional.of(n);
      } catch (NumberFormatException e) {
        throw bad(name, "is not a whole number");
      }
    }

    int integer(String name) {
      return optionalInt(name).orElseThrow(() -> missing(name));
    }

    /**
     * A switch as Megatron-LM prints it: True, or False (None and absent for a switch the
     * version lacks); any other value is refused, not read as off.
     */
    boolean flag(String name) {
      String v = args.get(name);
      if (v == null || v.equals("False") || v.equals("None")) {
        return false;
      }
      if (!v.equals("True")) {
        throw bad(name, "is not True or False");
      }
      return true;
    }

    InputException missing(String name) {
      if (args.isEmpty()) {
        return new InputException(file + ": the '---- arguments ----' block is empty or cut "
            + "off; calibrate needs the whole block Megatron-LM prints at start-up");
      }
      return new InputException(file + ": argument " + name + " is missing from the "
          + "'---- arguments ----' block; calibrate needs it to rebuild the run");
    }

    InputException bad(String name, String why) {
      // The log's value as it is, but for control characters, shown escaped.
      return new InputException(file + ": argument " + name + " = "
          + io.meshplan.util.TerminalText.escape(String.valueOf(args.get(name))) + " " + why);
    }
  }
}
