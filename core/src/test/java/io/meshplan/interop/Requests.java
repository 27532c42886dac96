package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.planner.Pricing;

/**
 * Planning requests priced by the catalog, for the search's own tests: the GPU's whole memory and
 * the model's precision, not the product's defaults (a job built as the command line builds it is
 * {@code TrainingJob.of} priced by {@code Planner.price}).
 */
final class Requests {
  private Requests() {}

  static ModelSpec training(ModelSpec m, int globalBatch, DType t) {
    return new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffn(), m.vocab(), m.seq(), globalBatch, t, m.arch());
  }

  static PlanRequest of(ModelSpec m, String cluster, int globalBatch, boolean overlap) {
    ClusterSpec cs = ClusterSpec.parse(cluster);
    return new PlanRequest(m, cs, globalBatch, 0, cs.gpu().hbmBytes(), Pricing.catalog(),
        m.dtype().bytes(), overlap);
  }

  static IlpLayerCostModel layers(PlanRequest req) {
    return new IlpLayerCostModel(req.model(), req.cluster(), req.comm(), req.model().dtype(),
        SolverOptions.defaults());
  }
}
