package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.FusedAttentionKernels;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.plan.BoundConfig;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * What a framework configuration is written from: a training configuration bound to a model and
 * the cluster it trains on ({@link BoundConfig}, by the same rules that {@code simulate} prices
 * by), with a stated Megatron-style layout. Every option of the configuration reaches the
 * writers through {@link #bound}.
 *
 * @param bound the bound configuration; its layout is stated, and its model is in the training
 *     precision
 */
public record ExportInput(BoundConfig bound) {
  /** Validates that the layout is stated. */
  public ExportInput {
    Require.nonNull(bound, "bound configuration");
    Require.that(bound.layout().isPresent(), "an export needs a stated parallel layout");
  }

  /**
   * An input of its parts, bound by the rules of {@link BoundConfig}.
   *
   * @param model the model (dimensions, sequence length, element type: the training precision)
   * @param cluster the cluster
   * @param config the parallel configuration
   * @param attention how the attention core runs (Megatron-LM's {@code --attention-backend})
   * @param overlaps what the framework overlaps and fuses; each writer states those that apply
   *     to the configuration
   * @param gpipe whether the pipeline runs the GPipe schedule (Huang et al., NeurIPS'19: every
   *     microbatch's forward, then every backward) instead of 1F1B; it has no virtual stages
   */
  public ExportInput(ModelSpec model, ClusterSpec cluster, ParallelConfig config,
      Attention attention, Overlaps overlaps, boolean gpipe) {
    this(bind(model, cluster, config, attention, overlaps, gpipe));
  }

  private static BoundConfig bind(ModelSpec model, ClusterSpec cluster, ParallelConfig config,
      Attention attention, Overlaps overlaps, boolean gpipe) {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.nonNull(config, "config");
    Require.nonNull(attention, "attention");
    Require.nonNull(overlaps, "overlaps");
    return TrainingConfig.of(config, gpipe).withDtype(model.dtype())
        .withAttention(Optional.of(attention)).withOverlaps(overlaps).bind(model, cluster);
  }

  /**
   * The input of a bound training configuration with a stated layout: what {@code simulate}
   * prices for it, in the framework's words, every option of the configuration kept.
   *
   * @param b the bound configuration
   * @return the input
   */
  public static ExportInput of(BoundConfig b) {
    return new ExportInput(b.config().bind(b.trainingModel(), b.cluster()));
  }

  /**
   * The model, in the training precision.
   *
   * @return the model
   */
  public ModelSpec model() {
    return bound.model();
  }

  /**
   * The cluster.
   *
   * @return the cluster
   */
  public ClusterSpec cluster() {
    return bound.cluster();
  }

  /**
   * The parallel configuration.
   *
   * @return the layout
   */
  public ParallelConfig config() {
    return bound.parallel();
  }

  /**
   * How the attention core runs.
   *
   * @return the kernel
   */
  public Attention attention() {
    return bound.attention();
  }

  /**
   * What the framework overlaps and fuses.
   *
   * @return the overlaps
   */
  public Overlaps overlaps() {
    return bound.overlaps();
  }

  /**
   * Whether the pipeline runs the GPipe schedule.
   *
   * @return true for GPipe
   */
  public boolean gpipe() {
    return bound.gpipe();
  }

  /**
   * An input under the 1F1B schedule (interleaved with virtual stages).
   *
   * @param model the model
   * @param cluster the cluster
   * @param config the parallel configuration
   * @param attention how the attention core runs
   * @param overlaps what the framework overlaps and fuses
   */
  public ExportInput(ModelSpec model, ClusterSpec cluster, ParallelConfig config,
      Attention attention, Overlaps overlaps) {
    this(model, cluster, config, attention, overlaps, false);
  }

  /**
   * An input with the frameworks' default overlaps ({@link Overlaps#DEFAULTS}).
   *
   * @param model the model
   * @param cluster the cluster
   * @param config the parallel configuration
   * @param attention how the attention core runs
   */
  public ExportInput(ModelSpec model, ClusterSpec cluster, ParallelConfig config,
      Attention attention) {
    this(model, cluster, config, attention, Overlaps.DEFAULTS);
  }

  /**
   * An input with the attention the cluster's GPUs run by default: fused (FlashAttention) on
   * GPUs with its kernels, unfused before.
   *
   * @param model the model
   * @param cluster the cluster
   * @param config the parallel configuration
   */
  public ExportInput(ModelSpec model, ClusterSpec cluster, ParallelConfig config) {
    this(model, cluster, config, FusedAttentionKernels.of(cluster.gpu()).isPresent()
        ? Attention.FLASH : Attention.UNFUSED);
  }

  /**
   * The same model and cluster with another configuration.
   *
   * @param other the configuration
   * @return the input
   */
  public ExportInput withConfig(ParallelConfig other) {
    return new ExportInput(bound.with(bound.config().withLayout(other)));
  }

  /**
   * The same cluster, configuration, attention and overlaps with another model.
   *
   * @param other the model
   * @return the input
   */
  public ExportInput withModel(ModelSpec other) {
    return new ExportInput(other, cluster(), config(), attention(), overlaps(), gpipe());
  }

  /**
   * The same input with other overlaps and fusions.
   *
   * @param other the overlaps
   * @return the input
   */
  public ExportInput withOverlaps(Overlaps other) {
    return new ExportInput(bound.with(bound.config().withOverlaps(other)));
  }

  /**
   * Why a framework that recomputes whole layers or listed modules cannot run this input: its
   * recomputation is torchtitan's per-op mode ({@link Recompute#OP}).
   *
   * @param framework the framework's name
   * @return the reason, or empty
   */
  Optional<String> perOpRecompute(String framework) {
    if (config().recompute() != Recompute.OP) {
      return Optional.empty();
    }
    return Optional.of(framework + " recomputes whole layers or listed modules; it has no per-op"
        + " checkpointing policy like torchtitan's (--recompute op)");
  }

  /**
   * Why a framework that converts the logits to fp32 cannot run this input's fused cross-entropy
   * kernel ({@link Overlaps#lossFusion}), if it asks for one.
   *
   * @param how how the framework runs the loss
   * @return the reason, or empty when the input's loss is the fp32 one
   */
  Optional<String> fusedLoss(String how) {
    return overlaps().lossFusion() ? Optional.of(how + "; the plan prices one fused kernel over the"
        + " logits in their own type (--fused-cross-entropy)") : Optional.empty();
  }

  /**
   * The same input under another schedule.
   *
   * @param useGpipe true for GPipe, false for 1F1B
   * @return the input
   */
  public ExportInput withGpipe(boolean useGpipe) {
    return new ExportInput(bound.with(bound.config().withGpipe(useGpipe)));
  }

  /**
   * The gradient-accumulation steps (microbatches per pipeline) of one iteration.
   *
   * @return global batch / (micro batch * data-parallel size)
   */
  public int microbatches() {
    return config().microbatches();
  }
}
