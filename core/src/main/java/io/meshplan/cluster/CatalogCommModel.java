package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * Prices collectives from catalog (datasheet) bandwidths, hierarchically: the part of a group inside
 * a node moves over NVLink, the part between nodes over the NICs.
 *
 * <p>Let an axis group have n ranks spread over k nodes with m ranks per node (n = k*m), let g
 * groups share each node's NICs, B the buffer in bytes (as defined per method of {@link
 * CommModel}), f_c(x) the nccl-tests bus factor of collective c on x ranks (2(x-1)/x for all-reduce,
 * (x-1)/x for all-gather and reduce-scatter), W_nv the per-GPU NVLink bandwidth and W_net = (node
 * NIC bandwidth) / g the fabric bandwidth left to one group on one node. Then
 *
 * <pre>
 *   t = [m &gt; 1] (L_nv + f_c(m) * B / W_nv)  +  [k &gt; 1] (s_c(k) * L_net + f_c(k) * B / W_net)
 * </pre>
 *
 * where s_c(k) is the number of sequential network steps of a ring: 2(k-1) for all-reduce, k-1
 * for all-gather and reduce-scatter. For all-reduce NCCL can also use its double binary tree, whose
 * 2 ceil(log2 k) steps cost less latency and which moves about 2B per rank:
 * {@code 2 ceil(log2 k) L_net + 2 B / W_net}; the cheaper of ring and tree is taken, so tree wins
 * for small messages on many nodes and ring for large ones.
 *
 * which is the time of NCCL's ring algorithm written level by level: a ring all-reduce moves
 * 2(n-1)/n of the buffer through every rank, at the speed of the slowest link it crosses (nccl-tests
 * {@code doc/PERFORMANCE.md}, "Bandwidth"); a hierarchical all-reduce (reduce-scatter inside the node,
 * all-reduce of the 1/m shard across nodes with the m GPUs of a node driving its NICs in parallel,
 * all-gather inside the node) costs exactly the sum above. One GPU per node (m = 1) leaves only the
 * fabric term, one node (k = 1) only the NVLink term.
 *
 * <p>All-to-all cannot be reduced hierarchically: each rank sends (k-1)/k of its buffer off-node
 * over its share W_net/m of the NICs and (m-1)/n of it over NVLink, so t = [m&gt;1](L_nv + (m-1)/n * B
 * / W_nv) + [k&gt;1](L_net + (k-1)/k * B * m / W_net). The two phases are added, not overlapped,
 * which errs on the slow side.
 *
 * <p>W_nv is the NVLink bandwidth NCCL reaches, not the datasheet's line rate: {@link
 * GpuSpec#collectiveBandwidth}, NCCL's own per-link figure ({@link
 * Architecture#ncclLinkFraction}). On a fully connected mesh (AMD Infinity Fabric) it is what the
 * group's m - 1 direct links carry ({@link GpuSpec#intraNodeBandwidth}), not the GPU's whole link
 * bandwidth.
 *
 * <p>L_nv is {@link #NVLINK_LATENCY_SECONDS}; L_net the fabric latency. Costs are in seconds.
 */
public final class CatalogCommModel implements CollectiveCommModel {
  /** Latency of one small NCCL collective inside a node over NVLink, in seconds (order of magnitude). */
  public static final double NVLINK_LATENCY_SECONDS = 3e-6;

  private final ClusterSpec cluster;
  private final LogicalMesh mesh;
  private final AxisPlacement[] placements;

  /**
   * Creates the model.
   *
   * @param cluster the cluster
   * @param mesh the logical mesh, mapped row-major onto device ids
   */
  public CatalogCommModel(ClusterSpec cluster, LogicalMesh mesh) {
    this.cluster = Require.nonNull(cluster, "cluster");
    this.mesh = Require.nonNull(mesh, "mesh");
    this.placements = new AxisPlacement[mesh.rank()];
    for (int a = 0; a < mesh.rank(); a++) {
      placements[a] = AxisPlacement.of(cluster, mesh, a);
    }
  }

  @Override
  public LogicalMesh mesh() {
    return mesh;
  }

  /**
   * The placement of an axis.
   *
   * @param axis the axis
   * @return where its groups land
   */
  public AxisPlacement placement(int axis) {
    return placements[axis];
  }

  /**
   * The cost of a collective on an axis, by the formula in the class comment.
   *
   * @param collective the collective
   * @param bytes the buffer, in bytes
   * @param axis the axis
   * @return seconds
   */
  @Override
  public double cost(Collective collective, double bytes, int axis) {
    AxisPlacement p = placements[axis];
    int n = p.groupSize();
    if (n == 1) {
      return 0.0;
    }
    int k = p.nodesSpanned();
    int m = p.gpusPerNodeInGroup();
    double wNv = cluster.gpu().collectiveBandwidth(m);
    double wNet = cluster.nodeNetworkBandwidth() / p.groupsPerNode();
    double t = 0.0;
    if (collective == Collective.ALL_TO_ALL) {
      if (m > 1) {
        t += NVLINK_LATENCY_SECONDS + (double) (m - 1) / n * bytes / wNv;
      }
      if (k > 1) {
        t += cluster.fabric().latency() + (double) (k - 1) / k * bytes * m / wNet;
      }
      return t;
    }
    if (m > 1) {
      t += NVLINK_LATENCY_SECONDS + collective.busFactor(m) * bytes / wNv;
    }
    if (k > 1) {
      double lat = cluster.fabric().latency();
      double ring = ringSteps(collective, k) * lat + collective.busFactor(k) * bytes / wNet;
      if (collective == Collective.ALL_REDUCE) {
        int depth = 32 - Integer.numberOfLeadingZeros(k - 1);
        double tree = 2.0 * depth * lat + 2.0 * bytes / wNet;
        ring = Math.min(ring, tree);
      }
      t += ring;
    }
    return t;
  }

  /** Sequential network steps of a ring over k nodes: 2(k-1) for all-reduce, k-1 otherwise. */
  private static int ringSteps(Collective c, int k) {
    return switch (c) {
      case ALL_REDUCE -> 2 * (k - 1);
      case ALL_GATHER, REDUCE_SCATTER -> k - 1;
      default -> 1;
    };
  }




}
