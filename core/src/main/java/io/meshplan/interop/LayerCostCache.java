package io.meshplan.sweep;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.IlpLayerCostModel;
import io.meshplan.interop.LayerCostModel;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Layer prices shared by the points of a sweep. A layer's price (Alpa's intra-op ILP on the
 * logical mesh {@code 1 x t} of one replica, {@code t} at most the GPUs of a node) depends on the
 * model and sequence length, the microbatch, the tensor-parallel degree and the layer options,
 * and on the GPU type, the node's GPUs and the fabric (the catalog prices of a mesh inside one
 * node); it does not depend on the number of nodes or the global batch. Points that agree on
 * model, sequence, GPU, GPUs per node, fabric and precision therefore share one priced model, and
 * each layer is solved once per sweep instead of once per point.
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

  private final Map<Context, LayerCostModel> models =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Context, LayerCostModel> eldest) {
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
   * @param solver the ILP settings
   */
  record Context(ModelSpec model, io.meshplan.cluster.GpuSpec gpu, int gpusPerNode,
      io.meshplan.cluster.Fabric fabric, DType dtype,
      SolverOptions solver) {}

  /**
   * The shared layer model of a point's model on a cluster.
   *
   * @param model the model in its training precision, with the sequence length
   * @param cluster the cluster
   * @param solver the ILP settings
   * @return a model safe to use from several threads
   */
  public LayerCostModel layers(ModelSpec model, ClusterSpec cluster, SolverOptions solver) {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    ModelSpec key = new ModelSpec(model.name(), model.family(), model.layers(), model.hidden(),
        model.heads(), model.kvHeads(), model.ffn(), model.vocab(), model.seq(), 1,
        model.dtype(), model.arch());
    Context c = new Context(key, cluster.gpu(), cluster.gpusPerNode(), cluster.fabric(),
        model.dtype(), solver);
    synchronized (models) {
      // IlpLayerCostModel solves each layer once, also when several points ask at the same time.
      return models.computeIfAbsent(c, k -> new IlpLayerCostModel(model, cluster,
          mesh -> ClusterCommModels.catalog(cluster, mesh), model.dtype(), solver,
          new io.meshplan.exec.LocalExecutor(1)));
    }
  }
}
