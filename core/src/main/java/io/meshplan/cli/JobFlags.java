package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
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
    return priced(modelOptions.spec(), modelOptions.dtype != null, clusterOptions,
        attention.chosen(), clusterFallback, globalBatch, microbatches, options);
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
    ClusterSpec cs = clusterOptions.spec(clusterFallback);
    return FlagWords.call(FlagWords.JOB, () -> {
      TrainingJob defaults = TrainingJob.of(m, cs);
      defaults = defaults.withAttention(attention.orElse(defaults.attention()));
      return (explicitDtype ? defaults.withDtype(m.dtype()) : defaults)
          .withGlobalBatch(globalBatch).withMicrobatches(microbatches)
          .withMemoryPerGpu(clusterOptions.memoryPerGpu(cs))
          .withOverlaps(overlaps);
    });
  }
}
