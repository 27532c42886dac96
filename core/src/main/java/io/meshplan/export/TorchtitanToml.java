package io.meshplan.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import io.meshplan.framework.TorchtitanKey;
import io.meshplan.graph.DType;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.ShellQuote;
import java.util.List;
import java.util.Optional;

/**
 * A torchtitan job TOML ({@code [model]}, {@code [parallelism]}, {@code [training]}, {@code
 * [checkpoint]}, {@code [activation_checkpoint]}) for a parallel configuration, in the field
 * names of torchtitan's release v0.2.2 ({@code torchtitan/config/job_config.py}; its main branch
 * has since replaced the TOML job config with a Python one), checked against that release's
 * rules as {@link TorchtitanV022} restates them: the model is the llama3 flavor with its
 * dimensions (none: not expressible, and nothing is near), and a pipeline of {@code pp x vpp}
 * even stages is {@code L / (pp x vpp)} layers per stage with both less-layers 0, so that
 * torchtitan builds exactly those stages. torchtitan composes FSDP2 or DDP, tensor parallelism
 * (always with sequence parallelism on the norms and dropouts) and pipeline parallelism.
 *
 * <p>torchtitan's data parallelism is DDP ({@code data_parallel_replicate_degree}) or FSDP2
 * ({@code data_parallel_shard_degree}), as its {@code Parallelism} docstrings define them; which
 * ZeRO stage FSDP amounts to depends on the pipeline, because PyTorch's pipeline schedules ({@code
 * torch.distributed.pipelining}, the stage's {@code backward_maybe_with_nosync}) turn off FSDP's
 * resharding after backward and its gradient synchronisation until the last microbatch:
 *
 * <ul>
 *   <li>without a pipeline, FSDP over the data-parallel ranks ({@code data_parallel_shard_degree}
 *       = the data-parallel size, {@code data_parallel_replicate_degree} = 1, {@code
 *       fsdp_reshard_after_forward = "always"}, torchtitan's default there) is ZeRO-3: every
 *       microbatch gathers the weights for its forward and again for its backward and
 *       reduce-scatters its gradients (torchtitan's gradient accumulation does not skip the
 *       synchronisation), as the simulator prices ZeRO-3;
 *   <li>with a pipeline, the same FSDP with {@code fsdp_reshard_after_forward = "never"}
 *       (torchtitan's default under a pipeline) gathers the weights once and reduce-scatters the
 *       accumulated gradients once per step, and keeps the optimizer state sharded: ZeRO-1, as
 *       Megatron-LM's distributed optimizer. ZeRO-3 is not expressible with a pipeline;
 *   <li>DDP ({@code data_parallel_replicate_degree} = the data-parallel size) is ZeRO-0, which
 *       torchtitan applies only when data parallelism is the only parallelism ({@code
 *       parallelize.py}: "DDP has not supported &gt; 1D parallelism");
 *   <li>ZeRO-1 without a pipeline is not expressible: FSDP then shards weights and gradients too.
 *       Both degrees above 1 (HSDP) shards the weights within each shard group, which is no ZeRO
 *       stage the planner models.
 * </ul>
 *
 * <p>ZeRO-2 is not expressible either: torchtitan's {@code fsdp_reshard_after_forward = "never"}
 * (its {@code job_config.py}: "will disable {@code reshard_after_forward} for all forward passes")
 * keeps the gathered weights from a microbatch's forward to its backward, after which FSDP2
 * reshards them, so the next microbatch gathers them again: weights are sharded at rest, not
 * replicated as in ZeRO-2. Its nearest is the stage torchtitan has for the layout.
 *
 * <p>Context parallelism is {@code context_parallel_degree} in the form {@link TorchtitanContext}
 * states: keys and values all-gathered ({@code context_parallel_rotate_method = "allgather"}), the
 * head-tail balance, FSDP over {@code dp_shard x cp}; the ring ({@code p2p}) is not expressible and
 * its nearest is the same split all-gathered. v0.2.2 has no Qwen3 experts meshplan writes ({@link
 * Exporter} refuses mixture-of-experts models for it).
 *
 * The nearest expressible input keeps the layout and takes the ZeRO stage torchtitan has for it:
 * ZeRO-3 without a pipeline (unless ZeRO-0 can stay DDP), ZeRO-1 with one. With a data-parallel
 * size of 1 there is nothing to shard and both degrees are 1. Tensor parallelism without sequence
 * parallelism and f16 mixed precision (torchtitan's is bf16 or f32) are not expressible either;
 * the nearest of an f16 plan is its bf16 twin where the GPUs have bf16, and none on a V100.
 */
