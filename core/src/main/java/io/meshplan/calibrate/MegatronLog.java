package io.meshplan.calibrate;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
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
      "iteration\\s+(\\d+)/\\s*\\d+ \\|.*elapsed time per iteration \\(ms\\): ([0-9.]+)");

  private MegatronLog() {}

  static boolean recognizes(List<String> lines) {
    return lines.stream().anyMatch(l -> l.contains("-------- arguments --------"));
  }

  static TrainingRun parse(String file, List<String> lines) {
    Args a = new Args(file, arguments(file, lines));
    RunModel model = model(a);
    RunParallel parallel = parallel(a);
    List<Double> ms = new ArrayList<>();
    for (String l : lines) {
      Matcher m = ITERATION.matcher(l);
      if (m.find()) {
        try {
          ms.add(Double.parseDouble(m.group(2)));
        } catch (NumberFormatException e) {
          continue;
        }
      }
    }
    ms.removeIf(v -> !(v > 0) || !Double.isFinite(v));
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
                + args.get(m.group(1)) + "; here = " + m.group(2).trim() + "); Megatron-LM "
                + "prints each argument once, so this log does not state one run");
          }
          args.put(m.group(1), m.group(2).trim());
        }
      }
    }
    return args;
  }

  private static RunModel model(Args a) {
    int hidden = a.integer("hidden_size");
    int heads = a.integer("num_attention_heads");
    dense(a, hidden, heads);
    int kv = a.flag("group_query_attention") ? a.integer("num_query_groups") : heads;
    int ffn = a.optionalInt("ffn_hidden_size").orElse(4 * hidden);
    int vocab = a.optionalInt("padded_vocab_size").or(() -> a.optionalInt("vocab_size"))
        .orElseThrow(() -> a.missing("padded_vocab_size"));
    String dtype = fp8(a) ? "fp8" : a.flag("bf16") ? "bf16" : a.flag("fp16") ? "f16" : "f32";
    // Megatron-Core's AttnBackend: flash, fused (cuDNN) and auto (Transformer Engine picks one
    // of them) run one fused kernel; unfused and local do not.
    String backend = a.args.getOrDefault("attention_backend", "");
    backend = backend.substring(backend.lastIndexOf('.') + 1);
    boolean flash = a.flag("use_flash_attn") || backend.equals("flash")
        || backend.equals("fused") || backend.equals("auto");
    int layers = a.integer("num_layers");
    return new RunModel.Dims(layers, hidden, heads, kv, ffn, vocab, a.integer("seq_length"),
        a.flag("swiglu"), dtype, flash, moe(a, layers, ffn));
  }

  /**
   * The routed experts ({@code num_experts} set): {@code moe_router_topk} (2 by default), {@code
   * moe_ffn_hidden_size} (the dense size by default), {@code moe_shared_expert_intermediate_size},
   * {@code moe_expert_capacity_factor} (None: dropless) and {@code moe_layer_freq} (an integer n,
   * one expert block in n starting with the first, or the 0/1 list it was expanded to). Only the
   * all-to-all token dispatcher is priced: Megatron-Core's default {@code allgather} and the
   * DeepEP/HybridEP {@code flex} dispatcher are refused, as their exchanges are not meshplan's.
   */
  private static RunModel.Moe moe(Args a, int layers, int ffn) {
    Optional<Integer> experts = a.optionalInt("num_experts");
    if (experts.isEmpty()) {
      return RunModel.Moe.NONE;
    }
    if (!a.args.containsKey("moe_token_dispatcher_type")) {
      throw new InputException(a.file() + ": argument moe_token_dispatcher_type is not in the "
          + "arguments block, so the run used Megatron-Core's default, allgather, which is not "
          + "the token dispatcher meshplan prices (alltoall)");
    }
    if (!a.args.get("moe_token_dispatcher_type").equals("alltoall")) {
      throw a.bad("moe_token_dispatcher_type", "is not the token dispatcher meshplan prices "
          + "(alltoall: one all-to-all to dispatch and one to combine)");
    }
    return new RunModel.Moe(experts.get(), a.optionalInt("moe_router_topk").orElse(2),
        a.optionalInt("moe_ffn_hidden_size").orElse(ffn),
        a.optionalInt("moe_shared_expert_intermediate_size").orElse(0), capacity(a),
        denseLayers(a, layers));
  }

  /** {@code moe_expert_capacity_factor}: 0 for None (dropless), else a positive number. */
  private static double capacity(Args a) {
    String cf = a.args.getOrDefault("moe_expert_capacity_factor", "None");
    if (cf.equals("None")) {
      return 0;
    }
    double capacity = Double.NaN;
    try {
      capacity = Double.parseDouble(cf);
    } catch (NumberFormatException e) {
      // NaN: refused below, as a non-positive factor is.
    }
    if (!(capacity > 0) || !Double.isFinite(capacity)) {
      throw a.bad("moe_expert_capacity_factor", "is not a positive capacity factor");
    }
    return capacity;
  }

  /** The blocks without experts by {@code moe_layer_freq}. */
  private static List<Integer> denseLayers(Args a, int layers) {
    String freq = a.args.getOrDefault("moe_layer_freq", "1").trim();
    List<Integer> dense = new ArrayList<>();
    if (freq.matches("[0-9]{1,9}")) {
      int n = AsciiDigits.parseInt(freq);
      if (n < 1) {
        throw a.bad("moe_layer_freq", "is not a positive frequency");
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
      throw a.bad("moe_layer_freq", "is neither a frequency nor a list of " + layers + " 0s and "
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
   * multi-head latent attention, multi-token prediction modules, sliding-window attention ({@code
   * window_size}), and heads whose width ({@code kv_channels}, which validate_args sets to {@code
   * hidden_size / num_attention_heads} when not given) is not the hidden size over the heads.
   * Read as a decoder of standard attention, such a run would be fitted to the wrong model.
   */
  private static void dense(Args a, int hidden, int heads) {
    String rebuilds = "; calibrate --train rebuilds decoders of standard attention from a "
        + "Megatron-LM log, which this run is not";
    if (a.flag("multi_latent_attention")) {
      throw a.bad("multi_latent_attention", "trains multi-head latent attention" + rebuilds);
    }
    if (a.optionalInt("mtp_num_layers").isPresent()) {
      throw a.bad("mtp_num_layers", "trains multi-token prediction modules" + rebuilds);
    }
    if (!a.args.getOrDefault("window_size", "None").equals("None")) {
      throw a.bad("window_size", "trains sliding-window attention" + rebuilds);
    }
    Optional<Integer> kv = a.optionalInt("kv_channels");
    if (kv.isPresent() && (hidden % heads != 0 || kv.get() != hidden / heads)) {
      throw a.bad("kv_channels", "is not hidden_size / num_attention_heads (" + hidden + " / "
          + heads + ")" + rebuilds);
    }
  }

  private static RunParallel parallel(Args a) {
    int tp = a.integer("tensor_model_parallel_size");
    int pp = a.integer("pipeline_model_parallel_size");
    int cp = a.optionalInt("context_parallel_size").orElse(1);
    int dp = a.optionalInt("data_parallel_size")
        .orElseGet(() -> java.math.BigInteger.valueOf(a.integer("world_size"))
            .divide(Checked.product(tp, pp, cp)).intValue());
    if (dp <= 0) {
      throw a.bad("world_size", "smaller than tensor x pipeline x context parallel size");
    }
    int global = a.integer("global_batch_size");
    if (global % dp != 0) {
      throw a.bad("global_batch_size", "not a multiple of the data-parallel size " + dp);
    }
    String rc = a.args.getOrDefault("recompute_granularity", "None");
    String recompute = rc.equals("full") ? "full" : rc.equals("selective") ? "selective" : "none";
    int vpp = a.optionalInt("virtual_pipeline_model_parallel_size").orElse(1);
    if (recompute.equals("full")) {
      partialRecompute(a, pp * vpp);
    }
    List<String> modules = recompute.equals("selective") ? modules(a) : List.of();
    // Experts' sizes only for a mixture-of-experts run; Megatron-LM's validate_args sets the
    // expert tensor size to the tensor size when not given.
    boolean routed = a.optionalInt("num_experts").isPresent();
    return new RunParallel(tp, pp, dp, vpp,
        a.integer("micro_batch_size"), global / dp, recompute, a.flag("sequence_parallel"),
        a.flag("use_distributed_optimizer") ? 1 : 0, a.flag("overlap_grad_reduce"),
        a.flag("overlap_param_gather"), a.flag("tp_comm_overlap"),
        !"False".equals(a.args.get("gradient_accumulation_fusion")), split(a), false,
        bf16GradReduce(a), cp, cp > 1 && allGather(a), modules,
        routed ? a.optionalInt("expert_model_parallel_size").orElse(1) : 1,
        routed ? a.optionalInt("expert_tensor_parallel_size").orElse(tp) : 1,
        routed && a.flag("overlap_moe_expert_parallel_comm"));
  }

  /**
   * Refuses full recomputation of only some layers: {@code recompute_method block} recomputes the
   * first {@code recompute_num_layers} layers of each model chunk and keeps the rest, which one
   * recomputation per stage cannot state; {@code uniform} recomputes every layer, in groups of
   * that many (the same work; only the kept group inputs differ).
   */
  private static void partialRecompute(Args a, int chunks) {
    if (!"block".equals(a.args.get("recompute_method"))) {
      return;
    }
    int layers = a.integer("num_layers");
    int per = (layers + chunks - 1) / chunks;
    int n = a.integer("recompute_num_layers");
    if (n < per) {
      throw a.bad("recompute_num_layers", "with recompute_method block recomputes " + n + " of "
          + "each model chunk's " + per + " layers and keeps the rest, which calibrate cannot "
          + "state (it states one recomputation for every layer); calibrate from a run with "
          + "recompute_method uniform, or block over all of a chunk's layers");
    }
  }

  /**
   * What selective recomputation recomputed ({@code recompute_modules}, printed as a Python list
   * such as {@code ['core_attn', 'mlp']}): empty for Megatron-Core's default, the attention core.
   */
  private static List<String> modules(Args a) {
    List<String> names = listOf(a.args.getOrDefault("recompute_modules", "None"));
    return names.isEmpty() || names.equals(List.of("core_attn")) ? List.of() : names;
  }

  /**
   * Whether context parallelism all-gathered keys and values ({@code cp_comm_type}, a list, one
   * entry for all layers or one per layer): {@code p2p} is the ring, {@code all_gather} (or
   * {@code allgather}) the all-gather; Ulysses' {@code a2a} and {@code a2a+p2p}, and a mix over
   * layers, are refused, as meshplan prices neither.
   */
  private static boolean allGather(Args a) {
    List<String> types = listOf(a.args.getOrDefault("cp_comm_type", "p2p"));
    java.util.Set<String> kinds = new java.util.HashSet<>();
    for (String t : types) {
      switch (t) {
        case "p2p" -> kinds.add("p2p");
        case "all_gather", "allgather" -> kinds.add("all_gather");
        default -> throw a.bad("cp_comm_type", "is not a context-parallel exchange meshplan "
            + "prices (p2p or all_gather)");
      }
    }
    if (kinds.size() > 1) {
      throw a.bad("cp_comm_type", "mixes exchanges over layers; meshplan prices one for all");
    }
    return kinds.contains("all_gather");
  }

  /** The items of a printed Python list of strings, or of one bare word; none for None. */
  private static List<String> listOf(String printed) {
    String t = printed.trim();
    if (t.equals("None") || t.isEmpty() || t.equals("[]")) {
      return List.of();
    }
    if (t.startsWith("[") && t.endsWith("]")) {
      t = t.substring(1, t.length() - 1);
    }
    List<String> out = new ArrayList<>();
    for (String item : t.split(",")) {
      String w = item.trim();
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
   * Whether the run trained in FP8 through Transformer Engine: {@code fp8} (the format, printed
   * from {@code --fp8-format}) is {@code e4m3} or {@code hybrid}, which meshplan prices alike
   * (same operand bytes and rates), under the delayed or per-tensor current scaling recipe
   * ({@code fp8_recipe}, TransformerConfig's {@code delayed} default or {@code tensorwise});
   * Blackwell's MXFP8, block-wise and custom recipes are refused, as meshplan does not price
   * them.
   */
  private static boolean fp8(Args a) {
    String format = a.args.getOrDefault("fp8", "None");
    if (format.equals("None")) {
      return false;
    }
    if (!format.equals("e4m3") && !format.equals("hybrid")) {
      throw a.bad("fp8", "is not an FP8 format Megatron-LM has (e4m3 or hybrid)");
    }
    String recipe = a.args.getOrDefault("fp8_recipe", "delayed");
    if (!recipe.equals("delayed") && !recipe.equals("tensorwise")) {
      throw a.bad("fp8_recipe", "is not a recipe meshplan prices (it prices Transformer Engine's"
          + " delayed and per-tensor scaling, not mxfp8, blockwise or custom)");
    }
    return true;
  }

  /**
   * Whether a bf16 run reduced its gradients in bf16: {@code grad_reduce_in_bf16}, or {@code
   * accumulate_allreduce_grads_in_fp32} False (Megatron-LM's validate_args sets it True for bf16
   * unless {@code --grad-reduce-in-bf16}).
   */
  private static boolean bf16GradReduce(Args a) {
    return a.flag("bf16") && (a.flag("grad_reduce_in_bf16")
        || "False".equals(a.args.get("accumulate_allreduce_grads_in_fp32")));
  }

  /**
   * The pipeline split the arguments state: uneven first and last stages, the embedding and loss
   * counted as layers, or a layout (printed as the string it was given).
   */
  private static RunSplit split(Args a) {
    String layout = a.args.getOrDefault("pipeline_model_parallel_layout", "None");
    return new RunSplit(a.optionalInt("decoder_first_pipeline_num_layers").orElse(0),
        a.optionalInt("decoder_last_pipeline_num_layers").orElse(0),
        a.flag("account_for_embedding_in_pipeline_split"),
        a.flag("account_for_loss_in_pipeline_split"), layout.equals("None") ? "" : layout);
  }

  /** The arguments block, read with messages that name the log and the argument. */
  private record Args(String file, Map<String, String> args) {
    Optional<Integer> optionalInt(String name) {
      String v = args.get(name);
      if (v == null || v.equals("None")) {
        return Optional.empty();
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

    boolean flag(String name) {
      return "True".equals(args.get(name));
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
      return new InputException(file + ": argument " + name + " = " + args.get(name) + " "
          + why);
    }
  }
}
