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
 */
public record AxisBytes(double tensorParallel, double dataParallel, double pipeline) {
  /** Checks that every size is finite and not negative. */
  public AxisBytes {
    Require.nonNegative(tensorParallel, "tensor-parallel bytes");
    Require.nonNegative(dataParallel, "data-parallel bytes");
    Require.nonNegative(pipeline, "pipeline bytes");
  }

  /**
   * All axes together.
   *
   * @return bytes
   */
  public double total() {
    return tensorParallel + dataParallel + pipeline;
  }
}
