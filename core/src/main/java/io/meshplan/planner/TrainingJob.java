package io.meshplan.planner;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.plan.BoundConfig;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.io.Serializable;

/**
 * One training job to plan, as plain serializable data: the model (with the sequence length it
 * trains), the cluster, the batch, the training precision, the memory a plan may use on one GPU
 * and whether the framework overlaps the gradient reduction with the backward pass. {@link #of}
 * fills in meshplan's defaults, the policy every command and the sweep share.
 *
 * @param model the model, with the sequence length to train
 * @param cluster the cluster
 * @param globalBatch sequences per iteration
 * @param microbatches microbatches per iteration, or 0 to let the planner choose
 * @param dtype the training precision: bf16, f16, f32 or {@link io.meshplan.model.Fp8Training#RECIPE} (fp8, on
 *     GPUs with FP8 tensor cores)
 * @param memoryPerGpu memory a plan may use on one GPU, bytes
 * @param overlaps what the framework overlaps and fuses ({@link Overlaps}): the gradient
 *     reduction with the backward pass (PyTorch DDP, Megatron-LM's {@code --overlap-grad-reduce}),
 *     the parameter gather, tensor-parallel communication, FSDP prefetch, gradient-accumulation
 *     fusion
 * @param attention how the attention core runs: fused (FlashAttention, on GPUs with bf16 tensor
 *     cores) or unfused
 */
public record TrainingJob(ModelSpec model, ClusterSpec cluster, int globalBatch,
    int microbatches, DType dtype, double memoryPerGpu, Overlaps overlaps,
    Attention attention) implements Serializable {
  private static final long serialVersionUID = 3L;

  /** Validates the job. */
  public TrainingJob {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.nonNull(dtype, "training precision");
    Require.nonNull(overlaps, "overlaps");
    Require.nonNull(attention, "attention");
    BoundConfig.checkJob(cluster, globalBatch, microbatches, dtype, attention, overlaps);
    BoundConfig.checkOptimizerState(model, dtype);
    BoundConfig.checkFp8Recipe(model, cluster, dtype);
    if (!(memoryPerGpu > 0) || Double.isInfinite(memoryPerGpu)) {
      throw new InputException("the memory per GPU must be a positive number of bytes, got "
          + memoryPerGpu);
    }
  }

  /**
   * The job of a bound training configuration ({@link BoundConfig}): its model, cluster, batch,
   * precision, attention and overlaps, with the GPU's usable memory.
   *
   * @param b the bound configuration
   * @return the job
   */
  public static TrainingJob of(BoundConfig b) {
    Require.nonNull(b, "bound configuration");
    return new TrainingJob(b.model(), b.cluster(), b.globalBatch(), b.microbatches(), b.dtype(),
        b.cluster().gpu().usableMemoryBytes(), b.overlaps(), b.attention());
  }

  /**
   * The attention a cluster's GPUs run by default: fused (FlashAttention-2/3, cuDNN) where they
   * can, as every current framework does, else unfused.
   *
   * @param cluster the cluster
   * @return {@link Attention#FLASH} on Ampere and later, {@link Attention#UNFUSED} before
   */
  public static Attention defaultAttention(ClusterSpec cluster) {
    return TrainingConfig.defaultAttention(cluster);
  }

  /**
   * The same job with the attention core run another way.
   *
   * @param a fused or unfused
   * @return the job
   * @throws InputException for fused attention on a GPU without the kernels
   */
  public TrainingJob withAttention(Attention a) {
    return new TrainingJob(model, cluster, globalBatch, microbatches, dtype, memoryPerGpu,
        overlaps, a);
  }

  /**
   * A job with meshplan's defaults: the model's batch as the global batch, microbatches chosen by
   * the planner, the GPU's training precision (bf16, or fp16 on GPUs without bf16), the GPU's
   * usable memory ({@link io.meshplan.cluster.GpuSpec#usableMemoryBytes}), and a gradient
   * reduction after the backward pass and the frameworks' other overlap defaults ({@link
   * Overlaps#DEFAULTS}), and fused attention where the
   * GPU runs it ({@link #defaultAttention}).
   *
   * @param model the model, with the sequence length to train
   * @param cluster the cluster
   * @return the job
   */
  public static TrainingJob of(ModelSpec model, ClusterSpec cluster) {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    return of(TrainingConfig.searched(model.batch(), 0).bind(model, cluster));
  }

  /**
   * The same job on another cluster of the same GPUs: a fallback when nodes are lost.
   *
   * @param other the cluster
   * @return the job
   */
  public TrainingJob withCluster(ClusterSpec other) {
    return new TrainingJob(model, other, globalBatch, microbatches, dtype, memoryPerGpu, overlaps,
        attention);
  }

  /**
   * The same job with another global batch.
   *
   * @param sequences sequences per iteration
   * @return the job
   */
  public TrainingJob withGlobalBatch(int sequences) {
    return new TrainingJob(model, cluster, sequences, microbatches, dtype, memoryPerGpu,
        overlaps, attention);
  }

  /**
   * The same job with a fixed microbatch count.
   *
   * @param count microbatches per iteration, or 0 to let the planner choose
   * @return the job
   */
  public TrainingJob withMicrobatches(int count) {
    return new TrainingJob(model, cluster, globalBatch, count, dtype, memoryPerGpu,
        overlaps, attention);
  }

  /**
   * The same job training another model (the same layers in another storage, say).
   *
   * @param other the model
   * @return the job
   */
  public TrainingJob withModel(ModelSpec other) {
    return new TrainingJob(other, cluster, globalBatch, microbatches, dtype, memoryPerGpu,
        overlaps, attention);
  }

  /**
   * The same job in another training precision.
   *
   * @param type bf16, f16 or f32
   * @return the job
   */
  public TrainingJob withDtype(DType type) {
    return new TrainingJob(model, cluster, globalBatch, microbatches, type, memoryPerGpu,
        overlaps, attention);
  }

  /**
   * The same job with another memory budget.
   *
   * @param bytes memory a plan may use on one GPU, bytes
   * @return the job
   */
  public TrainingJob withMemoryPerGpu(double bytes) {
    return new TrainingJob(model, cluster, globalBatch, microbatches, dtype, bytes,
        overlaps, attention);
  }

  /**
   * The same job with other overlaps.
   *
   * @param o what the framework overlaps and fuses
   * @return the job
   */
  public TrainingJob withOverlaps(Overlaps o) {
    return new TrainingJob(model, cluster, globalBatch, microbatches, dtype, memoryPerGpu, o,
        attention);
  }

  /**
   * The model as trained: its global batch and training precision.
   *
   * @return the model spec
   */
  public ModelSpec trainedModel() {
    return model.withTraining(globalBatch, dtype);
  }
}
