package io.meshplan.cluster;

/**
 * Prices point-to-point transfers between pipeline stages (NCCL send/recv, nccl-tests {@code
 * sendrecv_perf}, Alpa's {@code SendRecv} profile lines). Each GPU of a stage sends its slice of the
 * boundary activation to one peer of the next stage; all pairs run at once.
 */
public interface SendRecvModel {
  /**
   * The time of a transfer.
   *
   * @param bytes bytes each pair moves, in one direction
   * @param pairsPerNode pairs sending at once out of one node (they share its NICs); at least 1
   * @param level {@link LinkLevel#INTRA_NODE} when the peers share a node (NVLink), else
   *     {@link LinkLevel#INTER_NODE}
   * @return seconds
   */
  double sendRecv(double bytes, int pairsPerNode, LinkLevel level);

  /**
   * The catalog price: one latency plus bytes over NVLink at the bandwidth NCCL reaches there
   * ({@link GpuSpec#collectiveBandwidth}), or over the node's NIC bandwidth shared
   * by the pairs leaving the node (never more than one NIC per pair).
   *
   * @param cluster the cluster
   * @return the model
   */
  static SendRecvModel catalog(ClusterSpec cluster) {
    return (bytes, pairsPerNode, level) -> {
      if (bytes <= 0) {
        return 0.0;
      }
      if (level == LinkLevel.INTRA_NODE) {
        return CatalogCommModel.NVLINK_LATENCY_SECONDS
            + bytes / cluster.gpu().collectiveBandwidth(2);
      }
      int pairs = Math.max(1, pairsPerNode);
      double perPair = Math.min(cluster.fabric().nicBandwidth(),
          cluster.nodeNetworkBandwidth() / pairs);
      return cluster.fabric().latency() + bytes / perPair;
    };
  }
}
