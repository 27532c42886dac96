package io.meshplan.export;

import io.meshplan.framework.MegatronArg;
import io.meshplan.graph.DType;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.Architecture;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Megatron-LM arguments (Shoeybi et al. 2019; Narayanan et al., SC'21; Korthikanti et al.,
 * MLSys'23) for a parallel configuration, written as a bash array {@code MEGATRON_ARGS} and a
 * function {@code megatron_launch} that runs {@code torchrun ... pretrain_gpt.py
 * "${MEGATRON_ARGS[@]}"} ({@code pretrain_hybrid.py} for a hybrid model, whose layer pattern
 * states its stages: {@link MegatronHybridArgs}) with the data, tokenizer, learning rate,
 * iterations and checkpoints the user names in variables. The data-parallel size is not
 * an argument: Megatron-LM derives it as world size / (tensor * pipeline), so the launcher's world
 * size must be the configuration's GPU count.
 *
 * <p>ZeRO stages: 1 is {@code --use-distributed-optimizer}; 3 is Megatron-FSDP with full sharding,
 * {@code --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --ckpt-format
 * fsdp_dtensor --init-model-with-meta-device}, the recipe of Megatron-LM's parallelism guide
 * (https://github.com/NVIDIA/Megatron-LM/blob/main/docs/user-guide/parallelism-guide.md, "Megatron
 * Fully-Sharded Data Parallel"; the flags are defined and checked in {@code
 * megatron/training/arguments.py}, which requires {@code --ckpt-format fsdp_dtensor} and {@code
 * CUDA_DEVICE_MAX_CONNECTIONS} unset or above 1, and refuses pipeline parallelism only for the
 * other FSDP, {@code --use-torch-fsdp2}). Megatron-FSDP exists from Megatron-Core 0.14,
 * whose default sharding strategy was still {@code no_shard}, hence the explicit strategy. With
 * sharded gradients Megatron-FSDP reduce-scatters every microbatch's gradients even inside the
 * pipeline schedules' {@code no_sync} ({@code megatron_fsdp.py}: "For grads shard mode there will
 * actually always be gradient sync happening"), which is how the simulator prices ZeRO-3, so
 * ZeRO-3 is written with pipeline parallelism too; Megatron-LM's own functional tests run
 * Megatron-FSDP with a pipeline size of 1 only. ZeRO-2 is Megatron-FSDP with the strategy {@code
 * optim_grads} (one of {@code --data-parallel-sharding-strategy}'s choices {@code no_shard, optim,
 * optim_grads, optim_grads_params} in {@code arguments.py}): gradients and optimizer state sharded,
 * weights replicated, gradients reduce-scattered every microbatch as in grads shard mode above.
 *
 * <p>Uneven stages are {@code --decoder-first-pipeline-num-layers} and {@code
 * --decoder-last-pipeline-num-layers} ({@code megatron/training/arguments.py}); with virtual
 * stages Megatron-LM takes them only beside {@code --num-virtual-stages-per-pipeline-rank}.
 *
 * <p>The file also sets {@code CUDA_DEVICE_MAX_CONNECTIONS} as {@link MegatronConnections} says
 * Megatron-LM's {@code validate_args} requires.
 */
