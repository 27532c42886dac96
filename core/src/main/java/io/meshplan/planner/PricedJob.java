package io.meshplan.planner;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;

/**
 * A job with its prices: the planner's request and the layer prices every search, simulation and
 * report of the job uses ({@link Planner#price}).
 *
 * @param job the job
 * @param pricing the collective and send/recv prices
 * @param request the whole-cluster planner's request
 * @param layers the layer prices (Alpa's intra-operator ILP of each layer)
 */
public record PricedJob(TrainingJob job, Pricing pricing, PlanRequest request,
    IlpLayerCostModel layers) {
  /** Validates the fields. */
  public PricedJob {
    Require.nonNull(job, "job");
    Require.nonNull(pricing, "pricing");
    Require.nonNull(request, "request");
    Require.nonNull(layers, "layers");
  }

  /**
   * The model as trained: its global batch and training precision.
   *
   * @return the model
   */
  public ModelSpec model() {
    return request.model();
  }

  /**
   * The cluster.
   *
   * @return the cluster
   */
  public ClusterSpec cluster() {
    return request.cluster();
  }
}