public final class TorchtitanToml implements FrameworkWriter {
  private static final TomlMapper TOML = new TomlMapper();

  /** Creates the writer; it holds no state. */
  public TorchtitanToml() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    Optional<String> lacking = missingModel(input);
    if (lacking.isEmpty()) {
      ModelSpec m = input.model();
      lacking = TorchtitanNumerics.missing(m, TorchtitanNumerics.LLAMA3, "llama3 flavor "
          + TorchtitanV022.flavor(m).orElseThrow().name(), false);
    }
    if (lacking.isEmpty()) {
      lacking = missingLayout(input);
    }
    if (lacking.isPresent()) {
      return lacking;
    }
    ParallelConfig c = input.config();
    long divisor = TorchtitanV022.seqDivisor(c.tensorParallel(), c.contextParallel());
    if (input.model().seq() % divisor != 0) {
      return Optional.of("torchtitan " + TorchtitanV022.VERSION + " needs the sequence ("
          + input.model().seq() + " tokens) to divide by tensor degree x 2 x context degree = "
          + divisor + " (models/llama3/infra/parallelize.py:69-74)");
    }
    return Optional.empty();
  }

  /**
   * Whether torchtitan has a llama3 flavor with the input's model.
   *
   * @param input the input
   * @return why not, or empty when it has
   */
  Optional<String> missingModel(ExportInput input) {
    return missingModel(input.model());
  }

  /**
   * Whether torchtitan has a llama3 flavor with a model's dimensions, whatever the layout.
   *
   * @param m the model
   * @return why not, or empty when it has
   */
  static Optional<String> missingModel(ModelSpec m) {
    if (m.family() != ModelSpec.Family.LLAMA) {
      return Optional.of("torchtitan trains transformer language models; " + m.name()
          + " is not one");
    }
    if (TorchtitanV022.flavor(m).isEmpty()) {
      return Optional.of(noFlavor(m));
    }
    return Optional.empty();
  }

  /**
   * What torchtitan, in v0.2.2 and on main alike, cannot express about an input's precision and
   * layout, for a model it has: f16, context parallelism without its all-gather, tensor without
   * sequence parallelism, and the data parallelism it does not have.
   *
   * @param input the input, whose model has a torchtitan flavor
   * @return the reason, or empty
   */
  Optional<String> missingLayout(ExportInput input) {
    ParallelConfig c = input.config();
    Optional<String> feature = missingFeature(input);
    if (feature.isPresent()) {
      return feature;
    }
    if (input.model().dtype() == DType.F16 && !hasBf16(input)) {
      return Optional.of(noF16(input));
    }
    if (TorchtitanContext.noHeadSplit(c).isPresent()) {
      return TorchtitanContext.noHeadSplit(c);
    }
    if (c.contextParallel() > 1 && !c.cpAllGather()) {
      return Optional.of(TorchtitanContext.noRing());
    }
    if (c.tensorParallel() > 1 && !c.sequenceParallel()) {
      return Optional.of("torchtitan always uses sequence parallelism with tensor parallelism;"
          + " it has no tensor parallelism without it");
    }
    if (input.model().kvHeads() % c.tensorParallel() != 0) {
      // Main raises it (models/common/decoder.py:195-199); v0.2.2's attention views each rank's
      // keys as whole heads (models/llama3/model/model.py:206-207, 253), which a split head fails.
      return Optional.of("torchtitan needs the tensor degree " + c.tensorParallel()
          + " to divide the " + input.model().kvHeads() + " key/value heads (torchtitan "
          + TorchtitanMain.VERSION + " models/common/decoder.py:195-199); it does not replicate"
          + " them");
    }
    if (c.shardGroup() > 0 && input.overlaps().hsdpStepReduce()) {
      return Optional.of("torchtitan's FSDP2 all-reduces hybrid sharding's replicas on every "
          + "microbatch; the plan prices it once per step (drop --hsdp-step-reduce)");
    }
    int shard = TorchtitanContext.shardGroup(c);
    int zero = TorchtitanContext.pricedZero(c);
    if (shard > 1 && zero == 2) {
      return Optional.of("torchtitan has no ZeRO-2: its FSDP keeps weights sharded between"
          + " microbatches even with fsdp_reshard_after_forward = \"never\" (that only skips the"
          + " reshard between a microbatch's forward and backward), so it gathers them every"
          + " microbatch");
    }
    if (shard > 1 && zero != zeroStage(c)) {
      return Optional.of(zero == 0 && c.contextParallel() > 1
          ? TorchtitanContext.noReplicas(c)
          : zero == 0
          ? "torchtitan replicates weights (DDP, ZeRO-0) only when data parallelism is its only"
              + " parallelism (\"DDP has not supported > 1D parallelism\")"
          : c.pipelineParallel() > 1
              ? "under a pipeline schedule torchtitan's FSDP keeps weights and gradients whole"
                  + " from the first microbatch to the last and shards only the optimizer state"
                  + " (ZeRO-1); it has no ZeRO-3 with pipeline parallelism"
              : "torchtitan has no optimizer-only sharding (ZeRO-1) without pipeline"
                  + " parallelism: its FSDP then shards weights and gradients too (ZeRO-3)");
    }
    if (input.model().dtype() == DType.F16) {
      return Optional.of("torchtitan's mixed_precision_param is bfloat16 or float32, not"
          + " float16 (torchtitan " + TorchtitanV022.VERSION + " config/job_config.py:282)");
    }
    return Optional.empty();
  }

  /**
   * What torchtitan lacks of an input's overlaps and recomputation: gradients reduced in bf16,
   * the expert all-to-alls under other compute, a list of recomputed modules.
   */
  private static Optional<String> missingFeature(ExportInput input) {
    ParallelConfig c = input.config();
    if (input.overlaps().bf16GradReduce()) {
      // config/configs.py (job_config.py in v0.2.2): mixed_precision_reduce: Literal["float32"].
      return Optional.of("torchtitan reduces gradients in float32 only (its "
          + "training.mixed_precision_reduce takes \"float32\"); the plan reduces them in bf16"
          + " (--grad-reduce-in-bf16)");
    }
    if (input.overlaps().moeComm()) {
      return Optional.of("torchtitan has no overlap of the expert-parallel all-to-alls with"
          + " another microbatch's compute (the plan's --overlap-moe-expert-parallel-comm,"
          + " Megatron-Core's)");
    }
    if (!c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT)) {
      return Optional.of("torchtitan's selective activation checkpointing is by op or by layer "
          + "(activation_checkpoint.selective_ac_option); it has no list of modules like "
          + "--recompute-modules " + io.meshplan.model.RecomputeModule.labels(
              c.recomputeModules()));
    }
    return Optional.empty();
  }

  /** Whether the cluster's GPUs have bf16 tensor cores (a V100 has none). */
  private static boolean hasBf16(ExportInput input) {
    return input.cluster().gpu().trainingType() == DType.BF16;
  }

  /** The one line saying torchtitan has no llama3 flavor with a model's dimensions. */
  private static String noFlavor(ModelSpec m) {
    return "torchtitan has no flavor for " + ShellQuote.commentText(m.name()) + ": its llama3"
        + " flavors (8B, 70B, 405B; torchtitan " + TorchtitanV022.VERSION
        + " models/llama3/__init__.py:51-98) have other dimensions (layers, hidden, heads, kv"
        + " heads, ffn, vocab 128256)";
  }

  /** Why an f16 plan on GPUs without bf16 has no torchtitan form. */
  private static String noF16(ExportInput input) {
    return "torchtitan's mixed_precision_param is bfloat16 or float32, not float16 (torchtitan "
        + TorchtitanV022.VERSION + " config/job_config.py:282), and the "
        + input.cluster().gpu().name() + " has no bf16: torchtitan cannot train this plan in"
        + " 16-bit precision";
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    if (input.model().family() != ModelSpec.Family.LLAMA
        || TorchtitanV022.flavor(input.model()).isEmpty()) {
      // No flavor has the model's dimensions: nothing near.
      return Optional.empty();
    }
    return nearestLayout(input);
  }

  /**
   * The nearest input of {@link #missingLayout}: bf16 for f16 where the GPUs have it, the
   * context split with its keys and values all-gathered, sequence parallelism with tensor
   * parallelism, the ZeRO stage torchtitan has for the layout, and gradients reduced in fp32;
   * even stages only.
   *
   * @param input the input, whose model has a torchtitan flavor
   * @return the input torchtitan can express, or empty when none is near
   */
  Optional<ExportInput> nearestLayout(ExportInput input) {
    if (input.model().dtype() == DType.F16 && !hasBf16(input)) {
      // f16 on a GPU without bf16: nothing near.
      return Optional.empty();
    }
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    int zero = TorchtitanContext.shardGroup(c) == 1 ? c.zeroStage() : zeroStage(c);
    ParallelConfig n = new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
        c.dataParallel(), c.virtualStages(), c.microBatchSize(), c.globalBatchSize(),
        c.recompute(), c.tensorParallel() > 1, zero, 0, 0, c.expertParallel(),
        c.expertTensorParallel(), c.contextParallel(), c.contextParallel() > 1);
    if (c.shardGroup() > 0 && zero == 3) {
      n = n.withShardGroup(c.shardGroup());
    }
    if (m.layers() % (c.pipelineParallel() * c.virtualStages()) != 0) {
      // Uneven stages that no even split replaces.
      return Optional.empty();
    }
    ModelSpec nm = m.dtype() != DType.F16 ? m : new ModelSpec(m.name(), m.family(), m.layers(),
        m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(), DType.BF16,
        m.arch());
    try {
      return Optional.of(new ExportInput(nm, input.cluster(), n, input.attention(),
          input.overlaps().withBf16GradReduce(false).withMoeComm(false)
              .withHsdpStepReduce(false), input.gpipe()));
    } catch (io.meshplan.util.InputException e) {
      // A layout the model or the cluster does not take once changed.
      return Optional.empty();
    }
  }

  /**
   * The ZeRO stage torchtitan's data parallelism has for a layout: DDP (0) when data parallelism
   * is alone and the configuration asks for no sharding, else FSDP, which is ZeRO-1 under a
   * pipeline schedule and ZeRO-3 without one.
   */
  static int zeroStage(ParallelConfig c) {
    if (c.zeroStage() == 0 && c.tensorParallel() == 1 && c.pipelineParallel() == 1
        && c.contextParallel() == 1 && c.expertParallel() == 1) {
      return 0;
    }
    return c.pipelineParallel() > 1 ? 1 : 3;
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    boolean fsdp = TorchtitanContext.shardGroup(c) > 1 && c.zeroStage() > 0;
    ObjectNode root = TOML.createObjectNode();
    putModel(root.putObject("model"), TorchtitanV022.flavor(m).orElseThrow());
    putParallelism(root.putObject("parallelism"), c, m, fsdp, input.gpipe());
    ObjectNode training = root.putObject("training");
    putTraining(training, c, m);
    input.bound().config().iterations(m.seq()).ifPresent(n -> training.put("steps", n));
    if (Fp8Training.on(m.dtype())) {
      putFloat8(root);
    }
    putCheckpoint(root.putObject("checkpoint"));
    if (input.overlaps().lossFusion()) {
      // job_config.py:721-727 and components/loss.py:33: the loss alone compiled, its fp32
      // arithmetic fused by Inductor into kernels that read the bf16 logits.
      ObjectNode compile = root.putObject("compile");
      compile.put("enable", true);
      compile.putArray("components").add("loss");
    }
    ObjectNode ac = root.putObject("activation_checkpoint");
    ac.put("mode", torchtitanMode(c.recompute()));
    if (c.recompute() == Recompute.OP) {
      // job_config.py's ActivationCheckpoint: "op" for per-op checkpointing, an integer n for
      // every nth layer (its default, "2").
      ac.put(TorchtitanKey.SELECTIVE_AC_OPTION.key(), "op");
    }
    StringBuilder sb = new StringBuilder();
    appendHeader(sb, input, fsdp);
    // One table per section, written as [name] with its scalar keys below it; the TOML library
    // writes (and quotes) every key and value.
    for (var section : root.properties()) {
      sb.append('\n').append('[').append(section.getKey()).append("]\n");
      try {
        sb.append(TOML.writeValueAsString(section.getValue()));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("cannot write TOML", e);
      }
    }
    return sb.toString();
  }

  /** The {@code [parallelism]} table: data-parallel flavour, degrees and pipeline schedule. */
  private static void putParallelism(ObjectNode p, ParallelConfig c, ModelSpec m, boolean fsdp,
      boolean gpipe) {
    // Hybrid sharding: FSDP inside dp_shard, replicas across dp_replicate (HSDP).
    p.put(TorchtitanKey.DATA_PARALLEL_REPLICATE_DEGREE.key(), fsdp ? c.shardReplicas()
        : c.dataParallel());
    p.put(TorchtitanKey.DATA_PARALLEL_SHARD_DEGREE.key(), fsdp ? c.shardWidth() : 1);
    if (fsdp) {
      p.put(TorchtitanKey.FSDP_RESHARD_AFTER_FORWARD.key(), c.pipelineParallel() > 1 ? "never" : "always");
    }
    p.put(TorchtitanKey.TENSOR_PARALLEL_DEGREE.key(), c.tensorParallel());
    p.put(TorchtitanKey.CONTEXT_PARALLEL_DEGREE.key(), c.contextParallel());
    if (c.contextParallel() > 1) {
      // The defaults, stated: 2 x cp chunks, each rank a head and a tail one (Megatron-Core's
      // causal balance), and the keys and values all-gathered (job_config.py:431, 446).
      p.put("context_parallel_load_balancer", "headtail");
      p.put(TorchtitanKey.CONTEXT_PARALLEL_ROTATE_METHOD.key(), "allgather");
    }
    p.put(TorchtitanKey.PIPELINE_PARALLEL_DEGREE.key(), c.pipelineParallel());
    if (c.pipelineParallel() > 1) {
      // PyTorch's pipelining schedule names, which torchtitan passes to get_schedule_class.
      p.put("pipeline_parallel_schedule", c.virtualStages() > 1 ? "Interleaved1F1B"
          : gpipe ? "GPipe" : "1F1B");
      if (c.unevenStages()) {
        putModuleFqns(p, c, m);
      } else {
        // Megatron's even split: the embedding and the head ride on the first and last stages
        // without taking a layer's place, so neither counts as a layer (both less-layers 0;
        // their default 1 would make ceil((L + 2) / per-stage) stages, pipeline_parallel.py:75).
        p.put("pipeline_parallel_first_stage_less_layers", 0);
        p.put("pipeline_parallel_last_stage_less_layers", 0);
        p.put("pipeline_parallel_layers_per_stage",
            m.layers() / (c.pipelineParallel() * c.virtualStages()));
      }
      p.put(TorchtitanKey.PIPELINE_PARALLEL_MICROBATCH_SIZE.key(), c.microBatchSize());
    }
  }

  /**
   * Uneven first and last stages as torchtitan v0.2.2's {@code module_fqns_per_model_part}
   * ({@code config/job_config.py:367}): one list of module names per model chunk in layer order,
   * the chunks of {@link ParallelConfig#chunkLayers}; {@code pipeline_module_split} places chunk
   * {@code k} on rank {@code k mod pp} ({@code distributed/pipeline_parallel.py:457-461}, the
   * "loop" style), as Megatron-Core does. The embedding opens the first chunk, the norm and head
   * close the last.
   */
  private static void putModuleFqns(ObjectNode p, ParallelConfig c, ModelSpec m) {
    var parts = p.putArray("module_fqns_per_model_part");
    int[] chunks = c.chunkLayers(m.layers());
    int layer = 0;
    for (int k = 0; k < chunks.length; k++) {
      var part = parts.addArray();
      if (k == 0) {
        part.add("tok_embeddings");
      }
      for (int i = 0; i < chunks[k]; i++) {
        part.add("layers." + layer++);
      }
      if (k == chunks.length - 1) {
        part.add("norm").add("output");
      }
    }
  }

  /**
   * The {@code [model]} table ({@code config/job_config.py:100-118} of torchtitan v0.2.2): the
   * llama3 flavor with the plan's dimensions and the {@code hf_assets_path} the release's own
   * train config for it names, where {@code scripts/download_hf_assets.py} puts the tokenizer.
   */
  private static void putModel(ObjectNode model, TorchtitanV022.Flavor f) {
    model.put("name", "llama3");
    model.put("flavor", f.name());
    model.put("hf_assets_path", f.hfAssets());
  }

  /**
   * torchtitan v0.2.2's float8 training ({@code torchao} {@code Float8Linear}): the {@code
   * quantize.linear.float8} model converter and its table. Its tensorwise recipe scales each
   * tensor by its current amax rather than TE's delayed history, with the same E4M3 forward and
   * E5M2 gradient operands; the LM head ({@code output}) stays bf16 as under Transformer Engine.
   * FSDP gathers the bf16 weights, as the plan priced them (torchtitan's default; its FP8
   * all-gather would halve those bytes).
   */
  private static void putFloat8(ObjectNode root) {
    ObjectNode model = root.has("model") ? (ObjectNode) root.get("model")
        : root.putObject("model");
    model.putArray("converters").add("quantize.linear.float8");
    ObjectNode f = root.putObject("quantize.linear.float8");
    f.put("recipe_name", "tensorwise");
    f.putArray("filter_fqns").add("output");
  }

  /** The {@code [training]} table: batch sizes, sequence length and precision. */
  private static void putTraining(ObjectNode t, ParallelConfig c, ModelSpec m) {
    // torchtitan accumulates gradients over global / (local * dp) steps. With a pipeline, the
    // local batch is the rank's whole share, split into microbatches by the schedule; without
    // one, the local batch is the microbatch and accumulation supplies the rest.
    t.put(TorchtitanKey.LOCAL_BATCH_SIZE.key(), c.pipelineParallel() > 1
        ? c.globalBatchSize() / c.dataParallel() : c.microBatchSize());
    t.put("global_batch_size", c.globalBatchSize());
    t.put(TorchtitanKey.SEQ_LEN.key(), m.seq());
    t.put(TorchtitanKey.MIXED_PRECISION_PARAM.key(), m.dtype() == DType.BF16 || Fp8Training.on(m.dtype())
        ? "bfloat16" : "float32");
    // Placeholders to edit, as torchtitan v0.2.2's own llama3 train configs set them
    // (models/llama3/train_configs/llama3_70b.toml:35-36; job_config.py:244, 267).
    t.put("steps", 1000);
    t.put("dataset", "c4");
  }

  /**
   * The {@code [checkpoint]} table ({@code config/job_config.py:487-519} of torchtitan v0.2.2):
   * checkpoints on, in its default folder and interval, for the user to point elsewhere.
   */
  private static void putCheckpoint(ObjectNode c) {
    c.put("enable", true);
    c.put("folder", "checkpoint");
    c.put("interval", 500);
  }

  /** The comment lines above the tables: the model, the GPU split and what DP and AC amount to. */
  private static void appendHeader(StringBuilder sb, ExportInput input, boolean fsdp) {
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    sb.append("# torchtitan job configuration written by meshplan export\n");
    sb.append("# model ").append(ShellQuote.commentText(m.name())).append(" (layers ")
        .append(m.layers()).append(", hidden ").append(m.hidden()).append(", heads ")
        .append(m.heads()).append(", kv heads ").append(m.kvHeads()).append(", ffn ")
        .append(m.ffn()).append(", vocab ").append(m.vocab()).append(") on ")
        .append(input.cluster().toShortString()).append(": torchtitan ")
        .append(TorchtitanV022.VERSION).append(" (its last TOML release), llama3 flavor ")
        .append(TorchtitanV022.flavor(m).orElseThrow().name()).append("\n");
    sb.append("# ").append(io.meshplan.util.Words.count(c.gpus(), "GPU")).append(" = ")
        .append(TorchtitanContext.split(c)).append("; launch with torchrun over all of them\n");
    int shard = TorchtitanContext.shardGroup(c);
    if (shard > 1) {
      String ranks = TorchtitanContext.shardRanks(c);
      sb.append(!fsdp ? "# data parallelism: DDP (ZeRO-0) over " + c.dataParallel()
          + " replicas\n"
          : c.pipelineParallel() > 1 ? "# data parallelism: FSDP over " + ranks
              + " under the pipeline schedule: weights gathered and gradients"
              + " reduce-scattered once per step, optimizer state sharded (ZeRO-1)\n"
          : c.shardGroup() > 0 ? "# data parallelism: HSDP, FSDP (ZeRO-3) inside each of "
              + c.shardReplicas() + " groups of " + c.shardGroup() + " ranks, the groups'"
              + " gradients all-reduced across them every microbatch\n"
          : "# data parallelism: FSDP (ZeRO-3) over " + ranks + ", weights"
              + " gathered for every microbatch's forward and backward\n");
    }
    sb.append("# placeholders to edit: [training] "
        + (input.bound().config().trainTokens() > 0 ? "" : "steps and ")
        + "dataset, [checkpoint] folder and"
        + " interval, [model] hf_assets_path (scripts/download_hf_assets.py fetches the"
        + " tokenizer)\n");
    if (c.recompute() == Recompute.SELECTIVE) {
      SELECTIVE_NOTE.forEach(l -> sb.append("# ").append(l).append('\n'));
    }
  }

  /**
   * What a plan's selective recomputation is in torchtitan's words, as a comment: none of its
   * activation checkpointing.
   */
  static final List<String> SELECTIVE_NOTE = List.of(
      "recompute selective is Megatron-LM's (the attention core), which recomputes nothing",
      "under torchtitan's fused attention: written as no activation checkpointing; torchtitan's",
      "own selective mode (per op) keeps every other matmul output and recomputes the rest,",
      "which is meshplan's --recompute op");

  /**
   * torchtitan's activation-checkpointing mode for a recomputation: {@code full} for full, {@code
   * selective} (with {@code selective_ac_option = "op"}) for torchtitan's per-op mode, and {@code
   * none} for none and for Megatron-LM's selective one. That one recomputes the attention core,
   * which torchtitan always runs as one fused kernel (scaled_dot_product_attention) keeping no
   * sequence x sequence value, so it recomputes nothing there, as meshplan prices it under fused
   * attention.
   *
   * @param r the recomputation
   * @return {@code full}, {@code selective} or {@code none}
   */
  static String torchtitanMode(Recompute r) {
    return switch (r) {
      case FULL -> "full";
      case OP -> "selective";
      case NONE, SELECTIVE -> "none";
      // MaxText's other policies are refused before a file is written (ExportFeature).
      default -> throw new IllegalStateException("no torchtitan mode for " + r.label());
    };
  }
}
