package io.meshplan.cli;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.FusedAttentionKernels;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.BoundConfig;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.TrainingJob;

/**
 * The training job the shared flags describe, priced through {@link Planner#price}: the flags
 * map onto {@link TrainingJob}, and its refusals come back in the flags' words ({@link
 * FlagWords#JOB}).
 */
final class JobFlags {
  private JobFlags() {}

  /**
   * The job of the model and cluster flags.
   *
   * @param modelOptions the model flags; without {@code --dtype} training runs in the GPU's
   *     training precision
   * @param clusterOptions the cluster flags
   * @param attention the attention asked for, or empty for the GPU's default
   * @param clusterFallback the cluster string when {@code --cluster} is absent (from a plan file)
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param options the solver and threads
   * @return the priced job
   */
  static PricedJob priced(ModelOptions modelOptions, ClusterOptions clusterOptions,
      AttentionOptions attention, String clusterFallback, int globalBatch, int microbatches,
      PlannerOptions options) {
    Pricing pricing = pricing(clusterOptions, attention, clusterOptions.spec(clusterFallback));
    TrainingJob job = job(modelOptions.spec(), modelOptions.dtype != null, clusterOptions,
        attention.chosen(), clusterFallback, globalBatch, microbatches, clusterOptions.overlaps());
    return Planner.price(job, pricing, options);
  }

  /**
   * The prices the cluster flags ask for, with the attention kernel {@code --attention} names,
   * checked against the GPU before anything is bound.
   *
   * @param clusterOptions the cluster flags
   * @param attention the attention flag
   * @param cs the cluster
   * @return the pricing
   * @throws io.meshplan.util.InputException when the kernel is not priced on the cluster's GPU
   */
  static Pricing pricing(ClusterOptions clusterOptions, AttentionOptions attention,
      ClusterSpec cs) {
    return pricing(clusterOptions, attention.kernel(), cs);
  }

  /**
   * The prices the cluster flags ask for, with a named attention kernel checked against the GPU.
   *
   * @param clusterOptions the cluster flags
   * @param kernel the kernel, or empty for the architecture's default
   * @param cs the cluster
   * @return the pricing
   * @throws io.meshplan.util.InputException when the kernel is not priced on the cluster's GPU
   */
  static Pricing pricing(ClusterOptions clusterOptions, java.util.Optional<AttentionKernel> kernel,
      ClusterSpec cs) {
    FusedAttentionKernels.of(cs.gpu(), kernel);
    Pricing base = clusterOptions.pricing();
    return kernel.map(base::withAttentionKernel).orElse(base);
  }

  /**
   * The job of a model already read (for example from a plan file).
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use
   * @param clusterOptions the cluster flags
   * @param clusterFallback the cluster string when {@code --cluster} is absent
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param options the solver and threads
   * @return the priced job
   */
  static PricedJob priced(ModelSpec m, boolean explicitDtype, ClusterOptions clusterOptions,
      java.util.Optional<io.meshplan.model.Attention> attention, String clusterFallback,
      int globalBatch, int microbatches, PlannerOptions options) {
    return priced(m, explicitDtype, clusterOptions, attention, clusterFallback, globalBatch,
        microbatches, options, clusterOptions.overlaps());
  }

  /**
   * The job of a model already read, with overlaps and fusions of its own (a plan file's,
   * changed by the flags).
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use
   * @param clusterOptions the cluster flags
   * @param attention the attention, or empty for the default
   * @param clusterFallback the cluster string when {@code --cluster} is absent
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param options the solver and threads
   * @param overlaps the overlaps and fusions to price with
   * @return the priced job
   */
  static PricedJob priced(ModelSpec m, boolean explicitDtype, ClusterOptions clusterOptions,
      java.util.Optional<io.meshplan.model.Attention> attention, String clusterFallback,
      int globalBatch, int microbatches, PlannerOptions options,
      io.meshplan.model.Overlaps overlaps) {
    TrainingJob job = job(m, explicitDtype, clusterOptions, attention, clusterFallback,
        globalBatch, microbatches, overlaps);
    return Planner.price(job, clusterOptions.pricing(), options);
  }

  /**
   * The training job the flags describe, before pricing: the one resolution of the training
   * precision (the model's with {@code --dtype}, else the GPU's), the attention and the overlaps
   * that {@code simulate} prices and {@code export} writes.
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use
   * @param clusterOptions the cluster flags
   * @param attention the attention, or empty for the GPU's default
   * @param clusterFallback the cluster string when {@code --cluster} is absent
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param overlaps the overlaps and fusions
   * @return the job
   */
  static TrainingJob job(ModelSpec m, boolean explicitDtype, ClusterOptions clusterOptions,
      java.util.Optional<io.meshplan.model.Attention> attention, String clusterFallback,
      int globalBatch, int microbatches, io.meshplan.model.Overlaps overlaps) {
    return job(m, explicitDtype, clusterOptions, attention,
        clusterOptions.spec(clusterFallback), globalBatch, microbatches, overlaps);
  }

