package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * What DeepEP's and Hybrid-EP's dispatch and combine kernels reach, as their authors measured
 * them. Both report a "bottleneck" (DeepEP) or "algorithm" (Hybrid-EP) bandwidth: bytes of the
 * tokens a GPU sends once to each destination, over the kernel's time. Across nodes a token is
 * counted once per node it reaches, its own node included (DeepEP {@code
 * tests/legacy/test_internode.py}: {@code num_rdma_token_sent * hidden * 2}; Hybrid-EP {@code
 * tests/utils.py}, {@code count_rdma_send_from_routing_map}, which keeps the local node "to align
 * with the implementation in the DeepEP"); inside a node, once per GPU it reaches. So a kernel
 * moving {@code T} tokens of {@code h} elements of {@code b} bytes to {@code U} destinations on
 * average takes {@code T U h b / B} seconds at bandwidth {@code B} ({@link
 * io.meshplan.model.MoeShape#expectedParts} gives {@code U}).
 *
 * <p>Figures, all with 4,096 tokens of hidden size 7,168 routed to 8 experts each:
 * <ul>
 *   <li><b>Hopper, across nodes, Hybrid-EP</b>: H100 with one 400 Gb/s NIC per GPU, 8 local
 *       experts, uniform routing, PyTorch API at 16 streaming multiprocessors (DeepSeek-V3's
 *       H100 recipe in Megatron-Bridge sets {@code moe_hybridep_num_sms = 16}): BF16 dispatch
 *       54.47, 47.36, 41.24 GB/s and combine 53.35, 52.53, 46.57 GB/s on 2, 4 and 8 nodes
 *       (16, 32, 64 ranks) (DeepEP repository, branch {@code hybrid-ep} at 94a9f8f, {@code
 *       docs/README_Hybrid-EP.md}, "H100 Platform");
 *   <li><b>Hopper, across nodes, DeepEP</b>: H800 with a CX7 400 Gb/s NIC per GPU, DeepSeek-V3's
 *       routing (top 4 groups), FP8 dispatch and BF16 combine: dispatch 43, 58, 51 GB/s and
 *       combine 43, 57, 50 GB/s on 2, 4 and 8 nodes (DeepEP at dd758ca, {@code docs/legacy.md},
 *       "Normal kernels with NVLink and RDMA forwarding");
 *   <li><b>Hopper, inside a node</b>: the same DeepEP table's 8 ranks, 153 GB/s dispatch and
 *       158 GB/s combine of H800's "~160 GB/s NVLink maximum": 0.956 and 0.988 of NVLink, the
 *       only published Hopper figure inside a node, used for both kernels;
 *   <li><b>Blackwell, inside one NVLink domain, Hybrid-EP</b>: GB200 over multi-node NVLink,
 *       PyTorch API, 32 streaming multiprocessors (what Megatron-Bridge's benchmark recipes set,
 *       {@code perf_recipes/_common.py}, {@code _benchmark_common}: {@code moe_hybridep_num_sms =
 *       32}, at 067f987), BF16 dispatch and combine by the group's ranks: 545.71 and 568.94 GB/s
 *       at 8, 523.48 and 521.55 at 16, 507.32 and 483.76 at 24, 484.22 and 464.54 at 32, 479.02
 *       and 447.89 at 36 ({@code docs/README_Hybrid-EP.md}, "GB200 Platform"), each over NVLink
 *       5's 900 GB/s per direction; between the published rank counts interpolated linearly in
 *       the logarithm of the ranks, beyond 36 the 36-rank figure, below 8 the 8-rank one. A
 *       group spread over more GPUs of the domain shares more of the switch and sends smaller
 *       pieces: 16-21% less bandwidth at 36 ranks than at 8;
 *   <li><b>Blackwell, inside a node, DeepEP</b>: B200, 8 ranks, PyTorch API: 348 and 302 GB/s
 *       at 16 and 494 and 420 GB/s at 24 multiprocessors, read at Megatron-Core's former default
 *       of 20 ({@code moe_deepep_num_sms}) as their means, 421 and 361 GB/s over NVLink 5's 900
 *       GB/s per direction ({@code docs/README_Hybrid-EP.md}, "B200 Platform"), at every rank
 *       count;
 *   <li><b>Blackwell, across nodes</b>: SM100 with CX7, EP 8 x 2, 90 GB/s dispatch and 91 GB/s
 *       combine (DeepEP at dd758ca, {@code README.md}, "Performance"), the only published
 *       Blackwell figure over RDMA, used for both kernels.
 * </ul>
 * Between the published node counts the bandwidth is interpolated linearly in the logarithm of
 * the nodes; beyond them the nearest count's figure is kept (DeepEP: "we expect the kernel to
 * continue saturating hardware bandwidth at scale"). Across nodes the figures scale with the
 * fabric bandwidth a GPU has, over the 50 GB/s of the 400 Gb/s NIC they were measured with;
 * inside a node with the GPU's NVLink bandwidth. Volta and Ampere have no published figure and
 * are refused.
 */
public final class ExpertDispatchBandwidth {
  /** The fabric bandwidth per GPU the figures across nodes were measured with: 400 Gb/s. */
  public static final double MEASURED_NIC_BYTES_PER_SECOND = 50e9;

  /** Nodes of the published figures across nodes. */
  private static final int[] NODES = {2, 4, 8};
  private static final double[] HOPPER_HYBRID_DISPATCH = {54.47e9, 47.36e9, 41.24e9};
  private static final double[] HOPPER_HYBRID_COMBINE = {53.35e9, 52.53e9, 46.57e9};
  private static final double[] HOPPER_DEEPEP_DISPATCH = {43e9, 58e9, 51e9};
  private static final double[] HOPPER_DEEPEP_COMBINE = {43e9, 57e9, 50e9};
  private static final double[] BLACKWELL_DISPATCH = {90e9, 90e9, 90e9};
  private static final double[] BLACKWELL_COMBINE = {91e9, 91e9, 91e9};
  /** Ranks of the published Blackwell Hybrid-EP figures inside one NVLink domain (GB200). */
  private static final int[] DOMAIN_RANKS = {8, 16, 24, 32, 36};
  private static final double[] BLACKWELL_DOMAIN_HYBRID_DISPATCH =
      {545.71e9, 523.48e9, 507.32e9, 484.22e9, 479.02e9};
  private static final double[] BLACKWELL_DOMAIN_HYBRID_COMBINE =
      {568.94e9, 521.55e9, 483.76e9, 464.54e9, 447.89e9};
  /** NVLink 5's bandwidth per direction, over which the Blackwell figures were measured. */
  private static final double NVLINK5_BYTES_PER_SECOND = 900e9;

  private ExpertDispatchBandwidth() {}

  /**
   * Refuses DeepEP or Hybrid-EP on a GPU without a published figure.
   *
   * @param dispatcher the dispatcher's name, for the message
   * @param gpu the GPU
   */
  public static void check(String dispatcher, GpuSpec gpu) {
    Architecture a = gpu.architecture();
    if (a != Architecture.HOPPER && a != Architecture.BLACKWELL) {
      throw new InputException("--moe-dispatcher " + dispatcher + " has no published bandwidth "
          + "on " + a.word() + " (" + gpu.name() + "); use --moe-dispatcher alltoall");
    }
  }

  /**
   * The bandwidth of one dispatch (or combine) over the expert-parallel group.
   *
   * @param hybridEp Hybrid-EP rather than DeepEP
   * @param combine the combine rather than the dispatch
   * @param cluster the cluster
   * @param nodes nodes the expert-parallel group spans
   * @param ranks the group's GPUs, >= 1 (read inside a node)
   * @param fabricPerGpu the fabric bandwidth one GPU of the group has, bytes/s (ignored inside a
   *     node)
   * @return bytes/s, counted as the class comment says
   */
  public static double of(boolean hybridEp, boolean combine, ClusterSpec cluster, int nodes,
      int ranks, double fabricPerGpu) {
    Require.positive(nodes, "nodes");
    Require.positive(ranks, "ranks");
    GpuSpec gpu = cluster.gpu();
    check(hybridEp ? "hybridep" : "deepep", gpu);
    boolean hopper = gpu.architecture() == Architecture.HOPPER;
    if (nodes == 1 && hopper) {
      return (combine ? 158.0 : 153.0) / 160.0 * gpu.nvlinkBandwidth();
    }
    if (nodes == 1) {
      double measured = hybridEp ? interpolate(DOMAIN_RANKS,
          combine ? BLACKWELL_DOMAIN_HYBRID_COMBINE : BLACKWELL_DOMAIN_HYBRID_DISPATCH, ranks)
          : (combine ? 361e9 : 421e9);
      return measured / NVLINK5_BYTES_PER_SECOND * gpu.nvlinkBandwidth();
    }
    double[] table = hopper
        ? (hybridEp
            ? (combine ? HOPPER_HYBRID_COMBINE : HOPPER_HYBRID_DISPATCH)
            : (combine ? HOPPER_DEEPEP_COMBINE : HOPPER_DEEPEP_DISPATCH))
        : (combine ? BLACKWELL_COMBINE : BLACKWELL_DISPATCH);
    Require.that(fabricPerGpu > 0, "fabric bandwidth per GPU must be > 0");
    return interpolate(NODES, table, nodes) * fabricPerGpu / MEASURED_NIC_BYTES_PER_SECOND;
  }

  /**
   * A table at {@code n}, linear in log2(n) between its points, clamped outside.
   *
   * @param at the table's counts, increasing
   * @param table its figures
   * @param n the count to read at, >= 1
   */
  static double interpolate(int[] at, double[] table, int n) {
    if (n <= at[0]) {
      return table[0];
    }
    for (int i = 1; i < at.length; i++) {
      if (n <= at[i]) {
        double x = (Math.log(n) - Math.log(at[i - 1])) / (Math.log(at[i]) - Math.log(at[i - 1]));
        return table[i - 1] + x * (table[i] - table[i - 1]);
      }
    }
    return table[table.length - 1];
  }
}
