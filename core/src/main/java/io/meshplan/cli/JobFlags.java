package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.TrainingJob;
import io.meshplan.util.InputException;

/**
 * The training job the shared flags describe, priced through {@link Planner#price}: the flags
 * map onto {@link TrainingJob}, and its refusals are said in the flags' words first.
 */
final class JobFlags {
  private JobFlags() {}

  /**
   * The job of the model and cluster flags.
   *
   * @param modelOptions the model flags; without {@code --dtype} training runs in the GPU's
   *     training precision
   * @param clusterOptions the cluster flags
   * @param clusterFallback the cluster string when {@code --cluster} is absent (from a plan file)
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @param options the solver and threads
   * @return the priced job
   */
  static PricedJob priced(ModelOptions modelOptions, ClusterOptions clusterOptions,
      String clusterFallback, int globalBatch, int microbatches, PlannerOptions options) {
    return priced(modelOptions.spec(), modelOptions.dtype != null, clusterOptions,
        clusterFallback, globalBatch, microbatches, options);
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
      String clusterFallback, int globalBatch, int microbatches, PlannerOptions options) {
    ClusterSpec cs = clusterOptions.spec(clusterFallback);
    DType t = explicitDtype ? m.dtype() : cs.gpu().trainingType();
    if (t != DType.BF16 && t != DType.F16 && t != DType.F32) {
      throw new InputException("--dtype " + t.hloName() + " cannot train; use bf16, f16 or f32");
    }
    if (globalBatch <= 0) {
      throw new InputException("--global-batch must be positive, got " + globalBatch);
    }
    TrainingJob job = TrainingJob.of(m, cs).withGlobalBatch(globalBatch)
        .withMicrobatches(microbatches).withDtype(t)
        .withMemoryPerGpu(clusterOptions.memoryPerGpu(cs))
        .withOverlapGradReduce(clusterOptions.overlapGradReduce);
    return Planner.price(job, clusterOptions.pricing(), options);
  }
}
