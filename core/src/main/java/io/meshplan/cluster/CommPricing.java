package io.meshplan.cluster;

import java.io.Serializable;

/**
 * Where the prices of collectives and stage-to-stage transfers (and a measured compute scale)
 * come from, as a serializable value
 * so that a planning task can rebuild them in another process: the catalog or a calibration
 * profile ({@code planner.Pricing} names both). Implementations are values: two equal pricings
 * price every transfer alike, so layer prices may be shared between them.
 */
public interface CommPricing extends Serializable {
  /**
   * The collective prices on a logical mesh placed on the cluster's devices.
   *
   * @param cluster the cluster
   * @param mesh the logical mesh
   * @return seconds per collective
   */
  CommModel collectives(ClusterSpec cluster, LogicalMesh mesh);

  /**
   * The prices of stage-to-stage transfers.
   *
   * @param cluster the cluster
   * @return seconds per transfer
   */
  SendRecvModel sendRecv(ClusterSpec cluster);

  /**
   * How much faster than the kernel model's defaults a GPU's kernels run, measured from training
   * logs ({@code meshplan calibrate --train}); it divides every compute time ({@link
   * KernelTimeModel#scaled}). Collectives are not scaled. The catalog has none: 1.
   *
   * @param gpu the GPU
   * @return the scale, > 0
   */
  default double computeScale(GpuSpec gpu) {
    return 1;
  }

  /**
   * The fused attention kernel runs are priced as ({@link FusedAttentionKernels#of(GpuSpec,
   * java.util.Optional)}).
   *
   * @return the kernel, or empty for each architecture's default
   */
  default java.util.Optional<AttentionKernel> attentionKernel() {
    return java.util.Optional.empty();
  }
}
