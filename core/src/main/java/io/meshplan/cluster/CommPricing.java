package io.meshplan.cluster;

import java.io.Serializable;

/**
 * Where the prices of collectives and stage-to-stage transfers come from, as a serializable value
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
}
