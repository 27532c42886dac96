package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A torchtitan config in the form of its main branch ({@link TorchtitanMain}): a Python module
 * with one function returning a {@code Trainer.Config}, loaded with {@code --module
 * meshplan_torchtitan --config meshplan_plan}, and the launch command in its header. The function
 * starts from the recipe of the llama3 flavor with the plan's dimensions (its loss, optimizer,
 * dataset, checkpoint and {@code hf_assets_path}, the placeholders a user edits) and sets the
 * parallelism, batch, precision and activation checkpointing the plan was simulated with.
 *
 * <p>What torchtitan can express is the same on main as in v0.2.2 (same flavors, same FSDP/DDP
 * composition under and without a pipeline, bf16 or f32 only), so {@link #missing} and {@link
 * #nearest} are {@link TorchtitanToml}'s, with main's one extra rule: a microbatch's tokens divide
 * by the tensor degree under sequence parallelism. The batch is stated in tokens, as main counts
 * it: {@code num_tokens_per_microbatch_per_dp_rank} = micro batch x sequence, {@code
 * num_pp_microbatches} = the pipeline's microbatches (the rank's whole share under a pipeline, so
 * no gradient accumulation there), {@code num_tokens_per_train_step} = global batch x sequence,
 * so that torchtitan's accumulation ({@link TorchtitanMain#accumulation}) is the plan's.
 *
 * <p>Context parallelism is written as {@code context_parallel_degree} in the form {@link
 * TorchtitanContext} states (keys and values all-gathered, head-tail balance, FSDP over {@code
 * dp_shard x cp}), for the llama3 and Qwen3 flavors alike. The Qwen3 mixture-of-experts flavors
 * ({@link TorchtitanQwen3Moe}) are written from the qwen3 recipe with {@code
 * expert_parallel_degree}, and so is DeepSeek-V3 from its 671B recipe ({@link
 * TorchtitanDeepseekV3}), with its multi-token prediction modules and their loss; main has no
 * other model meshplan writes experts for.
 */
public final class TorchtitanPython implements FrameworkWriter {
  private final TorchtitanToml rules = new TorchtitanToml();

  /** Creates the writer; it holds no state. */
  public TorchtitanPython() {}

  /**
   * Whether torchtitan main has a model of this one's dimensions at all (a llama3 flavor, or
   * the Qwen3 MoE and DeepSeek-V3 flavors meshplan writes), whatever the layout.
   *
   * @param m the model
   * @return why not, or empty when it has
   */
  static Optional<String> missingModel(ModelSpec m) {
    if (expertFlavor(m)) {
      return Optional.empty();
    }
    if (m.family() == ModelSpec.Family.LLAMA && TorchtitanV022.flavor(m).isEmpty()) {
      return Optional.of("torchtitan has no flavor for " + ShellQuote.commentText(m.name())
          + ": its llama3 flavors with a recipe (8B, 70B, 405B; torchtitan "
          + TorchtitanMain.VERSION + " models/llama3/__init__.py:236-365) have other"
          + " dimensions (layers, hidden, heads, kv heads, ffn, vocab " + TorchtitanV022.VOCAB
          + "); the nearest is " + nearestFlavor(m));
    }
    return TorchtitanToml.missingModel(m);
  }

