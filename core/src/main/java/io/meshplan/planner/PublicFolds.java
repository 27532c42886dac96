package io.meshplan.planner;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The public runs meshplan ships, in folds: one fold per software stack, since runs of one
 * stack share its kernels, overlaps and host overheads and so err together. A factor fitted on
 * some folds is scored on the others ({@link FoldCalibration}). The data files, with each row's
 * source, are resources beside this class ({@code folds/*.csv}).
 *
 * <ul>
 *   <li>{@code sc21}: Narayanan et al., SC'21, Table 1 (Megatron-LM of 2021 on A100 80 GB):
 *       TP = min(MP, 8), PP = MP / TP, DP = GPUs / MP, the published global batch, fp16, full
 *       recomputation, micro-batch 1 (not published; one rule for every row), unfused attention,
 *       no overlaps (none existed in 2021). Hardware TFLOP/s, recomputation counted.
 *   <li>{@code llm-foundry}: llm-foundry's MPT benchmarks on A100 80 GB and H100 80 GB: FSDP
 *       FULL_SHARD (ZeRO-3 over every GPU), bf16, the published micro and global batch,
 *       activation checkpointing as published, the PyTorch 2.0-era Triton FlashAttention-2 kernel
 *       ({@code attn_impl: triton}), fused cross-entropy. MPT's ALiBi is stated as rotary
 *       positions (a few elementwise operations on Q and K, no parameters, as ALiBi has none).
 *       Tokens per second per GPU.
 *   <li>{@code megatron-core}: Megatron-Core's weak scaling on H100 (Megatron-LM README): GPT
 *       with LayerNorm, GeLU and a 4h feed-forward, cuDNN fused attention through Transformer
 *       Engine, sequence parallelism with TP, the distributed optimizer, micro-batch 1, no
 *       recomputation, every overlap; model TFLOP/s by Megatron's formula.
 *   <li>{@code nemo}: NeMo's (24.07) and Megatron-Bridge's (25.11, 26.04.01) performance
 *       summaries on H100: dense Llama in FP8 and mixture-of-experts models (GPT-OSS 120B in
 *       bf16, Qwen3 30B-A3B and 235B-A22B in FP8, DeepSeek-V3) with balanced routing, each with
 *       its recipe's overlaps and loss (the data files' columns); and Megatron-Bridge's rows on
 *       B200, GB200 and GB300 (dense Llama in FP8, MXFP8 and NVFP4, each row's cluster in its
 *       file, and MXFP8 mixture-of-experts rows on GB200 and GB300: DeepSeek-V3, GPT-OSS 120B,
 *       Qwen3 30B-A3B and 235B-A22B, Nemotron 3 Nano), the one stack with published Blackwell
 *       runs, which therefore keeps kernel-level prices; and
 *       Megatron-Bridge's Llama 3 70B fine-tuning rows (SFT and LoRA on packed sequences, FP8, on
 *       H100, GB200 and GB300) and its Nemotron 3 Nano row (a hybrid of Mamba-2, attention and
 *       experts, FP8 with current scaling, on H100). Tokens per second per GPU.
 *   <li>{@code meta}: Llama 3 405B's 131,072-token context-parallel row (Dubey et al. 2024,
 *       Table 4), TFLOP/s in the PaLM count Meta states.
 *   <li>{@code automodel}: NVIDIA NeMo AutoModel's performance summary on H100 (PyTorch FSDP2
 *       over Hugging Face models with Transformer Engine kernels, bf16): Llama 3.1 70B with
 *       context parallelism, and LoRA on every projection of Llama 3.1 8B and 70B; each row with
 *       the attention kernel and recomputation its recipe ran (the data file's columns); and its
 *       mixture-of-experts rows (Qwen3-30B-A3B, GPT-OSS-20B, Nemotron 3 Nano, DeepSeek-V3), whose
 *       optimizer keeps bf16 state ({@link io.meshplan.model.OptimizerState#BF16}, the data
 *       file's optimizer column). Tokens per second per GPU.
 *   <li>{@code maxtext}: MaxText's Llama 2 7B on one A3 VM (8 H100 80 GB; JAX and XLA, FSDP over
 *       the 8 GPUs, remat policy {@code minimal_flash}, Transformer Engine's cuDNN attention,
 *       fp32 weights and gradients), TFLOP/s per GPU in MaxText's 2024 count.
 *   <li>{@code mlperf}: MLPerf Training v5.1's Llama 2 70B LoRA benchmark as AMD ran it on an
 *       MI325X and an MI300X node and MangoBoost ran the same recipe on two of each (NeMo with
 *       Megatron-Core and Transformer Engine on ROCm; FP8 with the frozen base stored in FP8; the
 *       first 21 layers recomputed but on AMD's MI325X node), the one stack with public CDNA 3
 *       runs, which therefore keeps kernel-level prices. Tokens per second per GPU.
 *   <li>{@code mlperf-nvidia}: the same benchmark in NVIDIA's implementation (NeMo 2 with
 *       Megatron-Core and Transformer Engine), as Lenovo ran it on one B200 and one B300 node and
 *       Dell on two B200 nodes and one H200 node: FP8 with the frozen base in FP8, FP8 attention,
 *       the SwiGLU inputs kept in FP8, no recomputation; TP 2 without sequence parallelism on the
 *       H200. Tokens per second per GPU.
 * </ul>
 */
public final class PublicFolds {
  /** The folds, in the order tables print them. */
  public static final List<String> NAMES = List.of("sc21", "llm-foundry", "megatron-core",
      "nemo", "meta", "automodel", "maxtext", "mlperf", "mlperf-nvidia");

  private static final String DIR = "folds/";

  private PublicFolds() {}

  /**
   * Every shipped run, in fold order.
   *
   * @return the runs
   */
  public static List<PublicRun> all() {
    List<PublicRun> out = new ArrayList<>(sc21());
    out.addAll(mpt("mpt", "llmfoundry_mpt_a100.csv", "a100-80gb"));
    out.addAll(mpt("mpth", "llmfoundry_mpt_h100.csv", "h100-80gb"));
    out.addAll(megatronCore());
    out.addAll(recipes("dense_fp8_h100.csv"));
    out.addAll(recipes("moe_cp_h100.csv"));
    out.addAll(recipes("dense_fp8_blackwell.csv"));
    out.addAll(recipes("moe_mxfp8_blackwell.csv"));
    out.addAll(recipes("finetune_llama3_70b.csv"));
    out.addAll(recipes("hybrid_h100.csv"));
    out.addAll(recipes("automodel_h100.csv"));
    out.addAll(recipes("maxtext_h100.csv"));
    out.addAll(recipes("mlperf_llama2_70b_lora.csv"));
    out.addAll(recipes("mlperf_nvidia_llama2_70b_lora.csv"));
    out.addAll(recipes("mlperf_nvidia_llama31.csv"));
    return List.copyOf(out);
  }

  /**
   * Published runs held out of every fold: never fitted, so priced at the shipped factors they
   * check what a user of their stack is told. torchtitan's (stack {@code torchtitan}, not one of
   * {@link #NAMES}): its H100 rows ran a 500 W part whose sustained tensor-core throughput is not
   * published, which one Hopper factor cannot carry beside the 700 W parts ({@code
   * folds/heldout_torchtitan.csv} says which rows and why); and other submitters' MLPerf runs of
   * NVIDIA's implementation on Hopper nodes ({@code folds/heldout_mlperf.csv}), whose stack's
   * fold never saw them.
   *
   * @return the runs, torchtitan's first
   */
  public static List<PublicRun> heldOut() {
    List<PublicRun> out = new ArrayList<>(recipes("heldout_torchtitan.csv"));
    out.addAll(recipes("heldout_mlperf.csv"));
    return List.copyOf(out);
  }

  /**
   * The runs of named folds.
   *
   * @param folds fold names ({@link #NAMES}), or {@code public} for all of them
   * @return the runs, in fold order
   * @throws InputException naming a fold that is unknown, named twice (public counts as every
   *     fold) or names no runs
   */
  public static List<PublicRun> of(List<String> folds) {
    if (folds.isEmpty()) {
      throw new InputException("--folds names no fold; give public or some of "
          + String.join(", ", NAMES));
    }
    java.util.Set<String> wanted = new java.util.LinkedHashSet<>();
    for (String f : folds) {
      String w = Words.trimmed(f).toLowerCase(Locale.ROOT);
      if (w.equals("public") && folds.size() > 1) {
        throw new InputException("--folds public already holds every fold (" + String.join(", ",
            NAMES) + "); give public alone, or fold names, each once");
      } else if (w.equals("public")) {
        wanted.addAll(NAMES);
      } else if (!NAMES.contains(w)) {
        throw new InputException("fold '" + f + "' is not a public fold; use public or some of "
            + String.join(", ", NAMES));
      } else if (!wanted.add(w)) {
        // A fold named twice would be fitted once: the user meant something else.
        throw new InputException("--folds names " + w + " twice; give each fold once");
      }
    }
    List<PublicRun> out = all().stream().filter(r -> wanted.contains(r.fold())).toList();
    for (String w : wanted) {
      if (out.stream().noneMatch(r -> r.fold().equals(w))) {
        throw new InputException("fold " + w + " names no runs");
      }
    }
    return out;
  }

  /** SC'21 Table 1. */
  private static List<PublicRun> sc21() {
    List<PublicRun> out = new ArrayList<>();
    ModelSpec gpt = Presets.get("gpt-1.7b");
    for (String[] f : rows("megatron_sc21_table1.csv")) {
      int hidden = AsciiDigits.parseInt(f[2]);
      int layers = AsciiDigits.parseInt(f[3]);
      int heads = AsciiDigits.parseInt(f[4]);
      int mp = AsciiDigits.parseInt(f[5]);
      int gpus = AsciiDigits.parseInt(f[6]);
      int batch = AsciiDigits.parseInt(f[7]);
      ModelSpec m = new ModelSpec("gpt-" + f[0], gpt.family(), layers, hidden, heads, heads,
          4 * hidden, gpt.vocab(), 2048, batch, DType.F16, gpt.arch());
      int tp = Math.min(mp, 8);
      ParallelConfig c = new ParallelConfig(tp, mp / tp, gpus / mp, 1, 1, batch, Recompute.FULL,
          false, false);
      out.add(new PublicRun("sc21", "sc21", f[0], m, ClusterSpec.parse(gpus / 8 + "x8:a100-80gb"),
          c, DType.F16, Attention.UNFUSED, Optional.empty(), Overlaps.NONE,
          AsciiDigits.parseDecimal(f[8]), PublicRun.Figure.HARDWARE_TFLOPS));
    }
    return out;
  }

  /** Megatron-Core's weak scaling on H100. */
  private static List<PublicRun> megatronCore() {
    List<PublicRun> out = new ArrayList<>();
    ModelSpec gpt = Presets.get("gpt-1.7b");
    for (String[] f : rows("megatron_h100_weak_scaling.csv")) {
      int heads = AsciiDigits.parseInt(f[1]);
      int hidden = AsciiDigits.parseInt(f[2]);
      int layers = AsciiDigits.parseInt(f[3]);
      int tp = AsciiDigits.parseInt(f[4]);
      int pp = AsciiDigits.parseInt(f[5]);
      int dp = AsciiDigits.parseInt(f[6]);
      int gpus = AsciiDigits.parseInt(f[7]);
      int batch = AsciiDigits.parseInt(f[8]);
      ModelSpec m = new ModelSpec("gpt-" + f[0], gpt.family(), layers, hidden, heads, heads,
          4 * hidden, 131072, 4096, batch, DType.BF16, gpt.arch().forSequence(4096));
      ParallelConfig c = new ParallelConfig(tp, pp, dp, 1, 1, batch, Recompute.NONE, tp > 1, 1);
      // Megatron-Core r0.8.0 ran with every overlap it has and Megatron's fp32 cross-entropy
      // (cross_entropy_loss_fusion off by default).
      out.add(new PublicRun("megatron-core", "h100", f[0], m,
          ClusterSpec.parse(gpus / 8 + "x8:h100-80gb:ib-ndr400"), c, DType.BF16, Attention.FLASH,
          Optional.of(AttentionKernel.CUDNN), new Overlaps(true, true, true, true, true),
          AsciiDigits.parseDecimal(f[9]), PublicRun.Figure.MEGATRON_MODEL_TFLOPS));
    }
    return out;
  }

  /** One of llm-foundry's MPT tables, as set {@code set} on GPUs of catalog name {@code gpu}. */
  private static List<PublicRun> mpt(String set, String resource, String gpu) {
    List<PublicRun> out = new ArrayList<>();
    Architecture arch = new Architecture(Architecture.Mlp.GELU, Architecture.Norm.LAYER,
        Architecture.Positions.ROTARY, 0, false, true);
    for (String[] f : rows(resource)) {
      int hidden = AsciiDigits.parseInt(f[1]);
      int layers = AsciiDigits.parseInt(f[2]);
      int heads = AsciiDigits.parseInt(f[3]);
      int gpus = AsciiDigits.parseInt(f[7]);
      int micro = AsciiDigits.parseInt(f[8]);
      int batch = AsciiDigits.parseInt(f[9]);
      ModelSpec m = new ModelSpec(f[0].toLowerCase(Locale.ROOT), ModelSpec.Family.GPT, layers,
          hidden, heads, heads, AsciiDigits.parseInt(f[4]), AsciiDigits.parseInt(f[5]),
          AsciiDigits.parseInt(f[6]), batch, DType.BF16, arch);
      Recompute rc = f[10].equals("full") ? Recompute.FULL : Recompute.NONE;
      ParallelConfig c = new ParallelConfig(1, 1, gpus, 1, micro, batch, rc, false, 3);
      // PyTorch FSDP with its default prefetch, and MPT's default loss, fused_crossentropy.
      out.add(new PublicRun("llm-foundry", set, f[0] + "/" + f[6], m,
          ClusterSpec.parse(gpus / 8 + "x8:" + gpu), c, DType.BF16, Attention.FLASH,
          Optional.of(AttentionKernel.TRITON), Overlaps.DEFAULTS.withLossFusion(true),
          AsciiDigits.parseDecimal(f[12]), PublicRun.Figure.TOKENS_PER_GPU));
    }
    return out;
  }

  /**
   * Runs stated as their recipes ran them, with the overlaps and loss their data file's columns
   * give: NeMo's and Megatron-Bridge's rows (fold {@code nemo}) and Llama 3's context-parallel
   * row (fold {@code meta}).
   */
  private static List<PublicRun> recipes(String resource) {
    List<PublicRun> out = new ArrayList<>();
    for (Row r : namedRows(resource)) {
      int batch = r.integer("global_batch");
      ModelSpec m = predictionModules(Presets.get(r.get("model")), r);
      m = fineTuning(m.withSequence(r.integer("seq")).withTraining(batch, m.dtype()), r);
      int tp = r.integer("tp");
      int pp = r.integer("pp");
      String splitText = r.get("split").replace("\"", "");
      io.meshplan.plan.PipelineSplit split = splitText.startsWith("layout=")
          ? io.meshplan.plan.PipelineLayout.parse(splitText.substring("layout=".length()), pp)
          : new io.meshplan.plan.SplitAccounting(splitText.contains("embedding"),
              splitText.contains("loss"));
      // The recompute column: a mode, selective=module+module (Megatron's recompute_modules), or
      // full=N for the first N layers of each chunk (Megatron's recompute_method block).
      String[] rc = r.get("recompute").split("=");
      boolean block = rc[0].equals("full") && rc.length > 1;
      // The cp column: a size, or size/allgather where keys and values are all-gathered
      // (Megatron-Core's all_gather form) rather than passed round a ring, or size/a2a where
      // all-to-alls trade sequence shares for heads (Ulysses).
      String[] cp = r.get("cp").split("/");
      io.meshplan.plan.ContextExchange exchange = cp.length < 2
          ? io.meshplan.plan.ContextExchange.P2P
          : io.meshplan.plan.ContextExchange.parse(cp[1]).orElseThrow(
              () -> new IllegalStateException(resource + ": unknown cp exchange " + cp[1]));
      // The sequence_parallel column, where a file has it; else on with tensor parallelism.
      boolean sp = r.optional("sequence_parallel").map(v -> yes(resource, v)).orElse(tp > 1);
      ParallelConfig c = new ParallelConfig(tp, pp, r.integer("dp"), r.integer("vpp"),
          r.integer("micro_batch"), batch, Recompute.parse(rc[0]), sp, r.integer("zero"),
          r.integer("first"), r.integer("last"), r.integer("ep"), 1,
          AsciiDigits.parseInt(cp[0]), false, split,
          rc.length > 1 && !block
              ? io.meshplan.model.RecomputeModule.parseList(rc[1].replace('+', ','))
              : io.meshplan.model.RecomputeModule.DEFAULT)
          .withCpExchange(exchange)
          .withRecomputeLayers(block ? AsciiDigits.parseInt(rc[1]) : 0);
      // fp8 is Transformer Engine's delayed scaling; fp8:tensorwise its current scaling.
      String precision = r.get("dtype");
      DType dtype = io.meshplan.model.Fp8Training.parse(
          io.meshplan.model.Fp8Scaling.stripRecipe(precision));
      m = m.withFp8Scaling(io.meshplan.model.Fp8Scaling.ofPrecision(precision));
      // The optimizer column, where a file has it: fp32 (mixed-precision Adam) or bf16 (the
      // bf16 weights as Adam's own); rows without it are fp32.
      String optimizer = r.optional("optimizer").orElse("fp32");
      m = m.withOptimizerState(io.meshplan.model.OptimizerState.parse(optimizer).orElseThrow(
          () -> new IllegalStateException(resource + ": unknown optimizer " + optimizer)));
      // The activation_store column, where a file has it: fp8 where the SwiGLU inputs are kept
      // as FP8 copies (activation_func_fp8_input_store), else the compute type.
      String store = r.optional("activation_store").orElse("compute");
      if (!store.equals("compute") && !store.equals("fp8")) {
        throw new IllegalStateException(resource + ": unknown activation store " + store);
      }
      m = m.withFp8ActivationInput(store.equals("fp8"));
      // The distributed optimizer's parameter gather overlaps with the gradient reduction under
      // ZeRO-1; FSDP (ZeRO-3) prefetches its gathers instead.
      boolean dp = r.get("dp_overlap").equals("yes");
      String dispatcher = r.get("dispatcher");
      Overlaps recipe = new Overlaps(dp, dp && c.zeroStage() == 1,
          r.get("tp_overlap").equals("yes"), true, true, r.get("moe_overlap").equals("yes"),
          r.get("loss").equals("fused"), r.get("grad_reduce").equals("bf16"),
          io.meshplan.model.ExpertDispatcher.of(dispatcher).orElseThrow(
              () -> new IllegalStateException(resource + ": unknown dispatcher " + dispatcher)));
      // A file with a fold column names its stack and the attention kernel its rows ran;
      // the others are NeMo's and Megatron-Bridge's, and Meta's context-parallel row.
      String set = r.get("set");
      String fold = r.optional("fold").orElse(set.equals("cp") ? "meta" : "nemo");
      Optional<AttentionKernel> kernel = r.optional("attention").map(AttentionKernel::parse);
      out.add(new PublicRun(fold, set, r.get("model"), m, cluster(r), c, dtype, Attention.FLASH,
          kernel, recipe, AsciiDigits.parseDecimal(r.get("measured")),
          figure(resource, r.get("unit"))));
    }
    return out;
  }

  /** A yes/no column's value. */
  private static boolean yes(String resource, String v) {
    if (!v.equals("yes") && !v.equals("no")) {
      throw new IllegalStateException(resource + ": expected yes or no, got " + v);
    }
    return v.equals("yes");
  }

  /** A recipe row's unit: one of {@link PublicRun.Figure}'s. */
  private static PublicRun.Figure figure(String resource, String unit) {
    for (PublicRun.Figure f : PublicRun.Figure.values()) {
      if (f.unit().equals(unit)) {
        return f;
      }
    }
    throw new IllegalStateException(resource + ": unknown unit " + unit);
  }

  /**
   * A recipe row's fine-tuning columns, where the file has them: {@code full}, {@code full/fp8}
   * (every weight trained, the block projections kept in FP8) or {@code
   * lora=rank/alpha/targets[/fp8]}, then {@code none} or {@code mean=tokens} for documents of
   * that length packed into each sequence.
   */
  private static ModelSpec fineTuning(ModelSpec m, Row r) {
    ModelSpec out = m;
    String finetune = r.optional("finetune").orElse("full");
    if (finetune.startsWith("lora=")) {
      // lora=rank/alpha/targets, then /fp8 where the frozen base is stored in FP8.
      String[] l = finetune.substring("lora=".length()).split("/", 4);
      io.meshplan.model.Lora lora = io.meshplan.model.Lora.of(AsciiDigits.parseInt(l[0]),
          AsciiDigits.parseDecimal(l[1]), l[2], m.arch().mlp().gated());
      out = out.withLora(l.length < 4 ? lora : lora.withBase(io.meshplan.model.Lora.Base
          .parse(l[3]).orElseThrow(() -> new IllegalStateException("row " + r.get("model")
              + ": unknown LoRA base " + l[3]))));
    } else if (finetune.equals("full/fp8")) {
      // Every weight trained, the block projections kept in FP8 (Megatron-LM's
      // --fp8-param-gather).
      out = out.withLora(io.meshplan.model.Lora.FP8_WEIGHTS);
    } else if (!finetune.equals("full")) {
      throw new IllegalStateException("row " + r.get("model") + ": unknown fine-tuning "
          + finetune);
    }
    String packing = r.optional("packing").orElse("none");
    if (packing.startsWith("mean=")) {
      out = out.withPacking(io.meshplan.model.Packing.meanLength(
          AsciiDigits.parseInt(packing.substring("mean=".length()))));
    } else if (!packing.equals("none")) {
      throw new IllegalStateException("row " + r.get("model") + ": unknown packing " + packing);
    }
    return out;
  }

  /**
   * A recipe row's model as its stack built it: a file with an {@code mtp} column says where the
   * stack built no multi-token-prediction module ({@code none}) though the preset has one, or
   * how many depths of the preset's module it trained ({@code N}), whether they share one
   * module's weights ({@code N/repeated}: Megatron-Core's {@code mtp_use_repeated_layer}), and
   * for a hybrid the module's layers where the recipe gives them ({@code N/repeated/*E}:
   * Megatron-Core's {@code mtp_hybrid_override_pattern}), on a preset with or without a module.
   */
  private static ModelSpec predictionModules(ModelSpec m, Row r) {
    String mtp = r.optional("mtp").orElse("preset");
    if (mtp.equals("preset")) {
      return m;
    }
    if (mtp.equals("none")) {
      return m.withArchitecture(m.arch().withMtp(0));
    }
    java.util.regex.Matcher d = java.util.regex.Pattern.compile(
        "([1-9])(/repeated)?(?:/([-ME*]{1,64}))?").matcher(mtp);
    if (!d.matches()
        || (d.group(3) == null ? m.arch().mtpDepth() == 0 : !m.arch().hybrid().on())) {
      throw new IllegalStateException("row " + r.get("model") + ": unknown mtp " + mtp);
    }
    int depth = d.group(1).charAt(0) - '0';
    io.meshplan.model.Architecture a = d.group(3) == null ? m.arch().withMtp(depth)
        : m.arch().withHybrid(m.arch().hybrid().withMtp(d.group(3)), depth);
    return m.withArchitecture(a.withMtpShared(d.group(2) != null));
  }

  /**
   * A recipe row's cluster: its {@code cluster} column where the file has one (Blackwell's
   * rows), else DGX H100 nodes.
   */
  private static ClusterSpec cluster(Row r) {
    int gpus = r.integer("gpus");
    ClusterSpec c = ClusterSpec.parse(r.optional("cluster")
        .orElse(gpus / 8 + "x8:h100-80gb:ib-ndr400"));
    if (c.gpuCount() != gpus) {
      throw new IllegalStateException("row " + r.get("model") + ": cluster "
          + c.toShortString() + " is not " + gpus + " GPUs");
    }
    return c;
  }

  /** The data rows of a shipped CSV file: no comments, no header, quoted commas kept. */
  private static List<String[]> rows(String resource) {
    List<String[]> lines = lines(resource);
    return lines.subList(1, lines.size());
  }

  /**
   * The data rows of a shipped CSV file, each with the file's header so that its columns are
   * read by name; the columns a file lacks (the later files add some) read as absent.
   */
  private static List<Row> namedRows(String resource) {
    List<String[]> lines = lines(resource);
    List<String> header = List.of(lines.get(0));
    return lines.subList(1, lines.size()).stream().map(f -> new Row(header, f)).toList();
  }

  /** One data row of a recipe file, its values read by the header's column names. */
  private record Row(List<String> header, String[] values) {
    /** The value of a column every recipe file has. */
    String get(String column) {
      return optional(column).orElseThrow(
          () -> new IllegalStateException("row " + values[1] + ": no column " + column));
    }

    int integer(String column) {
      return AsciiDigits.parseInt(get(column));
    }

    /** The value of a column, if the row's file has it. */
    Optional<String> optional(String column) {
      int i = header.indexOf(column);
      return i < 0 || i >= values.length ? Optional.empty() : Optional.of(values[i]);
    }
  }

  /** The header and data lines of a shipped CSV file: no comments, quoted commas kept. */
  private static List<String[]> lines(String resource) {
    List<String[]> out = new ArrayList<>();
    try (InputStream in = PublicFolds.class.getResourceAsStream(DIR + resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + DIR + resource);
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.startsWith("#") && !line.isBlank()) {
          out.add(line.split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", -1));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