  /**
   * The training job of a model on a cluster already read (a plan file's, {@link
   * PlanFile#cluster}), as {@link #job(ModelSpec, boolean, ClusterOptions, java.util.Optional,
   * String, int, int, io.meshplan.model.Overlaps)} makes it.
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use
   * @param clusterOptions the cluster flags (the memory per GPU)
   * @param attention the attention, or empty for the GPU's default
   * @param cs the cluster
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param overlaps the overlaps and fusions
   * @return the job
   */
  static TrainingJob job(ModelSpec m, boolean explicitDtype, ClusterOptions clusterOptions,
      java.util.Optional<io.meshplan.model.Attention> attention, ClusterSpec cs,
      int globalBatch, int microbatches, io.meshplan.model.Overlaps overlaps) {
    denseDispatcher(m, clusterOptions);
    BoundConfig b = bind(m, explicitDtype, cs, TrainingConfig.searched(globalBatch, microbatches)
        .withAttention(attention).withOverlaps(overlaps));
    return FlagWords.call(FlagWords.JOB,
        () -> TrainingJob.of(b).withMemoryPerGpu(clusterOptions.memoryPerGpu(cs)));
  }

  /**
   * Binds a training configuration to a model and a cluster ({@link TrainingConfig#bind}), with
   * the refusal in the flags' words: the one binding of {@code plan}, {@code simulate} and
   * {@code export}.
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use (else the
   *     GPU's)
   * @param cs the cluster
   * @param config the configuration
   * @return the bound configuration
   */
  /**
   * Refuses {@code --moe-dispatcher} on a dense model, as its sibling routing flags are: a
   * dispatcher there prices nothing and would be taken for one that did.
   */
  private static void denseDispatcher(ModelSpec m, ClusterOptions clusterOptions) {
    if (clusterOptions.dispatcher().isPresent() && !m.arch().moe().routed()) {
      throw new io.meshplan.util.InputException("--moe-dispatcher needs a mixture-of-experts "
          + "model; this model is dense");
    }
  }

  static BoundConfig bind(ModelSpec m, boolean explicitDtype, ClusterSpec cs,
      TrainingConfig config) {
    return FlagWords.call(FlagWords.CONFIG,
        () -> (explicitDtype ? config.withDtype(m.dtype()) : config).bind(m, cs));
  }

  /**
   * The model and parallel flags given, which a command reading a plan file refuses by name.
   *
   * @param model the model flags
   * @param parallel the parallel flags
   * @return their names, the model's first
   */
  static java.util.List<String> given(ModelOptions model, ParallelOptions parallel) {
    java.util.List<String> given = new java.util.ArrayList<>(model.given());
    given.addAll(parallel.given());
    return given;
  }

  /**
   * The training configuration of the model, cluster, attention and parallel flags, bound: what
   * {@code simulate} prices and {@code export} writes. The flags are read in one order (model,
   * cluster, layout, schedule, overlaps) and the rules run once ({@link BoundConfig}).
   *
   * @param model the model flags
   * @param clusterOptions the cluster flags
   * @param attention the attention flag
   * @param parallel the parallel flags
   * @return the bound configuration
   */
  static BoundConfig bind(ModelOptions model, ClusterOptions clusterOptions,
      AttentionOptions attention, ParallelOptions parallel) {
    ModelSpec m = model.spec();
    denseDispatcher(m, clusterOptions);
    ClusterSpec cs = clusterOptions.spec(null);
    pricing(clusterOptions, attention, cs);
    TrainingConfig config = parallel.training().withAttention(attention.chosen())
        .withOverlaps(clusterOptions.overlaps());
    if (clusterOptions.hsdpStepReduce
        && config.layout().map(c -> c.shardGroup() == 0).orElse(false)) {
      // A stated layout without hybrid sharding has no replicas' reduction to time.
      throw new io.meshplan.util.InputException("--hsdp-step-reduce times hybrid sharding's replica reduction; "
          + "give --zero-stage 3 --shard-group G, or drop it");
    }
    if (clusterOptions.noFsdpPrefetch
        && config.layout().map(c -> c.zeroStage() < 2).orElse(false)) {
      // Only ZeRO-2 and ZeRO-3 gather and reduce-scatter per layer: the flag would change nothing.
      throw new io.meshplan.util.InputException("--no-fsdp-prefetch times ZeRO-2's and ZeRO-3's "
          + "per-layer gathers and reduce-scatters; give --zero-stage 2 or 3, or drop it");
    }
    return bind(m, model.dtype != null, cs, config);
  }

  /**
   * A bound configuration priced for simulation, with the cluster flags' memory and pricing.
   *
   * @param b the bound configuration
   * @param clusterOptions the cluster flags
   * @param attention the attention flag, whose kernel prices the attention core
   * @param options the solver and threads
   * @return the priced job
   */
  static PricedJob priced(BoundConfig b, ClusterOptions clusterOptions,
      AttentionOptions attention, PlannerOptions options) {
    TrainingJob job = FlagWords.call(FlagWords.JOB,
        () -> TrainingJob.of(b).withMemoryPerGpu(clusterOptions.memoryPerGpu(b.cluster())));
    return Planner.price(job, pricing(clusterOptions, attention, b.cluster()), options);
  }
}