public final class MegatronArgs implements FrameworkWriter {
  /** Creates the writer; it holds no state. */
  public MegatronArgs() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    Optional<String> loss = input.fusedLoss("Megatron-LM converts the logits to fp32 for the"
        + " cross-entropy loss (its --cross-entropy-loss-fusion runs the same fp32 tensors, and"
        + " validate_args refuses Transformer Engine's fused kernel, --cross-entropy-fusion-impl"
        + " te)");
    if (loss.isPresent()) {
      return loss;
    }
    Optional<String> op = input.perOpRecompute("Megatron-LM (--recompute-granularity full or "
        + "selective with --recompute-modules)");
    if (op.isPresent()) {
      return op;
    }
    ModelSpec m = input.model();
    if (m.family() == ModelSpec.Family.ALPA_MLP) {
      return Optional.of("Megatron-LM trains transformer language models; " + m.name()
          + " (Alpa's MLP test model) is not one");
    }
    if (m.arch().mlp() == Architecture.Mlp.RELU) {
      return Optional.of("Megatron-LM has no ReLU MLP (it has GeLU, SwiGLU and squared ReLU);"
          + " " + m.name() + " uses ReLU");
    }
    if (m.arch().positions() == Architecture.Positions.LEARNED
        && m.arch().positionRows() < m.seq()) {
      return Optional.of("Megatron-LM's learned position table needs a row per position; "
          + m.name() + " has " + m.arch().positionRows() + " rows for " + m.seq()
          + " positions");
    }
    Optional<String> vocab = MegatronModelArgs.vocabMissing(input);
    if (vocab.isPresent()) {
      return vocab;
    }
    if (input.config().zeroStage() >= 2 && !input.overlaps().fsdpPrefetch()) {
      // megatron_fsdp.py:327-333 (megatron/core/distributed/fsdp/src/megatron_fsdp/): with
      // gradients sharded it sets overlap_grad_reduce, and overlap_param_gather with weights too.
      return Optional.of("Megatron-FSDP always overlaps its weight gathers and gradient"
          + " reduce-scatters with compute when it shards gradients (megatron_fsdp.py:327-333);"
          + " the plan prices them exposed (--no-fsdp-prefetch)");
    }
    if (input.config().shardGroup() > 0 && !input.overlaps().hsdpStepReduce()) {
      // megatron_fsdp.py: outer_fsdp_group_grad_reduce only when is_last_microbatch.
      return Optional.of("Megatron-FSDP all-reduces its hybrid sharding's replicas once per step,"
          + " on the last microbatch (megatron_fsdp.py, outer_fsdp_group_grad_reduce); the plan"
          + " prices it every microbatch, as FSDP2 does (plan it with --hsdp-step-reduce)");
    }
    if (input.gpipe()) {
      // megatron/core/pipeline_parallel/schedules.py get_forward_backward_func: no pipelining,
      // 1F1B, or interleaved 1F1B; nothing runs every forward before the first backward.
      return Optional.of("Megatron-LM has no GPipe schedule (its pipeline schedules are 1F1B and"
          + " interleaved 1F1B)");
    }
    Optional<String> hybrid = MegatronHybridArgs.missingModel(m);
    return hybrid.isPresent() ? hybrid : MegatronExpertArgs.missing(input);
  }

  /**
   * The nearest expressible input: the same configuration under 1F1B instead of GPipe, with the
   * fp32 loss, with Megatron-FSDP's overlapped gathers under ZeRO-2/3, with expert tensor-parallel size 1 when the experts have biases, and with full
   * recomputation instead of torchtitan's per-op mode (which keeps more, so what fits with it
   * fits with full).
   */
  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ExportInput oneFOneB = input.withGpipe(false)
        .withOverlaps(input.overlaps().withLossFusion(false).withFsdpPrefetch(
            input.overlaps().fsdpPrefetch() || input.config().zeroStage() >= 2)
            .withHsdpStepReduce(input.overlaps().hsdpStepReduce()
                || input.config().shardGroup() > 0))
        .withConfig(input.config().withRecompute(input.config().recompute().layerwise()));
    if (input.model().arch().biases() && input.config().expertTensorParallel() > 1) {
      oneFOneB = oneFOneB.withConfig(oneFOneB.config().withExperts(
          oneFOneB.config().expertParallel(), 1));
    }
    return missing(oneFOneB).isEmpty() ? Optional.of(oneFOneB) : Optional.empty();
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    StringBuilder sb = new StringBuilder(header(input));
    sb.append(MegatronConnections.of(input).bashLines());
    sb.append("# shellcheck disable=SC2034\n");
    sb.append("MEGATRON_ARGS=(\n");
    for (List<String> a : arguments(input)) {
      sb.append("  ").append(ShellQuote.join(a)).append('\n');
    }
    sb.append(")\n");
    sb.append(launcher(input.cluster(),
        input.bound().config().iterations(input.model().seq()),
        MegatronHybridArgs.script(input.model())));
    return sb.toString();
  }

  /** The comment lines that open the file: shebang, configuration, how to run it. */
  private static String header(ExportInput input) {
    ParallelConfig c = input.config();
    StringBuilder sb = new StringBuilder("#!/usr/bin/env bash\n");
    sb.append("# Megatron-LM arguments written by meshplan export\n");
    sb.append("# model ").append(ShellQuote.commentText(input.model().name())).append(" on ")
        .append(input.cluster().toShortString()).append(": tensor ").append(c.tensorParallel())
        .append(" x pipeline ").append(c.pipelineParallel())
        .append(c.contextParallel() > 1 ? " x context " + c.contextParallel() : "")
        .append(" x data ").append(c.dataParallel()).append(" = ").append(io.meshplan.util.Words.count(c.gpus(), "GPU")).append(",\n# ")
        .append(io.meshplan.util.Words.count(c.microbatches(), "microbatch")).append(" of ").append(c.microBatchSize())
        .append(" per pipeline per iteration\n");
    sb.append("# Megatron-LM derives the data-parallel size from the world size: launch exactly ")
        .append(c.gpus()).append(" processes.\n");
    if (input.model().arch().moe().routed()) {
      sb.append("# ").append(input.model().arch().moe().experts()).append(" experts: expert ")
          .append(c.expertParallel()).append(" x expert tensor ").append(c.expertTensorParallel())
          .append(" per ").append(c.tensorParallel() * c.dataParallel() * c.contextParallel())
          .append(" GPUs of a pipeline stage.\n");
    }
    sb.append(blockLines(input.model()));
    if (c.zeroStage() >= 2) {
      sb.append("# ZeRO-").append(c.zeroStage()).append(" is Megatron-FSDP.\n");
    }
    sb.append("# The vocabulary is the ").append(input.model().vocab())
        .append(" rows priced (--padded-vocab-size): use a tokenizer of at most as many.\n");
    sb.append(rocmNote(input));
    int nodes = input.cluster().hosts();
    sb.append(nodes == 1 ? "# Run on the node" : "# Run on each of the " + nodes + " nodes")
        .append(": set the variables megatron_launch checks, then bash this file\n# (or source it"
            + " and call megatron_launch); further arguments go to ")
        .append(MegatronHybridArgs.script(input.model())).append(".\n");
    return sb.toString();
  }

  /** The header's lines on dense blocks among expert blocks and multi-token prediction. */
  private static String blockLines(ModelSpec m) {
    StringBuilder sb = new StringBuilder();
    int dense = m.denseBlocks();
    if (dense > 0) {
      sb.append("# ").append(dense).append(" of the ").append(m.layers())
          .append(" blocks have a dense MLP of ").append(m.arch().moe().denseFfn())
          .append(" (--moe-layer-freq).\n");
    }
    if (m.arch().hybrid().on()) {
      sb.append("# A hybrid model: --hybrid-layer-pattern gives each layer (M Mamba-2, G Gated"
          + " DeltaNet,\n# * attention, - MLP, E experts) and each model chunk (| between"
          + " chunks).\n");
    }
    int mtp = m.arch().mtpDepth();
    if (mtp > 0) {
      sb.append("# ").append(io.meshplan.util.Words.count(mtp,
          "multi-token prediction module")).append(" on the last pipeline stage.\n");
    }
    return sb.toString();
  }

  /**
   * The launcher: a bash function that checks the variables the user must set, each refused with
   * one line, then starts one process per GPU with {@code torchrun}'s static rendezvous (node 0
   * at {@code MASTER_ADDR}); run when the file is executed rather than sourced. The data, tokenizer,
   * learning-rate, iteration and checkpoint arguments are Megatron-LM's ({@code
   * megatron/training/arguments.py} and {@code megatron/training/config/training_config.py},
   * restated in {@code MegatronConformanceTest}).
   */
  private static String launcher(io.meshplan.cluster.ClusterSpec cluster,
      java.util.OptionalLong iterations, String script) {
    return "\nmegatron_launch() {\n"
        + "  : \"${MEGATRON_LM:?set MEGATRON_LM to your Megatron-LM checkout (it holds "
        + script + ")}\"\n"
        + "  : \"${MASTER_ADDR:?set MASTER_ADDR to the address of node 0}\"\n"
        + "  : \"${NODE_RANK:?set NODE_RANK to the index of this node, 0 to " + (cluster.hosts() - 1)
        + "}\"\n"
        + "  : \"${TOKENIZER_MODEL:?set TOKENIZER_MODEL to a Hugging Face tokenizer name or"
        + " path}\"\n"
        + "  : \"${DATA_PATH:?set DATA_PATH to the prefix of your preprocessed .bin/.idx data}\"\n"
        + "  : \"${LR:?set LR to the peak learning rate}\"\n"
        + (iterations.isPresent() ? "  : \"${TRAIN_ITERS:=" + iterations.getAsLong()
            + "}\"  # --train-tokens over the global batch's tokens\n"
            : "  : \"${TRAIN_ITERS:?set TRAIN_ITERS to the number of training iterations}\"\n")
        + "  : \"${CHECKPOINT_DIR:?set CHECKPOINT_DIR to where checkpoints are saved and"
        + " loaded}\"\n"
        + "  : \"${SAVE_INTERVAL:?set SAVE_INTERVAL to the iterations between checkpoints}\"\n"
        + "  torchrun --nnodes " + cluster.hosts() + " --nproc-per-node " + cluster.hostGpus()
        + " --node-rank \"$NODE_RANK\" \\\n"
        + "    --master-addr \"$MASTER_ADDR\" --master-port \"${MASTER_PORT:-29500}\" \\\n"
        + "    \"$MEGATRON_LM/" + script + "\" \"${MEGATRON_ARGS[@]}\" \\\n"
        + "    --tokenizer-type HuggingFaceTokenizer --tokenizer-model \"$TOKENIZER_MODEL\" \\\n"
        + "    --data-path \"$DATA_PATH\" --lr \"$LR\" --train-iters \"$TRAIN_ITERS\" \\\n"
        + "    --save \"$CHECKPOINT_DIR\" --load \"$CHECKPOINT_DIR\""
        + " --save-interval \"$SAVE_INTERVAL\" \"$@\"\n"
        + "}\n\n"
        + "if [[ \"${BASH_SOURCE[0]}\" == \"$0\" ]]; then\n"
        + "  megatron_launch \"$@\"\n"
        + "fi\n";
  }

  /**
   * The arguments, each option with its values, in a fixed order: parallelism, batch, memory
   * options, model dimensions, architecture, precision.
   *
   * @param input an expressible input
   * @return the arguments
   */
  /**
   * The overlap flags that apply to the configuration (Megatron-LM's {@code validate_args}
   * refuses {@code --tp-comm-overlap} without sequence parallelism and {@code
   * --overlap-param-gather} without the distributed optimizer and {@code --overlap-grad-reduce};
   * gradient-accumulation fusion is its default).
   */
  private static void overlaps(ExportInput input, List<List<String>> a) {
    input.config().megatronOverlapFlags(input.overlaps()).forEach(f -> a.add(List.of(f)));
  }

  public static List<List<String>> arguments(ExportInput input) {
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    List<List<String>> a = new ArrayList<>();
    a.add(List.of(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE.flag(), Integer.toString(c.tensorParallel())));
    a.add(List.of(MegatronArg.PIPELINE_MODEL_PARALLEL_SIZE.flag(), Integer.toString(c.pipelineParallel())));
    if (m.arch().hybrid().on()) {
      // The pattern's segments state every stage and chunk (MegatronHybridArgs).
      a.addAll(MegatronHybridArgs.layers(input));
    } else {
      pipelineStages(c, m, a);
    }
    if (c.contextParallel() > 1) {
      // Megatron-LM's data-parallel size is world / (TP x PP x CP) (arguments.py:424-448).
      a.add(List.of(MegatronArg.CONTEXT_PARALLEL_SIZE.flag(), Integer.toString(c.contextParallel())));
      a.add(List.of(MegatronArg.CP_COMM_TYPE.flag(), c.cpExchange().word()));
    }
    a.add(List.of(MegatronArg.MICRO_BATCH_SIZE.flag(), Integer.toString(c.microBatchSize())));
    a.add(List.of(MegatronArg.GLOBAL_BATCH_SIZE.flag(), Integer.toString(c.globalBatchSize())));
    if (c.sequenceParallel()) {
      a.add(List.of(MegatronArg.SEQUENCE_PARALLEL.flag()));
    }
    recompute(c, a);
    overlaps(input, a);
    sharding(c, a);
    if (!m.arch().hybrid().on()) {
      // A hybrid's layers are its pattern's (arguments.py:787-797).
      a.add(List.of(MegatronArg.NUM_LAYERS.flag(), Integer.toString(m.layers())));
    }
    a.add(List.of(MegatronArg.HIDDEN_SIZE.flag(), Integer.toString(m.hidden())));
    a.add(List.of(MegatronArg.FFN_HIDDEN_SIZE.flag(), Integer.toString(MegatronDeepseekArgs.denseFfn(m))));
    a.add(List.of(MegatronArg.NUM_ATTENTION_HEADS.flag(), Integer.toString(m.heads())));
    a.add(List.of(MegatronArg.SEQ_LENGTH.flag(), Integer.toString(m.seq())));
    if (m.packing().packed()) {
      // Packed documents: the dataloader hands the attention kernel each document's bounds
      // (cu_seqlens, arguments.py:3326) and restarts positions at each (3321).
      a.add(List.of(MegatronArg.DATALOADER_INTER_DOCUMENT_MASKING.flag()));
      a.add(List.of(MegatronArg.RESET_POSITION_IDS.flag()));
    }
    a.add(List.of(MegatronArg.MAX_POSITION_EMBEDDINGS.flag(), Integer.toString(
        m.arch().positions() == Architecture.Positions.LEARNED ? m.arch().positionRows()
            : m.seq())));
    a.addAll(MegatronModelArgs.arguments(m));
    a.addAll(MegatronExpertArgs.arguments(input));
    a.addAll(MegatronHybridArgs.mixers(m));
    a.addAll(MegatronDeepseekArgs.mtp(m));
    // Megatron-Core's AttnBackend (flash, fused, unfused, local, auto; default auto): the kernel
    // the plan was priced with.
    a.add(List.of(MegatronArg.ATTENTION_BACKEND.flag(), input.attention().label()));
    precision(m, a);
    return a;
  }

  /**
   * The optimizer-state sharding: the distributed optimizer under ZeRO-1, Megatron-FSDP under
   * ZeRO-2 and ZeRO-3 (with its replicas under hybrid sharding).
   */
  private static void sharding(ParallelConfig c, List<List<String>> a) {
    if (c.zeroStage() == 1) {
      a.add(List.of(MegatronArg.USE_DISTRIBUTED_OPTIMIZER.flag()));
    } else if (c.zeroStage() >= 2) {
      // Megatron-FSDP v1 runs on the distributed optimizer and sets it when it is missing.
      a.add(List.of(MegatronArg.USE_DISTRIBUTED_OPTIMIZER.flag()));
      a.add(List.of(MegatronArg.USE_MEGATRON_FSDP.flag()));
      a.add(List.of(MegatronArg.DATA_PARALLEL_SHARDING_STRATEGY.flag(),
          c.zeroStage() == 2 ? "optim_grads" : "optim_grads_params"));
      a.add(List.of(MegatronArg.CKPT_FORMAT.flag(), "fsdp_dtensor"));
      a.add(List.of(MegatronArg.INIT_MODEL_WITH_META_DEVICE.flag()));
      if (c.shardGroup() > 0) {
        // Hybrid sharding: FSDP inside dp / instances consecutive ranks (parallel_state.py,
        // intra_partial_data_parallel_size), the instances replicas (mcore_fsdp_adapter.py:
        // enable_hsdp when num_distributed_optimizer_instances > 1).
        a.add(List.of(MegatronArg.NUM_DISTRIBUTED_OPTIMIZER_INSTANCES.flag(),
            Integer.toString(c.shardReplicas())));
      }
    }
  }

  /** The recomputation: selective with its modules unless they are the default, or full. */
  private static void recompute(ParallelConfig c, List<List<String>> a) {
    if (c.recompute() == Recompute.SELECTIVE) {
      a.add(List.of(MegatronArg.RECOMPUTE_GRANULARITY.flag(), "selective"));
      if (!c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT)) {
        // TransformerConfig.recompute_modules is Optional[List[str]]: argument_utils.py makes it
        // --recompute-modules with nargs '+', the module names one after another.
        List<String> modules = new java.util.ArrayList<>(List.of(MegatronArg.RECOMPUTE_MODULES.flag()));
        modules.addAll(List.of(io.meshplan.model.RecomputeModule.labels(c.recomputeModules())
            .split(",")));
        a.add(modules);
      }
    } else if (c.recompute() == Recompute.FULL && c.recomputeLayers() > 0) {
      // The first N layers of each model chunk recomputed, the rest kept (TransformerBlock's
      // block method).
      a.add(List.of(MegatronArg.RECOMPUTE_GRANULARITY.flag(), "full"));
      a.add(List.of(MegatronArg.RECOMPUTE_METHOD.flag(), "block"));
      a.add(List.of(MegatronArg.RECOMPUTE_NUM_LAYERS.flag(),
          Integer.toString(c.recomputeLayers())));
    } else if (c.recompute() == Recompute.FULL) {
      // Full recompute of every layer: keep each layer's input only (Korthikanti et al., sec. 5).
      a.add(List.of(MegatronArg.RECOMPUTE_GRANULARITY.flag(), "full"));
      a.add(List.of(MegatronArg.RECOMPUTE_METHOD.flag(), "uniform"));
      a.add(List.of(MegatronArg.RECOMPUTE_NUM_LAYERS.flag(), "1"));
    }
  }

  /** Virtual stages, uneven first and last stages, and the embedding and loss in the split. */
  private static void pipelineStages(ParallelConfig c, ModelSpec m, List<List<String>> a) {
    if (c.split() instanceof io.meshplan.plan.PipelineLayout) {
      // arguments.py: the layout states the chunks; no other virtual-stage argument may be set.
      a.addAll(c.split().megatronArgs());
      return;
    }
    if (c.virtualStages() > 1 && c.unevenStages()) {
      // arguments.py refuses uneven stages with --num-layers-per-virtual-pipeline-stage
      // ("please use --num-virtual-stages-per-pipeline-rank ... when enable uneven pipeline").
      a.add(List.of(MegatronArg.NUM_VIRTUAL_STAGES_PER_PIPELINE_RANK.flag(),
          Integer.toString(c.virtualStages())));
    } else if (c.virtualStages() > 1) {
      a.add(List.of(MegatronArg.NUM_LAYERS_PER_VIRTUAL_PIPELINE_STAGE.flag(),
          Integer.toString(m.layers() / (c.pipelineParallel() * c.virtualStages()))));
    }
    if (c.firstStageLayers() > 0) {
      a.add(List.of(MegatronArg.DECODER_FIRST_PIPELINE_NUM_LAYERS.flag(),
          Integer.toString(c.firstStageLayers())));
    }
    if (c.lastStageLayers() > 0) {
      a.add(List.of(MegatronArg.DECODER_LAST_PIPELINE_NUM_LAYERS.flag(), Integer.toString(c.lastStageLayers())));
    }
    a.addAll(c.split().megatronArgs());
  }

  /** The training precision. */
  private static void precision(ModelSpec m, List<List<String>> a) {
    if (Fp8Training.on(m.dtype())) {
      // FP8 needs TE's layers, Megatron's default implementation.
      a.add(List.of(MegatronArg.BF16.flag()));
      a.add(List.of(MegatronArg.TRANSFORMER_IMPL.flag(), "transformer_engine"));
      if (m.fp8Scaling() == io.meshplan.model.Fp8Scaling.NVFP4) {
        // NVFP4 is Megatron-LM's FP4 mode, which refuses an FP8 format beside it
        // (arguments.py at d98e8a6: "--fp4-format and --fp8-format cannot be used
        // simultaneously"); Megatron-Bridge's bf16_with_nvfp4_mixed sets fp4 "e2m1", fp4_recipe
        // "nvfp4" (training/mixed_precision.py at 067f987).
        a.add(List.of(MegatronArg.FP4_FORMAT.flag(), "e2m1"));
        a.add(List.of(MegatronArg.FP4_RECIPE.flag(), "nvfp4"));
        return;
      }
      // MXFP8 in E4M3 throughout, as Megatron-Bridge's bf16_with_mxfp8_mixed sets it
      // (training/mixed_precision.py at 067f987: fp8 "e4m3", fp8_recipe "mxfp8"); the
      // per-tensor recipes in the hybrid format (E5M2 gradients).
      a.add(List.of(MegatronArg.FP8_FORMAT.flag(),
          m.fp8Scaling() == io.meshplan.model.Fp8Scaling.MXFP8 ? "e4m3" : "hybrid"));
      a.add(List.of(MegatronArg.FP8_RECIPE.flag(), m.fp8Scaling().word()));
      if (m.lora().fp8Weights()) {
        // The weights kept in FP8 and gathered so by the distributed optimizer, which
        // validate_args requires beside it (arguments.py at d98e8a6, lines 1095-1097).
        a.add(List.of(MegatronArg.FP8_PARAM_GATHER.flag()));
      }
      if (m.fp8Scaling() == io.meshplan.model.Fp8Scaling.DELAYED) {
        // Transformer Engine's DelayedScaling with its own defaults (Megatron-Core's are an amax
        // history of 1, most_recent); current scaling keeps no history.
        a.add(List.of(MegatronArg.FP8_AMAX_HISTORY_LEN.flag(), "1024"));
        a.add(List.of(MegatronArg.FP8_AMAX_COMPUTE_ALGO.flag(), "max"));
      }
    } else if (m.dtype() == DType.BF16) {
      a.add(List.of(MegatronArg.BF16.flag()));
    } else if (m.dtype() == DType.F16) {
      a.add(List.of(MegatronArg.FP16.flag()));
    }
  }



  /**
   * On AMD GPUs, where ROCm's fork of Megatron-LM differs from the upstream Megatron-LM these
   * arguments are checked against: at ROCm/Megatron-LM 2b855bafe238ab0949d49609131d2da87fb09000
   * (its default branch), {@code megatron/training/arguments.py} defines neither {@code
   * --attention-backend} nor {@code --padded-vocab-size}, which this file passes; every other
   * argument it writes is defined there, and that fork asserts {@code
   * CUDA_DEVICE_MAX_CONNECTIONS=1} with sequence parallelism on any GPU, which the file sets
   * whenever it uses tensor parallelism on a GPU before Blackwell (CDNA reports capability 9).
   */
  static String rocmNote(ExportInput input) {
    if (input.cluster().gpu().architecture().vendor()
        != io.meshplan.cluster.Architecture.Vendor.AMD) {
      return "";
    }
    return "# AMD GPUs: these are upstream Megatron-LM's arguments; ROCm's fork (ROCm/Megatron-LM at"
        + " 2b855baf)\n# lacks --attention-backend and --padded-vocab-size.\n";
  }
}
