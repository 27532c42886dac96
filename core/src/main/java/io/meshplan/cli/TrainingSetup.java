package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.IlpLayerCostModel;
import io.meshplan.interop.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.InputException;

/**
 * The model, cluster, prices and layer planner of one training question, from the shared flags.
 *
 * @param model the model in its training precision
 * @param cluster the cluster
 * @param layers the layer planner
 * @param request the planning request
 */
record TrainingSetup(ModelSpec model, ClusterSpec cluster, IlpLayerCostModel layers,
    PlanRequest request) {

  /**
   * Builds the setup.
   *
   * @param modelOptions the model flags; without {@code --dtype} training runs in bf16 (fp16 on
   *     GPUs without bf16)
   * @param clusterOptions the cluster flags
   * @param clusterFallback the cluster string when {@code --cluster} is absent (from a plan file)
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @return the setup
   */
  static TrainingSetup of(ModelOptions modelOptions, ClusterOptions clusterOptions,
      String clusterFallback, int globalBatch, int microbatches) {
    return of(modelOptions.spec(), modelOptions.dtype != null, clusterOptions, clusterFallback,
        globalBatch, microbatches);
  }

  /**
   * Builds the setup for a model already read (for example from a plan file).
   *
   * @param m the model
   * @param explicitDtype whether the model's dtype is the training precision to use
   * @param clusterOptions the cluster flags
   * @param clusterFallback the cluster string when {@code --cluster} is absent
   * @param globalBatch sequences per iteration
   * @param microbatches fixed microbatches, or 0 for the planner's choice
   * @return the setup
   */
  static TrainingSetup of(ModelSpec m, boolean explicitDtype, ClusterOptions clusterOptions,
      String clusterFallback, int globalBatch, int microbatches) {
    ClusterSpec cs = clusterOptions.spec(clusterFallback);
    DType t = explicitDtype ? m.dtype() : cs.gpu().trainingType();
    if (t != DType.BF16 && t != DType.F16 && t != DType.F32) {
      throw new InputException("--dtype " + t.hloName() + " cannot train; use bf16, f16 or f32");
    }
    if (globalBatch <= 0) {
      throw new InputException("--global-batch must be positive, got " + globalBatch);
    }
    ModelSpec model = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffn(), m.vocab(), m.seq(), globalBatch, t, m.arch());
    var comm = clusterOptions.comm(cs);
    IlpLayerCostModel layers = new IlpLayerCostModel(model, cs, comm, t,
        SolverOptions.defaults());
    PlanRequest req = new PlanRequest(model, cs, globalBatch, microbatches,
        clusterOptions.memoryPerGpu(cs), comm, clusterOptions.p2p(cs), t.bytes(),
        clusterOptions.overlapGradReduce);
    return new TrainingSetup(model, cs, layers, req);
  }

  /**
   * The same setup, with the interleaved schedule allowed or not.
   *
   * @param allowed whether a plan may use the interleaved schedule
   * @return the setup
   */
  TrainingSetup withInterleaving(boolean allowed) {
    return new TrainingSetup(model, cluster, layers, request.withInterleaving(allowed));
  }
}
