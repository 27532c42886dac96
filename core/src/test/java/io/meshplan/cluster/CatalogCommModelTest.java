package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * 2 nodes x 8 H100: NVLink 450e9 B/s per GPU and direction on the datasheet, of which NCCL's
 * collectives reach 20.6/25 (NCCL's SM90_NVLINK_BW per 25 GB/s link): 370.8e9 B/s; 8 NDR400 NICs
 * = 8 * 50e9 = 400e9 B/s per node; latencies 3 us (NVLink) and 5 us (InfiniBand).
 * A100: 300e9 * 20/25 (SM80_NVLINK_BW) = 240e9 B/s.
 */
class CatalogCommModelTest {
  private final ClusterSpec cluster = ClusterSpec.parse("2x8:h100-80gb");
  private static final double GB = 1e9;

  @Test
  void axisInsideANodeIsPricedFromNvlink() {
    CommModel m = ClusterCommModels.catalog(cluster, LogicalMesh.of(2, 8));
    // axis 1: 8 ranks on one node. 3e-6 + 2*7/8 * 1e9 / 370.8e9 = 3e-6 + 4.719525e-3
    // (at the datasheet's 450e9 it was 3.891889e-3)
    assertThat(m.allReduce(GB, 1)).isCloseTo(4.722525e-3, within(1e-9));
    // all-gather: 3e-6 + 7/8 * 1e9 / 370.8e9 = 3e-6 + 2.359763e-3
    assertThat(m.allGather(GB, 1)).isCloseTo(2.362763e-3, within(1e-9));
  }

  @Test
  void axisAcrossNodesIsPricedFromTheNics() {
    CommModel m = ClusterCommModels.catalog(cluster, LogicalMesh.of(2, 8));
    // axis 0: groups {d, d+8}, one GPU per node, 8 groups share each node's 400e9 B/s
    // -> 50e9 B/s each. Ring: 2 steps * 5e-6 + 2*1/2 * 1e9 / 50e9 = 1e-5 + 0.02; the tree
    // (2 * 1 * 5e-6 + 2 * 1e9 / 50e9 = 0.04001) is slower.
    assertThat(m.allReduce(GB, 0)).isCloseTo(0.02001, within(1e-9));
  }

  @Test
  void groupSpanningNodesIsHierarchical() {
    CommModel m = ClusterCommModels.catalog(cluster, LogicalMesh.of(16));
    // 16 ranks = 2 nodes x 8: NVLink part 3e-6 + 1.75e9/370.8e9 = 4.722525e-3,
    // NIC part (one group uses all 400e9 B/s) 2 * 5e-6 + 2*1/2 * 1e9/400e9 = 2.51e-3.
    assertThat(m.allReduce(GB, 0)).isCloseTo(7.232525e-3, within(1e-9));
    // all-to-all: 3e-6 + 7/16 * 1e9/370.8e9 + 5e-6 + 1/2 * 1e9 * 8 / 400e9
    //           = 3e-6 + 1.179881e-3 + 5e-6 + 0.01 = 11.187881e-3
    assertThat(m.allToAll(GB, 0)).isCloseTo(11.187881e-3, within(1e-9));
  }

  @Test
  void fourGpuNodesShareFourNics() {
    // 50 x 4 A100 with HDR200: 4 NICs in use = 100e9 B/s per node, shared by the 4 groups of
    // axis 0 -> 25e9 each. Ring: 98 steps * 5e-6 + 2*49/50 * 1e9 / 25e9 = 4.9e-4 + 0.0784;
    // tree: 2 * 6 * 5e-6 + 2 * 1e9 / 25e9 = 6e-5 + 0.08, slower for 1 GB.
    CommModel m = ClusterCommModels.catalog(ClusterSpec.parse("50x4:a100-40gb"),
        LogicalMesh.of(50, 4));
    assertThat(m.allReduce(GB, 0)).isCloseTo(0.07889, within(1e-9));
    // For 1 MB the tree wins: 6e-5 + 2 * 1e6 / 25e9 = 1.4e-4 (ring: 4.9e-4 + 7.84e-5).
    assertThat(m.allReduce(1e6, 0)).isCloseTo(1.4e-4, within(1e-12));
    // axis 1 stays in a node: 3e-6 + 2*3/4 * 1e9 / 240e9 = 3e-6 + 6.25e-3
    assertThat(m.allReduce(GB, 1)).isCloseTo(6.253e-3, within(1e-9));
  }

  @Test
  void axisOfOneIsFree() {
    CommModel m = ClusterCommModels.catalog(cluster, LogicalMesh.of(1, 16));
    assertThat(m.allReduce(GB, 0)).isZero();
  }

  @Test
  void placementDescribesTheGroups() {
    AxisPlacement p = AxisPlacement.of(cluster, LogicalMesh.of(4, 4), 0);
    // axis 0 of 4x4: stride 4, groups {0,4,8,12}: nodes 0,0,1,1 -> 2 nodes, 2 per node;
    // node 0 holds members of groups starting at 0,1,2,3 -> 4 groups per node.
    assertThat(p).isEqualTo(new AxisPlacement(4, 2, 2, 4));
  }
}