  @Override
  public Optional<String> missing(ExportInput input) {
    ModelSpec m = input.model();
    boolean experts = expertFlavor(m);
    Optional<String> lacking = missingModel(m);
    if (lacking.isEmpty()) {
      // The model's adapters: every configuration of it is refused alike.
      lacking = TorchtitanLora.missing(m);
    }
    if (lacking.isEmpty()) {
      lacking = TorchtitanNumerics.missing(m, flavorNumerics(m), TorchtitanMain.family(m)
          + " flavor " + TorchtitanMain.flavorName(m), true);
    }
    if (lacking.isEmpty()) {
      lacking = rules.missingLayout(input);
    }
    if (lacking.isEmpty()) {
      lacking = TorchtitanContext.noHeadSplit(input.config());
    }
    if (lacking.isEmpty() && experts) {
      lacking = expertsMissing(input);
    }
    if (lacking.isPresent()) {
      return lacking;
    }
    ParallelConfig c = input.config();
    int divisor = TorchtitanMain.tokenDivisor(c.tensorParallel(), c.sequenceParallel(),
        c.contextParallel());
    if ((long) c.microBatchSize() * input.model().seq() % divisor != 0) {
      return Optional.of("torchtitan (" + TorchtitanMain.VERSION + " trainer.py:296-308) needs a"
          + " microbatch's tokens (" + c.microBatchSize() + " x " + input.model().seq()
          + ") to divide by " + divisor + (c.contextParallel() > 1
              ? " (the tensor degree under sequence parallelism x 2 x the context degree)"
              : ", the tensor degree under sequence parallelism"));
    }
    return Optional.empty();
  }

  /**
   * The RoPE and norm numbers of the flavor a model is ({@link TorchtitanNumerics}).
   *
   * @param m a model with a flavor
   * @return the flavor's numbers
   */
  static io.meshplan.model.Numerics flavorNumerics(ModelSpec m) {
    if (TorchtitanDeepseekV3.matches(m)) {
      return TorchtitanNumerics.DEEPSEEK_V3;
    }
    return TorchtitanQwen3Moe.flavor(m).map(f -> f.name().equals("30B-A3B")
        ? TorchtitanNumerics.QWEN3_30B : TorchtitanNumerics.QWEN3_235B)
        .orElse(TorchtitanNumerics.LLAMA3);
  }

  /** Whether a model is one of main's mixture-of-experts flavors: Qwen3's or DeepSeek-V3's. */
  private static boolean expertFlavor(ModelSpec m) {
    return TorchtitanDeepseekV3.matches(m) || TorchtitanQwen3Moe.flavor(m).isPresent();
  }

  /** What torchtitan main cannot run of an expert flavor's input beyond the layout rules. */
  private static Optional<String> expertsMissing(ExportInput input) {
    boolean deepseek = TorchtitanDeepseekV3.matches(input.model());
    if (Fp8Training.on(input.model().dtype())) {
      return Optional.of("meshplan writes torchtitan's float8 training for its llama3 flavors"
          + " only, not for the " + (deepseek ? "DeepSeek-V3" : "Qwen3") + " experts");
    }
    int shard = shardDegree(input.config());
    return deepseek ? TorchtitanDeepseekV3.missing(input, shard)
        : TorchtitanQwen3Moe.missing(input, shard);
  }

  /** The {@code data_parallel_shard_degree} written: the replicas under FSDP, else 1. */
  private static int shardDegree(ParallelConfig c) {
    return fsdp(c) ? c.shardWidth() : 1;
  }

  /** Whether the file shards with FSDP: something to shard over, and a ZeRO stage above 0. */
  private static boolean fsdp(ParallelConfig c) {
    return TorchtitanContext.shardGroup(c) > 1 && c.zeroStage() > 0;
  }

