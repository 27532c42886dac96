package io.meshplan.export;

import io.meshplan.graph.DType;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.Optional;

/**
 * A Hugging Face Accelerate configuration ({@code accelerate launch --config_file}) that trains a
 * data-parallel configuration under PyTorch's FSDP2, as Accelerate reads it
 * (huggingface/accelerate@16cb6eb):
 *
 * <ul>
 *   <li>{@code src/accelerate/commands/config/config_args.py}: the file's top-level keys are the
 *       fields of {@code BaseConfig} and {@code ClusterConfig} (any other key is refused),
 *       {@code distributed_type} is required, and {@code num_processes} (every process over all
 *       machines) must be given;
 *   <li>{@code src/accelerate/commands/launch.py}: each {@code fsdp_config} key is the launcher's
 *       {@code --fsdp_*} argument of the same name;
 *   <li>{@code src/accelerate/utils/dataclasses.py} ({@code FullyShardedDataParallelPlugin}): with
 *       {@code fsdp_version} 2, {@code fsdp_reshard_after_forward} is a boolean: true frees the
 *       gathered weights after the forward (ZeRO-3), false keeps them for the backward (ZeRO-2,
 *       gradients and optimizer state sharded); {@code fsdp_activation_checkpointing} recomputes
 *       each wrapped transformer layer (full recomputation); {@code TRANSFORMER_BASED_WRAP} wraps
 *       the model's {@code _no_split_modules} ({@code utils/fsdp_utils.py}) when no class is named;
 *   <li>{@code mixed_precision} is one of {@code PrecisionType}'s {@code no}, {@code fp16}, {@code
 *       bf16}, {@code fp8}.
 * </ul>
 *
 * What the file cannot state: the batch and gradient accumulation, which the training script
 * passes to its {@code Accelerator}, are written as a comment. Accelerate's FSDP shards over the
 * data-parallel GPUs only, so tensor, pipeline, context and expert parallelism are not written.
 */
public final class AccelerateFsdp implements FrameworkWriter {
  /** Creates the writer; it holds no state. */
  public AccelerateFsdp() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    ParallelConfig c = input.config();
    if (c.tensorParallel() > 1 || c.pipelineParallel() > 1 || c.contextParallel() > 1
        || c.expertParallel() > 1) {
      return Optional.of("Accelerate's FSDP configuration shards over data-parallel GPUs only; "
          + "it has no tensor, pipeline, context or expert parallelism (tp " + c.tensorParallel()
          + ", pp " + c.pipelineParallel() + ", cp " + c.contextParallel() + ", ep "
          + c.expertParallel() + ")");
    }
    Optional<String> fixable = fixable(input);
    if (fixable.isPresent()) {
      return fixable;
    }
    if (Fp8Training.on(input.model().dtype())) {
      return Optional.of("meshplan writes Accelerate's bf16, fp16 and fp32 training; its FP8 "
          + "recipes are not written");
    }
    return input.fusedLoss("the training script's transformers loss (ForCausalLMLoss) converts "
        + "the logits to fp32");
  }

  /** What the nearest configuration changes: the ZeRO stage and the recomputation. */
  private static Optional<String> fixable(ExportInput input) {
    ParallelConfig c = input.config();
    if (c.zeroStage() < 2) {
      return Optional.of("Accelerate's FSDP shards at least gradients and optimizer state "
          + "(ZeRO-2, fsdp_reshard_after_forward false) or the weights too (ZeRO-3); ZeRO stage "
          + c.zeroStage() + " is not FSDP");
    }
    if (c.recompute() == Recompute.SELECTIVE || c.recompute() == Recompute.OP
        || !c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT)) {
      return Optional.of("Accelerate's fsdp_activation_checkpointing recomputes whole "
          + "transformer layers; it has no selective or per-op recomputation");
    }
    return Optional.empty();
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ParallelConfig c = input.config();
    ParallelConfig n = c.zeroStage() < 2 ? c.withZeroStage(2) : c;
    if (n.recompute() == Recompute.SELECTIVE || n.recompute() == Recompute.OP) {
      n = n.withRecompute(Recompute.FULL);
    }
    ExportInput out = input.withConfig(n);
    return missing(out).isEmpty() ? Optional.of(out) : Optional.empty();
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    ParallelConfig c = input.config();
    var cluster = input.cluster();
    int accumulation = c.globalBatchSize() / (c.dataParallel() * c.microBatchSize());
    StringBuilder sb = new StringBuilder();
    sb.append("# Hugging Face Accelerate FSDP configuration written by meshplan export\n")
        .append("# model ").append(io.meshplan.util.ShellQuote.commentText(input.model().name()))
        .append(" on ").append(cluster.toShortString()).append(", ")
        .append(cluster.gpuCount()).append(" GPUs, data-parallel ").append(c.dataParallel())
        .append(", ZeRO-").append(c.zeroStage()).append('\n')
        .append("# run on each machine: accelerate launch --config_file accelerate_fsdp.yaml ")
        .append("--machine_rank RANK --main_process_ip HOST --main_process_port PORT train.py\n")
        .append("# the training script sets what the file cannot: a per-GPU micro-batch of ")
        .append(c.microBatchSize()).append(" (sequences of ").append(input.model().seq())
        .append(" tokens), Accelerator(gradient_accumulation_steps=").append(accumulation)
        .append(") for the global batch ").append(c.globalBatchSize()).append(", and the ")
        .append(input.attention().label()).append(" attention kernel\n");
    sb.append("compute_environment: LOCAL_MACHINE\n")
        .append("debug: false\n")
        .append("distributed_type: FSDP\n")
        .append("fsdp_config:\n")
        .append("  fsdp_activation_checkpointing: ")
        .append(c.recompute() == Recompute.FULL).append('\n')
        .append("  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n")
        .append("  fsdp_offload_params: false\n")
        .append("  fsdp_reshard_after_forward: ").append(c.zeroStage() >= 3).append('\n')
        .append("  fsdp_state_dict_type: SHARDED_STATE_DICT\n")
        .append("  fsdp_version: 2\n")
        .append("machine_rank: 0\n")
        .append("main_training_function: main\n")
        .append("mixed_precision: ").append(precision(input.model().dtype())).append('\n')
        .append("num_machines: ").append(cluster.hosts()).append('\n')
        .append("num_processes: ").append(cluster.gpuCount()).append('\n')
        .append("rdzv_backend: static\n")
        .append("same_network: true\n")
        .append("use_cpu: false\n");
    return sb.toString();
  }

  /** Accelerate's name of the training precision. */
  private static String precision(DType d) {
    return switch (d) {
      case BF16 -> "bf16";
      case F16 -> "fp16";
      default -> "no";
    };
  }
}
