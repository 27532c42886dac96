package io.meshplan.plan;

import io.meshplan.util.Require;

/**
 * Communication volume of one training iteration by mesh axis, in bytes sent (the simulator's
 * count, see {@code io.meshplan.sim.CommVolume}): collectives counted as nccl-tests counts bus
 * bytes ({@code 2(n-1)/n * S} per GPU for a ring all-reduce of {@code S} bytes over {@code n} GPUs,
 * {@code (n-1)/n * S} for all-gather and reduce-scatter), pipeline transfers once at the sender.
 *
 * @param tensorParallel bytes of the tensor-parallel collectives and reshardings inside the layers
 * @param dataParallel bytes of the data-parallel gradient reduction and (ZeRO) parameter gathers
 * @param pipeline bytes of pipeline send/recv of activations and their gradients
 * @param expertParallel bytes of the expert-parallel exchange (mixture-of-experts dispatch and
 *     combine)
 * @param contextParallel bytes of the context-parallel exchange
 */
public record AxisBytes(double tensorParallel, double dataParallel, double pipeline,
    double expertParallel, double contextParallel) {
  /** Checks that every size is finite and not negative. */
  public AxisBytes {
    Require.nonNegative(tensorParallel, "tensor-parallel bytes");
    Require.nonNegative(dataParallel, "data-parallel bytes");
    Require.nonNegative(pipeline, "pipeline bytes");
    Require.nonNegative(expertParallel, "expert-parallel bytes");
    Require.nonNegative(contextParallel, "context-parallel bytes");
  }

  /**
   * Volumes without expert or context parallelism.
   *
   * @param tensorParallel bytes of the tensor-parallel collectives and reshardings
   * @param dataParallel bytes of the data-parallel gradient reduction and parameter gathers
   * @param pipeline bytes of pipeline send/recv
   */
  public AxisBytes(double tensorParallel, double dataParallel, double pipeline) {
    this(tensorParallel, dataParallel, pipeline, 0, 0);
  }

  /**
   * All axes together.
   *
   * @return bytes
   */
  public double total() {
    return tensorParallel + dataParallel + pipeline + expertParallel + contextParallel;
  }
}