  /**
   * The llama3 flavor whose parameter count is nearest a model's (ties: the smaller flavor), with
   * its dimensions, for the refusal of a model no flavor matches.
   */
  static String nearestFlavor(ModelSpec m) {
    TorchtitanV022.Flavor best = null;
    long bestGap = Long.MAX_VALUE;
    for (TorchtitanV022.Flavor f : TorchtitanV022.FLAVORS) {
      ModelSpec twin = new ModelSpec(f.name(), ModelSpec.Family.LLAMA, f.layers(), f.dim(),
          f.heads(), f.kvHeads(), f.ffn(), TorchtitanV022.VOCAB, m.seq(), m.batch(), m.dtype(),
          m.arch());
      long gap = Math.abs(twin.parameterCount() - m.parameterCount());
      if (gap < bestGap) {
        best = f;
        bestGap = gap;
      }
    }
    TorchtitanV022.Flavor f = java.util.Objects.requireNonNull(best);
    return "flavor " + f.name() + " (layers " + f.layers() + ", hidden " + f.dim() + ", heads "
        + f.heads() + ", kv heads " + f.kvHeads() + ", ffn " + f.ffn() + ", vocab "
        + TorchtitanV022.VOCAB + ")";
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    if (TorchtitanLora.missing(input.model()).isPresent()) {
      ExportInput adapted = input.withModel(TorchtitanLora.nearest(input.model()));
      return missing(adapted).isEmpty() ? Optional.of(adapted) : nearest(adapted);
    }
    if (!expertFlavor(input.model())) {
      return rules.nearest(input);
    }
    try {
      return rules.nearestLayout(TorchtitanExperts.nearest(input)).map(
          TorchtitanExperts::nearest);
    } catch (io.meshplan.util.InputException e) {
      // An expert tensor size the experts' width does not take.
      return Optional.empty();
    }
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    boolean fsdp = fsdp(c);
    StringBuilder sb = new StringBuilder();
    appendHeader(sb, input, fsdp);
    appendImports(sb, c, m);
    if (c.pipelineParallel() > 1) {
      sb.append("def _layers(first: int, end: int) -> list[str]:\n"
          + "    return [f\"layers.{i}\" for i in range(first, end)]\n\n\n");
    }
    sb.append("def ").append(TorchtitanMain.FUNCTION).append("() -> Trainer.Config:\n");
    sb.append("    config = ").append(TorchtitanMain.recipe(m)).append("()\n");
    String flavor = TorchtitanMain.flavorName(m);
    if (Fp8Training.on(m.dtype()) || m.lora().on()) {
      sb.append("    config.model_spec = model_registry(\n        \"").append(flavor)
          .append("\",\n        converters=[\n");
      if (Fp8Training.on(m.dtype())) {
        // torchao's tensorwise float8 Linear; the LM head stays bf16, as under Transformer
        // Engine. Quantization converters come before LoRA's (validate_converter_order).
        sb.append("            Float8LinearConverter.Config(\n"
            + "                filter_fqns=[\"lm_head\"],\n"
            + "                model_compile_enabled=(\n"
            + "                    config.compile.enable and \"model\" in"
            + " config.compile.components\n                ),\n            ),\n");
      }
      if (m.lora().on()) {
        sb.append(TorchtitanLora.converter(m));
      }
      sb.append("        ],\n    )\n");
    } else if (TorchtitanDeepseekV3.matches(m)) {
      sb.append("    config.model_spec = ").append(TorchtitanDeepseekV3.registry(m)).append('\n');
      if (m.arch().mtpDepth() > 0) {
        // config_registry.py:76-82: modules' outputs need MTPLoss, not the chunked loss.
        sb.append("    config.loss = MTPLoss.Config(global_vocab_size=decoder_vocab_size("
            + "config.model_spec))\n");
      }
    } else {
      sb.append("    config.model_spec = model_registry(\"").append(flavor).append("\")\n");
    }
    sb.append(TorchtitanNumerics.overrides(m, flavorNumerics(m)));
    TorchtitanQwen3Moe.flavor(m).filter(f -> !f.name().equals("30B-A3B")).ifPresent(f ->
        // The recipe is the 30B one's: the same tokenizer and vocabulary, another directory.
        sb.append("    config.hf_assets_path = \"").append(f.hfAssets()).append("\"\n"));
    List<String[]> fields = assignments(c, m, fsdp, input.gpipe());
    input.bound().config().iterations(m.seq())
        .ifPresent(n -> fields.add(kv("training.steps", n)));
    for (String[] kv : fields) {
      sb.append("    config.").append(kv[0]).append(" = ").append(kv[1]).append('\n');
    }
    if (input.overlaps().lossFusion()) {
      // config/configs.py (CompileConfig) and components/loss.py (_maybe_compile): the loss alone
      // compiled, its fp32 arithmetic fused by Inductor into kernels that read the bf16 logits.
      sb.append("    config.compile.enable = True\n");
      sb.append("    config.compile.components = [\"loss\"]\n");
    }
    if (c.recompute() == Recompute.SELECTIVE) {
      TorchtitanToml.SELECTIVE_NOTE.forEach(l -> sb.append("    # ").append(l).append('\n'));
    }
    sb.append("    config.activation_checkpoint = ")
        .append(checkpointClass(c.recompute()).map(n -> n + ".Config()").orElse("None"))
        .append('\n');
    sb.append("    return config\n");
    return sb.toString();
  }

