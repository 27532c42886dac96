package io.meshplan.sweep;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.interop.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.io.Serializable;

/**
 * A whole-cluster planning question as a serializable value, so that another process can plan it:
 * a {@link PlanRequest} priced from the cluster's catalog values (collectives and send/recv).
 *
 * @param model the model in its training precision, with the sequence length
 * @param cluster the cluster
 * @param globalBatch sequences per iteration
 * @param fixedMicrobatches microbatches per iteration, or 0 for the planner's choice
 * @param memoryPerGpu memory a plan may use on one GPU, bytes
 * @param weightBytes bytes of one weight in the compute precision
 * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
 * @param interleave whether the plan may use the interleaved 1F1B schedule
 */
public record PlanQuestion(ModelSpec model, ClusterSpec cluster, int globalBatch,
    int fixedMicrobatches, double memoryPerGpu, int weightBytes, boolean overlapGradReduce,
    boolean interleave) implements Serializable {
  private static final long serialVersionUID = 2L;

  /**
   * A question whose plan may use either 1F1B or the interleaved schedule.
   *
   * @param model the model in its training precision, with the sequence length
   * @param cluster the cluster
   * @param globalBatch sequences per iteration
   * @param fixedMicrobatches microbatches per iteration, or 0 for the planner's choice
   * @param memoryPerGpu memory a plan may use on one GPU, bytes
   * @param weightBytes bytes of one weight in the compute precision
   * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
   */
  public PlanQuestion(ModelSpec model, ClusterSpec cluster, int globalBatch,
      int fixedMicrobatches, double memoryPerGpu, int weightBytes, boolean overlapGradReduce) {
    this(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, weightBytes,
        overlapGradReduce, true);
  }

  /** Validates the fields. */
  public PlanQuestion {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.positive(globalBatch, "global batch");
    Require.that(fixedMicrobatches >= 0, "microbatches must be >= 0");
    Require.that(memoryPerGpu > 0, "memory per GPU must be > 0");
  }

  /**
   * The planner's request with another microbatch count.
   *
   * @param microbatches microbatches per iteration, or 0 for the planner's choice
   * @return the request
   */
  public PlanRequest request(int microbatches) {
    ClusterSpec cs = cluster;
    return new PlanRequest(model, cs, globalBatch, microbatches, memoryPerGpu,
        mesh -> ClusterCommModels.catalog(cs, mesh), SendRecvModel.catalog(cs), weightBytes,
        overlapGradReduce, interleave);
  }
}
