package io.meshplan.interop.cost;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Layer prices shared by the plans of one process: the points of a sweep, and the planning tasks
 * an engine runs in an executor process. A layer's price (Alpa's intra-op ILP on the
 * logical mesh {@code 1 x t} of one replica, {@code t} at most the GPUs of a node) depends on the
 * model and sequence length, the microbatch, the tensor-parallel degree and the layer options,
 * and on the GPU type, the node's GPUs and the fabric (the catalog prices of a mesh inside one
 * node) and the pricing; it does not depend on the number of nodes or the global batch. Plans that
 * agree on model, sequence, GPU, GPUs per node, fabric, pricing and precision therefore share one
 * priced model, and each layer is solved once per process instead of once per plan.
 *
 * <p>The cache keeps the models of the {@value #MAX_CONTEXTS} most recently used contexts.
 */
public final class LayerCostCache {
  /** The most contexts kept; the least recently used one is dropped beyond this. */
  static final int MAX_CONTEXTS = 64;

  /**
   * One process's cache: an executor process of a distributed engine deserializes the sweep's
   * task for every point, so a cache that lives with the process is what lets the points it runs
   * share their layer prices.
   */
  private static final LayerCostCache PROCESS = new LayerCostCache();

  private final Map<Context, IlpLayerCostModel> models =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Context, IlpLayerCostModel> eldest) {
          return size() > MAX_CONTEXTS;
        }
      };

  /**
   * The cache of this process.
   *
   * @return the process-wide cache
   */
  public static LayerCostCache processWide() {
    return PROCESS;
  }

  /**
   * What a layer's price depends on besides the layer setting.
   *
   * @param model the model with its sequence length (its batch field set to 1)
   * @param gpu the GPU (catalog values or a cluster file's overrides)
   * @param gpusPerNode GPUs per node
   * @param fabric the fabric
   * @param dtype the compute precision
   * @param pricing the collective prices
   * @param solver the ILP settings
   * @param attention how the attention core runs
   * @param fusedLoss whether the cross-entropy loss is one fused kernel
   */
  record Context(ModelSpec model, io.meshplan.cluster.GpuSpec gpu, int gpusPerNode,
      io.meshplan.cluster.Fabric fabric, DType dtype, io.meshplan.cluster.CommPricing pricing,
      SolverOptions solver, io.meshplan.model.Attention attention, boolean fusedLoss) {}

  /**
   * The shared layer model of a request's model on its cluster, with its pricing.
   *
   * @param req the request; its model in its training precision, with the sequence length
   * @param solver the ILP settings
   * @return a model safe to use from several threads
   */
  public IlpLayerCostModel layers(PlanRequest req, SolverOptions solver) {
    Require.nonNull(req, "request");
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    ModelSpec key = model.withTraining(1, model.dtype());
    Context c = new Context(key, cluster.gpu(), cluster.gpusPerNode(), cluster.fabric(),
        model.dtype(), req.pricing(), solver, req.attention(), req.overlaps().lossFusion());
    synchronized (models) {
      // IlpLayerCostModel solves each layer once, also when several points ask at the same time.
      return models.computeIfAbsent(c, k -> new IlpLayerCostModel(model, cluster, req.comm(),
          model.dtype(), req.attention(), req.overlaps().lossFusion(),
          req.pricing().computeScale(cluster.gpu()), req.pricing().attentionKernel(), solver,
          new io.meshplan.exec.LocalExecutor(1)));
    }
  }
}