  /**
   * torchtitan's activation-checkpointing class for a recomputation (distributed/
   * activation_checkpoint.py): {@code FullAC} for full, {@code SelectiveAC} (per op) for
   * torchtitan's per-op mode, none for none and for Megatron-LM's selective recomputation, which
   * recomputes nothing under torchtitan's fused attention ({@link TorchtitanToml#torchtitanMode}).
   */
  private static Optional<String> checkpointClass(Recompute r) {
    return switch (r) {
      case FULL -> Optional.of("FullAC");
      case OP -> Optional.of("SelectiveAC");
      case NONE, SELECTIVE -> Optional.empty();
      // MaxText's other policies are refused before a file is written (ExportFeature).
      default -> throw new IllegalStateException("no torchtitan class for " + r.label());
    };
  }

  /** The imports: the model family's registry and recipe, AC, float8 and the trainer. */
  private static void appendImports(StringBuilder sb, ParallelConfig c, ModelSpec m) {
    String family = TorchtitanMain.family(m);
    sb.append("from torchtitan.models.").append(family).append(" import model_registry\n");
    sb.append("from torchtitan.models.").append(family).append(".config_registry import ")
        .append(TorchtitanMain.recipe(m)).append('\n');
    checkpointClass(c.recompute()).ifPresent(n -> sb.append(
        "from torchtitan.distributed.activation_checkpoint import ").append(n).append('\n'));
    if (m.lora().on()) {
      sb.append("from torchtitan.components.lora import LoRAConverter\n");
    }
    if (Fp8Training.on(m.dtype())) {
      sb.append("from torchtitan.components.quantization import Float8LinearConverter\n");
    }
    String overrides = TorchtitanNumerics.overrides(m, flavorNumerics(m));
    if (!overrides.isEmpty()) {
      sb.append("from torchtitan.models.common import ")
          .append(overrides.contains("RoPE.Config") && overrides.contains("RMSNorm.Config")
              ? "RMSNorm, RoPE" : overrides.contains("RoPE.Config") ? "RoPE" : "RMSNorm")
          .append('\n');
    }
    if (TorchtitanDeepseekV3.matches(m) && m.arch().mtpDepth() > 0) {
      sb.append("from torchtitan.models.common.config_utils import decoder_vocab_size\n");
      sb.append("from torchtitan.models.deepseek_v3.mtp import MTPLoss\n");
    }
    sb.append("from torchtitan.trainer import Trainer\n\n\n");
  }

