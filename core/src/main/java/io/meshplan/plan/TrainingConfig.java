package io.meshplan.plan;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.FusedAttentionKernels;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How one job trains, before it meets a model and a cluster: the parallel layout ({@link
 * ParallelConfig}: TP, PP, VPP, DP, CP, EP, ETP, the pipeline split, the micro and global batch,
 * recomputation, sequence parallelism, the ZeRO stage) or none, when a planner searches it; the
 * schedule; the global batch and a fixed microbatch count for a searched layout; the training
 * precision and the attention kernel, each empty for the cluster's default; the overlaps and
 * fusions. The sequence length is the model's ({@link ModelSpec#seq}).
 *
 * <p>Nothing here is checked against a model or a cluster: {@link #bind} does that in one step,
 * as Megatron-Core's {@code ModelParallelConfig} and {@code TransformerConfig} check themselves in
 * their {@code __post_init__} (NVIDIA/Megatron-LM megatron/core/model_parallel_config.py at
 * 02aa3ee, which refuses sequence parallelism without tensor parallelism among others, and
 * megatron/core/transformer/transformer_config.py at d98e8a6). Every command that trains a job
 * ({@code plan}, {@code simulate}, {@code export}, {@code deploy}, {@code sweep}, {@code
 * calibrate --train}) binds one of these, so each gets the same defaults and the same refusal.
 *
 * @param layout the parallel layout, or empty for a planner to search
 * @param gpipe whether the pipeline runs GPipe (all forwards, then all backwards) instead of 1F1B;
 *     only with a layout
 * @param globalBatch sequences per iteration; the layout's own when there is one
 * @param microbatches a fixed microbatch count for a searched layout, or 0 for the planner's
 *     choice (a stated layout fixes its own)
 * @param dtype the training precision, or empty for the GPU's ({@link #defaultDtype})
 * @param attention the attention kernel, or empty for the GPU's ({@link #defaultAttention})
 * @param overlaps what the framework overlaps and fuses
 * @param trainTokens the tokens the whole run trains on, or 0 when not stated; the run is
 *     {@link #iterations} iterations of the global batch (Megatron-LM's {@code --train-iters},
 *     torchtitan's {@code training.steps})
 */
public record TrainingConfig(Optional<ParallelConfig> layout, boolean gpipe, int globalBatch,
    int microbatches, Optional<DType> dtype, Optional<Attention> attention, Overlaps overlaps,
    long trainTokens) {

  /** Validates what needs no model: a stated layout's batch is the job's. */
  public TrainingConfig {
    Require.nonNull(layout, "layout");
    Require.nonNull(dtype, "dtype");
    Require.nonNull(attention, "attention");
    Require.nonNull(overlaps, "overlaps");
    Require.that(!gpipe || layout.isPresent(), "the GPipe schedule needs a stated layout");
    layout.ifPresent(l -> Require.that(l.globalBatchSize() == globalBatch && microbatches == 0,
        "a stated layout carries its own global batch and microbatches"));
    Require.that(trainTokens >= 0, "the training tokens must be positive, got " + trainTokens);
  }

  /**
   * A stated layout, trained with the frameworks' default overlaps in the GPU's precision and
   * attention.
   *
   * @param layout the layout
   * @param gpipe whether the schedule is GPipe
   * @return the configuration
   */
  public static TrainingConfig of(ParallelConfig layout, boolean gpipe) {
    Require.nonNull(layout, "layout");
    return new TrainingConfig(Optional.of(layout), gpipe, layout.globalBatchSize(), 0,
        Optional.empty(), Optional.empty(), Overlaps.DEFAULTS, 0);
  }

  /**
   * A layout for a planner to search, with the frameworks' default overlaps in the GPU's
   * precision and attention.
   *
   * @param globalBatch sequences per iteration
   * @param microbatches a fixed microbatch count, or 0 for the planner's choice
   * @return the configuration
   */
  public static TrainingConfig searched(int globalBatch, int microbatches) {
    return new TrainingConfig(Optional.empty(), false, globalBatch, microbatches,
        Optional.empty(), Optional.empty(), Overlaps.DEFAULTS, 0);
  }

  /**
   * This configuration in a stated precision.
   *
   * @param t bf16, f16, f32 or the fp8 recipe
   * @return the configuration
   */
  public TrainingConfig withDtype(DType t) {
    return new TrainingConfig(layout, gpipe, globalBatch, microbatches, Optional.of(t),
        attention, overlaps, trainTokens);
  }

  /**
   * This configuration with a stated attention kernel, or the GPU's default when empty.
   *
   * @param a the kernel, or empty
   * @return the configuration
   */
  public TrainingConfig withAttention(Optional<Attention> a) {
    return new TrainingConfig(layout, gpipe, globalBatch, microbatches, dtype, a, overlaps,
        trainTokens);
  }

  /**
   * This configuration with other overlaps and fusions.
   *
   * @param o the overlaps
   * @return the configuration
   */
  public TrainingConfig withOverlaps(Overlaps o) {
    return new TrainingConfig(layout, gpipe, globalBatch, microbatches, dtype, attention, o,
        trainTokens);
  }

  /**
   * This configuration with another stated layout, whose batch becomes the job's.
   *
   * @param l the layout
   * @return the configuration
   */
  public TrainingConfig withLayout(ParallelConfig l) {
    return new TrainingConfig(Optional.of(l), gpipe, l.globalBatchSize(), 0, dtype, attention,
        overlaps, trainTokens);
  }

  /**
   * This configuration under another schedule.
   *
   * @param useGpipe true for GPipe, false for 1F1B
   * @return the configuration
   */
  public TrainingConfig withGpipe(boolean useGpipe) {
    return new TrainingConfig(layout, useGpipe, globalBatch, microbatches, dtype, attention,
        overlaps, trainTokens);
  }

  /**
   * This configuration for a run of a stated length.
   *
   * @param tokens the tokens the run trains on, or 0 for unstated
   * @return the configuration
   */
  public TrainingConfig withTrainTokens(long tokens) {
    return new TrainingConfig(layout, gpipe, globalBatch, microbatches, dtype, attention,
        overlaps, tokens);
  }

  /**
   * The iterations of the run: the stated tokens over the tokens of one iteration (the global
   * batch's sequences of {@code seq} tokens), rounded up so that the run trains on at least the
   * stated tokens.
   *
   * @param seq tokens per sequence
   * @return the iterations, or empty when the run's length is not stated
   */
  public java.util.OptionalLong iterations(int seq) {
    if (trainTokens == 0) {
      return java.util.OptionalLong.empty();
    }
    return java.util.OptionalLong.of(iterations(trainTokens, globalBatch, seq));
  }

  /**
   * The iterations that train on at least some tokens.
   *
   * @param tokens the tokens, >= 1
   * @param globalBatch sequences per iteration, >= 1
   * @param seq tokens per sequence, >= 1
   * @return the iterations, rounded up
   */
  public static long iterations(long tokens, int globalBatch, int seq) {
    Require.that(tokens >= 1 && globalBatch >= 1 && seq >= 1, "tokens, batch and sequence must "
        + "be positive");
    long perIteration = (long) globalBatch * seq; // both below 2^31: exact
    // Rounded up without forming tokens + perIteration, which passes 2^63 near Long.MAX_VALUE.
    return tokens / perIteration + (tokens % perIteration == 0 ? 0 : 1);
  }

  /**
   * Binds this configuration to a model and a cluster: fills in the cluster's defaults and runs
   * every rule once ({@link BoundConfig}).
   *
   * @param model the model, with the sequence length it trains
   * @param cluster the cluster
   * @return the bound configuration
   * @throws io.meshplan.util.InputException naming the first rule broken
   */
  public BoundConfig bind(ModelSpec model, ClusterSpec cluster) {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    return new BoundConfig(this, model, cluster);
  }

  /**
   * The precision a cluster's GPUs train in unless told otherwise: bf16, or fp16 on GPUs without
   * bf16 tensor cores ({@link io.meshplan.cluster.GpuSpec#trainingType}).
   *
   * @param cluster the cluster
   * @return the precision
   */
  public static DType defaultDtype(ClusterSpec cluster) {
    return cluster.gpu().trainingType();
  }

  /**
   * The attention a cluster's GPUs run by default: fused (FlashAttention-2/3, cuDNN) where they
   * can, as every current framework does, else unfused.
   *
   * @param cluster the cluster
   * @return {@link Attention#FLASH} where the GPU has fused kernels, {@link Attention#UNFUSED}
   *     before
   */
  public static Attention defaultAttention(ClusterSpec cluster) {
    return FusedAttentionKernels.of(cluster.gpu()).isPresent() ? Attention.FLASH
        : Attention.UNFUSED;
  }
}
