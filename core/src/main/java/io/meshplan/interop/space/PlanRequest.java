package io.meshplan.interop.space;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.CommPricing;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.plan.RuntimeSpace;
import io.meshplan.util.Require;
import java.io.Serializable;
import java.util.function.Function;

/**
 * What the whole-cluster planner is asked, as a serializable value: a planning task that carries
 * it prices and plans alike in any process.
 *
 * @param model the model, with the sequence length to train
 * @param cluster the cluster
 * @param globalBatch sequences per iteration
 * @param fixedMicrobatches microbatches per iteration, or 0 to let the planner choose
 * @param memoryPerGpu memory available on one GPU, bytes
 * @param pricing where collective and send/recv prices come from
 * @param weightBytes bytes of one weight in the compute precision (2 for bf16/fp16, 4 for fp32)
 * @param overlaps what the framework overlaps and fuses
 * @param interleave whether the plan may use the interleaved 1F1B schedule (otherwise 1F1B)
 * @param attention how the attention core runs: fused (FlashAttention) or unfused
 * @param runtime what the runtime the plan is for can run ({@link RuntimeSpace#ANY} for none in
 *     particular): the search gives stages only the settings it holds
 */
public record PlanRequest(ModelSpec model, ClusterSpec cluster, int globalBatch,
    int fixedMicrobatches, double memoryPerGpu, CommPricing pricing, int weightBytes,
    Overlaps overlaps, boolean interleave, Attention attention, RuntimeSpace runtime)
    implements Serializable {
  private static final long serialVersionUID = 6L;

  /**
   * A request for no runtime in particular.
   *
   * @param model the model, with the sequence length to train
   * @param cluster the cluster
   * @param globalBatch sequences per iteration
   * @param fixedMicrobatches microbatches per iteration, or 0 to let the planner choose
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param pricing where collective and send/recv prices come from
   * @param weightBytes bytes of one weight in the compute precision
   * @param overlaps what the framework overlaps and fuses
   * @param interleave whether the plan may use the interleaved 1F1B schedule
   * @param attention how the attention core runs
   */
  public PlanRequest(ModelSpec model, ClusterSpec cluster, int globalBatch,
      int fixedMicrobatches, double memoryPerGpu, CommPricing pricing, int weightBytes,
      Overlaps overlaps, boolean interleave, Attention attention) {
    this(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing, weightBytes,
        overlaps, interleave, attention, RuntimeSpace.ANY);
  }

  /**
   * A request with unfused attention and nothing overlapped but, when asked, the gradient
   * reduction.
   *
   * @param model the model, with the sequence length to train
   * @param cluster the cluster
   * @param globalBatch sequences per iteration
   * @param fixedMicrobatches microbatches per iteration, or 0 to let the planner choose
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param pricing where collective and send/recv prices come from
   * @param weightBytes bytes of one weight in the compute precision
   * @param overlapGradSync whether the gradient reduction overlaps with the backward pass
   * @param interleave whether the plan may use the interleaved 1F1B schedule
   */
  public PlanRequest(ModelSpec model, ClusterSpec cluster, int globalBatch,
      int fixedMicrobatches, double memoryPerGpu, CommPricing pricing, int weightBytes,
      boolean overlapGradSync, boolean interleave) {
    this(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing, weightBytes,
        Overlaps.NONE.withGradReduce(overlapGradSync), interleave, Attention.UNFUSED);
  }

  /**
   * A request whose plan may use either 1F1B or the interleaved schedule.
   *
   * @param model the model, with the sequence length to train
   * @param cluster the cluster
   * @param globalBatch sequences per iteration
   * @param fixedMicrobatches microbatches per iteration, or 0 to let the planner choose
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param pricing where collective and send/recv prices come from
   * @param weightBytes bytes of one weight in the compute precision
   * @param overlapGradSync whether the gradient reduction overlaps with the backward pass
   */
  public PlanRequest(ModelSpec model, ClusterSpec cluster, int globalBatch,
      int fixedMicrobatches, double memoryPerGpu, CommPricing pricing, int weightBytes,
      boolean overlapGradSync) {
    this(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing, weightBytes,
        overlapGradSync, true);
  }

  /** Validates the fields. */
  public PlanRequest {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.positive(globalBatch, "global batch");
    Require.that(fixedMicrobatches >= 0, "microbatches must be >= 0");
    Require.that(memoryPerGpu > 0, "memory per GPU must be > 0");
    Require.nonNull(pricing, "pricing");
    Require.nonNull(attention, "attention");
    Require.nonNull(overlaps, "overlaps");
    Require.nonNull(runtime, "runtime");
    if (pricing.attentionKernel().equals(java.util.Optional.of(
        io.meshplan.cluster.AttentionKernel.CUDNN_FP8))
        && !io.meshplan.model.Fp8Training.on(model.dtype())) {
      throw new io.meshplan.util.InputException("cudnn-fp8 attention runs under the FP8 recipe "
          + "(Transformer Engine's fp8_dot_product_attention needs its FP8 autocast); the "
          + "training precision is " + io.meshplan.model.Fp8Training.word(model.dtype())
          + ": give --dtype fp8, or --attention cudnn");
    }
  }

  /**
   * The same request for a runtime that runs only what {@code space} holds; the interleaved
   * schedule stays allowed only where the space has it.
   *
   * @param space what the runtime can run
   * @return the request
   */
  public PlanRequest withRuntime(RuntimeSpace space) {
    return new PlanRequest(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing,
        weightBytes, overlaps, interleave && space.interleaved(), attention, space);
  }

  /**
   * The same request with other overlaps.
   *
   * @param o what the framework overlaps and fuses
   * @return the request
   */
  public PlanRequest withOverlaps(Overlaps o) {
    return new PlanRequest(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing,
        weightBytes, o, interleave, attention, runtime);
  }

  /**
   * The same request with the attention core run another way.
   *
   * @param a fused or unfused
   * @return the request
   */
  public PlanRequest withAttention(Attention a) {
    return new PlanRequest(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing,
        weightBytes, overlaps, interleave, a, runtime);
  }

  /**
   * The same request, with the interleaved schedule allowed or not.
   *
   * @param allowed whether the plan may use the interleaved schedule
   * @return the request
   */
  public PlanRequest withInterleaving(boolean allowed) {
    return new PlanRequest(model, cluster, globalBatch, fixedMicrobatches, memoryPerGpu, pricing,
        weightBytes, overlaps, allowed, attention, runtime);
  }

  /**
   * The same request with another microbatch count.
   *
   * @param microbatches microbatches per iteration, or 0 to let the planner choose
   * @return the request
   */
  public PlanRequest withMicrobatches(int microbatches) {
    return new PlanRequest(model, cluster, globalBatch, microbatches, memoryPerGpu, pricing,
        weightBytes, overlaps, interleave, attention, runtime);
  }

  /**
   * The same request with another memory budget.
   *
   * @param bytes memory available on one GPU, bytes
   * @return the request
   */
  public PlanRequest withMemoryPerGpu(double bytes) {
    return new PlanRequest(model, cluster, globalBatch, fixedMicrobatches, bytes, pricing,
        weightBytes, overlaps, interleave, attention, runtime);
  }

  /**
   * Collective prices on a logical mesh placed on the cluster's devices.
   *
   * @return seconds per collective, by mesh
   */
  public Function<LogicalMesh, CommModel> comm() {
    return mesh -> pricing.collectives(cluster, mesh);
  }

  /**
   * Prices of stage-to-stage transfers.
   *
   * @return seconds per transfer
   */
  public SendRecvModel p2p() {
    return pricing.sendRecv(cluster);
  }
}