  /** The fields set on the recipe's config, each as its dotted name and Python literal. */
  private static List<String[]> assignments(ParallelConfig c, ModelSpec m, boolean fsdp,
      boolean gpipe) {
    List<String[]> a = new ArrayList<>();
    String p = "parallelism.";
    // Hybrid sharding: FSDP inside dp_shard, replicas across dp_replicate (HSDP).
    a.add(kv(p + "data_parallel_replicate_degree", fsdp ? c.shardReplicas() : c.dataParallel()));
    a.add(kv(p + "data_parallel_shard_degree", fsdp ? c.shardWidth() : 1));
    if (fsdp) {
      a.add(new String[] {p + "fsdp_reshard_after_forward",
          c.pipelineParallel() > 1 ? "\"never\"" : "\"always\""});
    }
    a.add(kv(p + "tensor_parallel_degree", c.tensorParallel()));
    a.add(new String[] {p + "enable_sequence_parallel", c.tensorParallel() > 1 ? "True" : "False"});
    a.add(kv(p + "context_parallel_degree", c.contextParallel()));
    if (c.contextParallel() > 1) {
      // Its default, stated: 2 x cp chunks, a head and a tail one per rank (TorchtitanContext).
      a.add(new String[] {p + "context_parallel_load_balancer", "\"headtail\""});
    }
    if (m.arch().moe().routed()) {
      a.add(kv(p + "expert_parallel_degree", c.expertParallel()));
    }
    a.add(kv(p + "pipeline_parallel_degree", c.pipelineParallel()));
    int ppMicrobatches = 1;
    if (c.pipelineParallel() > 1) {
      ppMicrobatches = c.microbatches();
      a.add(new String[] {p + "pipeline_parallel_schedule", c.virtualStages() > 1
          ? "\"Interleaved1F1B\"" : gpipe ? "\"GPipe\"" : "\"1F1B\""});
      a.add(new String[] {p + "module_fqns_per_model_part", modelParts(c, m)});
      a.add(kv(p + "num_pp_microbatches", ppMicrobatches));
    }
    if (cudaGraphsRefused(c)) {
      a.add(new String[] {"training.disable_cuda_graphs", "True"});
    }
    a.add(kv("training.num_tokens_per_microbatch_per_dp_rank",
        (long) c.microBatchSize() * m.seq()));
    a.add(kv("training.num_tokens_per_train_step", (long) c.globalBatchSize() * m.seq()));
    a.add(kv("training.max_context_length", m.seq()));
    a.add(new String[] {"training.mixed_precision_param",
        m.dtype() == io.meshplan.graph.DType.F32 ? "\"float32\"" : "\"bfloat16\""});
    return a;
  }

  /**
   * Whether torchtitan's CUDA graphs (on by default) refuse a layout, so that the file must turn
   * them off ({@code Trainer.Config._validate_cuda_graphs}, {@code trainer.py:168-199} at {@link
   * TorchtitanMain#COMMIT}): a pipeline (lines 172-176), or expert parallelism whose token
   * dispatcher synchronises with the CPU (lines 178-199). The flavors meshplan writes build
   * their dispatchers with {@code moe_comm_backend="standard"}, the all-to-all one ({@code
   * models/common/config_utils.py:416-420}), which is neither MinimalAsyncEP nor HybridEP with
   * a capacity, so every expert-parallel file turns them off, as torchtitan's own DeepSeek-V3
   * recipe does ({@code models/deepseek_v3/config_registry.py:227-231}).
   *
   * @param c the configuration
   * @return true under a pipeline or expert parallelism
   */
  static boolean cudaGraphsRefused(ParallelConfig c) {
    return c.pipelineParallel() > 1 || c.expertParallel() > 1;
  }

  private static String[] kv(String name, long value) {
    return new String[] {name, Long.toString(value)};
  }

  /**
   * Every stage's modules as {@code module_fqns_per_model_part}, one part per chunk in layer
   * order ({@link ParallelConfig#chunkLayers}), chunk {@code k} on rank {@code k mod pp} as
   * torchtitan's loop-style split places it; {@code _layers(a, b)} names layers {@code a} to
   * {@code b - 1}. Written for even stages too: the explicit parts are exactly the split the plan
   * was simulated with, with no less-layers arithmetic to get right.
   */
  static String modelParts(ParallelConfig c, ModelSpec m) {
    int[] chunks = c.chunkLayers(m.layers());
    StringBuilder sb = new StringBuilder("[\n");
    int layer = 0;
    for (int k = 0; k < chunks.length; k++) {
      sb.append("        ");
      if (k == 0) {
        sb.append("[\"tok_embeddings\"] + ");
      }
      sb.append("_layers(").append(layer).append(", ").append(layer + chunks[k]).append(')');
      layer += chunks[k];
      if (k == chunks.length - 1) {
        sb.append(" + [\"norm\", \"lm_head\"]");
      }
      sb.append(",\n");
    }
    return sb.append("    ]").toString();
  }

