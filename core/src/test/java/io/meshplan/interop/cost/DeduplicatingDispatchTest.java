package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Overlaps;
import io.meshplan.sim.StageCost;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * DeepEP's and Hybrid-EP's exchanges in a stage: each token sent once per node it reaches, at
 * the published bandwidths, against NCCL's all-to-all of every routed copy.
 */
class DeduplicatingDispatchTest {
  private static final ClusterSpec CLUSTER = ClusterSpec.parse("2x8:h100-80gb:ib-ndr400");
  private static final Function<LogicalMesh, CommModel> MESHES =
      m -> ClusterCommModels.catalog(CLUSTER, m);
  private static final MoeShape QWEN = new MoeShape(128, 8, 768, 0, false);

  /**
   * Qwen3-30B-A3B's layer on EP 16 over the 2 nodes: 4,096 tokens of 2,048 bf16 elements, the
   * all-to-all buffer 8 copies of each, 4096 x 8 x 2048 x 2 = 134,217,728 bytes.
   */
  private static LayerCost block() {
    return LayerCost.builder().forwardSeconds(0.01).backwardSeconds(0.02)
        .parameters(4e6).gradientParameters(4e6).modelFlops(1e12).hardwareFlops(1e12)
        .experts(new ExpertExchange(16, 1, 3e6, 4096.0 * 8 * 2048 * 2, 2, 2, 0, 0, QWEN))
        .build();
  }

  private static StageCost stage(ExpertDispatcher d) {
    StageCostBuilder b = new StageCostBuilder(MESHES.apply(LogicalMesh.of(16, 1)), MESHES,
        CLUSTER, 1e12, 2, Overlaps.NONE.withDispatcher(d));
    return b.build(List.of(block()), 16, 1, 0, false);
  }

  /**
   * Hybrid-EP: 4,096 tokens x 1.99381 nodes (ExpectedPartsTest) x 2,048 x 2 bytes = 16,777,216
   * x 1.99381 = 33.45 MB per dispatch, at 54.47 GB/s and back at 53.35 GB/s (2
   * nodes; each GPU's 400 Gb/s NIC is the 50 GB/s they were measured with): 0.6141 + 0.6270 =
   * 1.2411 ms per pass. NCCL's all-to-all (CatalogCommModel) sends half the 134.2 MB buffer off
   * the node over the GPU's 50 GB/s NIC, 1.342 ms, and 7/16 of it over the 370.8 GB/s NCCL
   * reaches on an H100's NVLink (20.6 of each 25 GB/s link), 0.158 ms, with 3 us and 5 us of
   * latency: 1.5085 ms, twice per pass: 3.017 ms, 2.4 times as long.
   */
  @Test
  void hybridEpSendsEachTokenOncePerNode() {
    double bytes = 4096.0 * 2048 * 2 * QWEN.expectedParts(2);
    double pass = bytes / 54.47e9 + bytes / 53.35e9;
    assertThat(pass).isCloseTo(1.2411e-3, within(1e-6));
    StageCost h = stage(ExpertDispatcher.HYBRIDEP);
    assertThat(h.forwardSeconds()).isCloseTo(0.01 + pass, within(1e-12));
    assertThat(h.backwardSeconds()).isCloseTo(0.02 + pass, within(1e-12));
    StageCost a = stage(ExpertDispatcher.ALLTOALL);
    double allToAll = a.forwardSeconds() - 0.01;
    assertThat(allToAll).isCloseTo(3.017e-3, within(1e-6));
    assertThat(allToAll / pass).isGreaterThan(2);
    // DeepEP's 2-node figures, 43 GB/s both ways, are slower than Hybrid-EP's on H100.
    StageCost deep = stage(ExpertDispatcher.DEEPEP);
    assertThat(deep.forwardSeconds() - 0.01).isCloseTo(2 * bytes / 43e9, within(1e-12));
  }

  /** The bus bytes count each token once per destination, both ways. */
  @Test
  void theBytesCountEachDestinationOnce() {
    StageCost h = stage(ExpertDispatcher.HYBRIDEP);
    double bytes = 4096.0 * 2048 * 2 * QWEN.expectedParts(2);
    assertThat(h.commBytes().expertPerMicrobatch()).isCloseTo(2 * 2 * bytes, within(1.0));
    assertThat(h.commBytes().dataPerMicrobatch()).isZero();
  }
}
