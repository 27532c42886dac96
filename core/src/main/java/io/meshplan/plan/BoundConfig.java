package io.meshplan.plan;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Fp8Gemms;
import io.meshplan.cluster.FusedAttentionKernels;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A {@link TrainingConfig} bound to a model and a cluster, with every default filled in and every
 * rule run once, here: what {@code simulate} prices is what {@code export} writes, and every
 * command refuses the same input with the same message. The rules, in the order they run:
 *
 * <ol>
 *   <li>the overlaps against the layout, as Megatron-LM's {@code validate_args} and
 *       {@code TransformerConfig.__post_init__} ({@link ParallelConfig#checkOverlaps});
 *   <li>the job ({@link #checkJob}): fused attention on a GPU with the kernels, a precision the
 *       GPU trains in (fp8 on FP8 tensor cores), the global batch and a fixed microbatch count,
 *       the bf16 gradient reduction in bf16 training; bf16 optimizer state on bf16 weights
 *       ({@link #checkOptimizerState}); MXFP8 on Blackwell ({@link #checkFp8Recipe});
 *   <li>the layout against the model and the cluster ({@link #checkLayout}): the degrees'
 *       product equal to the GPUs, the batch and the layers split evenly, the heads by TP, VPP
 *       with PP, sequence parallelism with TP, the expert layout ({@link
 *       ParallelConfig#checkExperts}), the layout's prediction modules and the recomputed
 *       modules ({@link ParallelConfig#checkModel}), the sequence by {@code 2 x CP} with fused
 *       attention ({@link ParallelConfig#checkContext}), a hybrid's mixers split by the tensor
 *       and context sizes ({@link ModelSpec#checkHybridLayout}), and GPipe without virtual
 *       stages.
 * </ol>
 *
 * <p>Megatron-Core's counterpart runs its rules in {@code ModelParallelConfig.__post_init__} and
 * {@code TransformerConfig.__post_init__} (NVIDIA/Megatron-LM
 * megatron/core/model_parallel_config.py at 02aa3ee,
 * megatron/core/transformer/transformer_config.py at d98e8a6): one place, run when the
 * configuration is made.
 *
 * @param config the configuration, with its precision and attention filled in
 * @param model the model as given, with the sequence length it trains
 * @param cluster the cluster
 */
public record BoundConfig(TrainingConfig config, ModelSpec model, ClusterSpec cluster) {

  /** Fills in the cluster's defaults and runs every rule, in the order of the class comment. */
  public BoundConfig {
    Require.nonNull(config, "config");
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    DType dtype = config.dtype().orElseGet(() -> TrainingConfig.defaultDtype(cluster));
    Attention attention = config.attention()
        .orElseGet(() -> TrainingConfig.defaultAttention(cluster));
    config = config.withDtype(dtype).withAttention(Optional.of(attention));
    Optional<ParallelConfig> layout = config.layout();
    if (layout.isPresent()) {
      layout.get().checkOverlaps(config.overlaps());
    }
    checkJob(cluster, config.globalBatch(), config.microbatches(), dtype, attention,
        config.overlaps());
    checkOptimizerState(model, dtype);
    checkFp8Recipe(model, cluster, dtype);
    if (layout.isPresent()) {
      checkLayout(model, cluster, layout.get(), attention, config.gpipe());
    }
  }

  /**
   * Bf16 optimizer state ({@link io.meshplan.model.OptimizerState#BF16}) is the bf16 weights
   * themselves: it needs bf16 training, or fp8, whose weights are bf16; trained weights kept in
   * FP8 ({@link io.meshplan.model.Lora#fp8Weights}) need the fp32 master that state lacks, which
   * Megatron-LM's distributed optimizer keeps beside them and casts to FP8 after each step.
   *
   * @param model the model, with its optimizer state
   * @param dtype the training precision
   * @throws InputException when the precision's weights cannot hold the state
   */
  public static void checkOptimizerState(ModelSpec model, DType dtype) {
    if (!model.optimizerState().heldBy(dtype)) {
      throw new InputException("the optimizer state " + model.optimizerState().word() + " is "
          + "the bf16 weights themselves; it needs bf16 training (or fp8, whose weights are "
          + "bf16), not " + Fp8Training.word(dtype));
    }
    if (model.lora().fp8Weights()
        && model.optimizerState() == io.meshplan.model.OptimizerState.BF16) {
      throw new InputException("--fp8-param-gather keeps FP8 weights beside an fp32 master "
          + "that the optimizer updates; --optimizer-state bf16 has no master");
    }
  }

  /**
   * The FP8 recipe must run on the cluster's GPUs: MXFP8 block scaling on NVIDIA's Blackwell and
   * later only ({@link io.meshplan.model.Fp8Scaling#runsOn}; Megatron-Core's {@code fp8_recipe}:
   * "'mxfp8' for Blackwell architecture only"). {@code planner.TrainingJob} checks itself by this
   * too.
   *
   * @param model the model, with its FP8 scaling
   * @param cluster the cluster
   * @param dtype the training precision; the recipe is read only under FP8
   * @throws InputException when the recipe does not run there
   */
  public static void checkFp8Recipe(ModelSpec model, ClusterSpec cluster, DType dtype) {
    io.meshplan.cluster.Architecture arch = cluster.gpu().architecture();
    io.meshplan.model.Fp8Scaling recipe = model.fp8Scaling();
    if (Fp8Training.on(dtype) && !runsFp8Recipe(recipe, arch)) {
      String rule = recipe == io.meshplan.model.Fp8Scaling.MXFP8
          ? "mxfp8 (block scaling) runs on Blackwell GPUs only (Megatron-Core: 'mxfp8' for "
              + "Blackwell architecture only)"
          : "nvfp4 (4-bit block scaling) runs on Blackwell GPUs only (Megatron-Core: "
              + "NVFP4BlockScaling recipe for Blackwell+ architecture)";
      throw new InputException("the FP8 recipe " + rule + ", not on the "
          + cluster.gpu().name() + " (" + arch.word() + "); use tensorwise or delayed");
    }
  }

  /**
   * Whether an FP8 recipe runs on an architecture: the block-scaled ones on NVIDIA's Blackwell
   * and later only ({@link io.meshplan.model.Fp8Scaling#runsOn}), the per-tensor ones wherever
   * there are FP8 tensor cores.
   *
   * @param recipe the recipe
   * @param arch the GPU's architecture
   * @return true where it runs
   */
  public static boolean runsFp8Recipe(io.meshplan.model.Fp8Scaling recipe,
      io.meshplan.cluster.Architecture arch) {
    return !recipe.blockScaled() || arch.vendor() == io.meshplan.cluster.Architecture.Vendor.NVIDIA
        && recipe.runsOn(arch.computeCapabilityMajor());
  }

  /**
   * The rules of a job that hold whatever its layout: fused attention needs the GPU's kernels;
   * the precision must train, fp8 on FP8 tensor cores, and the GPU must have a peak for it; the
   * global batch is positive and a multiple of a fixed microbatch count; the bf16 gradient
   * reduction runs in bf16 training. {@code planner.TrainingJob} checks itself by this too.
   *
   * @param cluster the cluster
   * @param globalBatch sequences per iteration
   * @param microbatches a fixed microbatch count, or 0
   * @param dtype the training precision
   * @param attention the attention kernel
   * @param overlaps the overlaps
   * @throws InputException naming the first rule broken
   */
  public static void checkJob(ClusterSpec cluster, int globalBatch, int microbatches,
      DType dtype, Attention attention, Overlaps overlaps) {
    if (attention == Attention.FLASH) {
      FusedAttentionKernels.require(cluster.gpu());
    }
    if (!Fp8Training.trains(dtype)) {
      throw new InputException("the training precision " + dtype.hloName() + " cannot train; "
          + "use bf16, f16, f32 or fp8");
    }
    if (Fp8Training.on(dtype)) {
      Fp8Gemms.require(cluster.gpu());
    }
    cluster.gpu().requireTraining(dtype);
    if (globalBatch <= 0) {
      throw new InputException("the global batch must be positive, got " + globalBatch);
    }
    if (microbatches < 0 || (microbatches > 0 && globalBatch % microbatches != 0)) {
      throw new InputException("the global batch " + globalBatch + " is not a multiple of "
          + microbatches + " microbatches");
    }
    if (overlaps.bf16GradReduce() && !Overlaps.bf16GradReduceRuns(dtype)) {
      throw new InputException("--grad-reduce-in-bf16 needs bf16 training (or fp8, whose weights"
          + " and gradients are bf16), not " + Fp8Training.word(dtype));
    }
    if (overlaps.dispatcher().deduplicates()) {
      io.meshplan.cluster.ExpertDispatchBandwidth.check(overlaps.dispatcher().word(),
          cluster.gpu());
    }
  }

  /**
   * The rules of a stated layout on a model and a cluster, as Megatron-LM checks them at
   * start-up (see the class comment).
   *
   * @param model the model
   * @param cluster the cluster
   * @param c the layout
   * @param attention the attention kernel
   * @param gpipe whether the schedule is GPipe
   * @throws InputException naming the first rule broken
   */
  public static void checkLayout(ModelSpec model, ClusterSpec cluster, ParallelConfig c,
      Attention attention, boolean gpipe) {
    c.check(cluster.gpuCount(), model.layers(), model.heads(), model.kvHeads());
    c.checkExperts(model.arch().moe());
    c.checkModel(model);
    c.checkContext(model.seq(), attention == Attention.FLASH);
    ParallelConfig.checkHeadSplit(c.cpExchange(), c.tensorParallel(), c.contextParallel(),
        model.heads(), model.kvHeads());
    if (c.contextParallel() > 1 && c.cpExchange() == ContextExchange.ALL_TO_ALL
        && model.packing().packed()) {
      throw new InputException("packed documents under head-parallel context parallelism "
          + "(--cp-comm-type a2a) are not modelled; use p2p or all_gather");
    }
    model.checkHybridLayout(c.tensorParallel(), c.contextParallel());
    model.quantizedLayoutProblem(c.tensorParallel()).ifPresent(p -> {
      throw new InputException(p);
    });
    if (gpipe && c.virtualStages() != 1) {
      throw new InputException("the GPipe schedule has no virtual stages; got "
          + c.virtualStages() + " per pipeline stage");
    }
  }

  /**
   * Whether a layout binds on a model and a cluster with a job's precision, attention and
   * overlaps: the filter of a grid of layouts (Megatron-LM's configurations in a sweep's or a
   * plan's grid search).
   *
   * @param model the model
   * @param cluster the cluster
   * @param c the layout
   * @param dtype the training precision
   * @param attention the attention kernel
   * @param overlaps the overlaps
   * @return true when every rule holds
   */
  public static boolean accepts(ModelSpec model, ClusterSpec cluster, ParallelConfig c,
      DType dtype, Attention attention, Overlaps overlaps) {
    try {
      TrainingConfig.of(c, false).withDtype(dtype).withAttention(Optional.of(attention))
          .withOverlaps(overlaps).bind(model, cluster);
      return true;
    } catch (InputException | IllegalArgumentException e) {
      // Not a configuration Megatron-LM accepts for this model and cluster.
      return false;
    }
  }

  /**
   * The stated layout.
   *
   * @return the layout
   * @throws IllegalStateException when the layout is searched
   */
  public ParallelConfig parallel() {
    return config.layout().orElseThrow(() -> new IllegalStateException("the layout is searched"));
  }

  /**
   * The parallel layout, or empty when a planner searches it.
   *
   * @return the layout
   */
  public Optional<ParallelConfig> layout() {
    return config.layout();
  }

  /**
   * The training precision: the configuration's, or the GPU's.
   *
   * @return the precision
   */
  public DType dtype() {
    return config.dtype().orElseThrow();
  }

  /**
   * The attention kernel: the configuration's, or the GPU's.
   *
   * @return the kernel
   */
  public Attention attention() {
    return config.attention().orElseThrow();
  }

  /**
   * What the framework overlaps and fuses.
   *
   * @return the overlaps
   */
  public Overlaps overlaps() {
    return config.overlaps();
  }

  /**
   * Whether the schedule is GPipe.
   *
   * @return true for GPipe
   */
  public boolean gpipe() {
    return config.gpipe();
  }

  /**
   * Sequences per iteration.
   *
   * @return the global batch
   */
  public int globalBatch() {
    return config.globalBatch();
  }

  /**
   * A fixed microbatch count of a searched layout, or 0.
   *
   * @return the count
   */
  public int microbatches() {
    return config.microbatches();
  }

  /**
   * The model as a framework file states it: its own batch, in the training precision.
   *
   * @return the model
   */
  public ModelSpec trainingModel() {
    return model.withTraining(model.batch(), dtype());
  }

  /**
   * This binding with another configuration on the same model and cluster, bound again.
   *
   * @param other the configuration
   * @return the bound configuration
   */
  public BoundConfig with(TrainingConfig other) {
    return other.bind(model, cluster);
  }
}