  /** The comment lines above the code: model, GPU split, data parallelism, launch, placeholders. */
  private static void appendHeader(StringBuilder sb, ExportInput input, boolean fsdp) {
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    ClusterSpec cl = input.cluster();
    sb.append("# torchtitan config written by meshplan export\n");
    sb.append("# model ").append(ShellQuote.commentText(m.name())).append(" on ")
        .append(cl.toShortString()).append(": torchtitan ").append(TorchtitanMain.VERSION)
        .append(", ").append(TorchtitanMain.family(m)).append(" flavor ")
        .append(TorchtitanMain.flavorName(m)).append(", from its recipe ")
        .append(TorchtitanMain.recipe(m)).append('\n');
    sb.append("# ").append(c.gpus()).append(" GPUs = ").append(TorchtitanContext.split(c))
        .append('\n');
    if (TorchtitanContext.shardGroup(c) > 1) {
      String over = c.contextParallel() > 1 ? " over " + TorchtitanContext.shardRanks(c) : "";
      sb.append(!fsdp ? "# data parallelism: DDP (ZeRO-0)\n"
          : c.pipelineParallel() > 1
              ? "# data parallelism: FSDP" + over + " under the pipeline schedule (ZeRO-1)\n"
              : c.shardGroup() > 0 ? "# data parallelism: HSDP, FSDP (ZeRO-3) inside each of "
                  + c.shardReplicas() + " groups of " + c.shardGroup() + " ranks, replicated"
                  + " across them\n"
              : "# data parallelism: FSDP" + over + " (ZeRO-3)\n");
    }
    if (m.arch().moe().routed()) {
      io.meshplan.model.MoeShape moe = m.arch().moe();
      long sparse = (long) shardDegree(c) * c.contextParallel() * c.tensorParallel();
      sb.append("# experts: ").append(moe.experts()).append(", ").append(moe.topK())
          .append(" per token, dropless; expert parallel ").append(c.expertParallel())
          .append(" within dp_shard x cp x tp = ").append(sparse).append(" GPUs, expert FSDP ")
          .append(sparse / c.expertParallel()).append('\n');
    }
    if (m.arch().mtpDepth() > 0) {
      sb.append("# multi-token prediction: ").append(m.arch().mtpDepth())
          .append(m.arch().mtpDepth() == 1 ? " module" : " modules")
          .append(" after the last block, trained with MTPLoss\n");
    }
    sb.append("# save as ").append(TorchtitanMain.MODULE).append(".py in a directory on every"
        + " node and run there, with NODE_RANK and MASTER_ADDR set:\n");
    sb.append("#   PYTHONPATH=\"$PWD:$PYTHONPATH\" torchrun --nnodes ").append(cl.hosts())
        .append(" --nproc-per-node ").append(cl.hostGpus())
        .append(" --node-rank \"$NODE_RANK\" --master-addr \"$MASTER_ADDR\"")
        .append(" --master-port 29500 -m torchtitan.train --module ")
        .append(TorchtitanMain.MODULE).append(" --config ").append(TorchtitanMain.FUNCTION)
        .append('\n');
    sb.append("# placeholders the recipe sets, to edit: hf_assets_path (scripts/"
        + "download_hf_assets.py fetches the tokenizer), dataloader, optimizer,"
        + (input.bound().config().trainTokens() > 0 ? "" : " training.steps,")
        + " checkpoint\n\n");
  }
}
