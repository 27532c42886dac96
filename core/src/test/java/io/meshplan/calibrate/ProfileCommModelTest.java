package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.cluster.LogicalMesh;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ProfileCommModelTest {
  // intra-node all-reduce on 8: curve (1e6 B, 10 us), (1e9 B, 5 ms); inter-node on 16: alpha 20 us,
  // bus bandwidth 100 GB/s, no curve.
  private static final ProfileEntry INTRA8 = new ProfileEntry(Collective.ALL_REDUCE,
      LinkLevel.INTRA_NODE, 8, new AlphaBeta(10e-6, 1 / 400e9), 2,
      Optional.of(new MonotoneCurve(new double[] {1e6, 1e9}, new double[] {10e-6, 5e-3}, 2e-12)));
  private static final ProfileEntry INTER16 = new ProfileEntry(Collective.ALL_REDUCE,
      LinkLevel.INTER_NODE, 16, new AlphaBeta(20e-6, 1 / 100e9), 5, Optional.empty());
  private final Profile profile = new Profile(1, "2x8:h100-80gb:ib-ndr400", List.of(INTRA8, INTER16));
  private final ClusterSpec cluster = ClusterSpec.parse("2x8:h100-80gb");

  @Test
  void intraNodeAxisUsesTheCurve() {
    ProfileCommModel m = new ProfileCommModel(cluster, LogicalMesh.of(2, 8), profile);
    assertThat(m.allReduce(1e9, 1)).isEqualTo(5e-3);
    // (5e8 - 1e6) / (1e9 - 1e6) = 0.4994995; 10e-6 + 0.4994995 * 4.99e-3 = 2.5025e-3
    assertThat(m.allReduce(5e8, 1)).isCloseTo(2.502502e-3, within(1e-9));
  }

  @Test
  void interNodeAxisRescalesByBusFactor() {
    ProfileCommModel m = new ProfileCommModel(cluster, LogicalMesh.of(2, 8), profile);
    // axis 0 has 2 ranks; entry has 16: read at 1e9 * f(2)/f(16) = 1e9 / 1.875 bytes,
    // t = 20e-6 + 1/100e9 * 1.875 * (1e9 / 1.875) = 20e-6 + 0.01
    assertThat(m.allReduce(1e9, 0)).isCloseTo(0.01002, within(1e-12));
  }

  @Test
  void missingCollectiveFallsBackToTheCatalog() {
    ProfileCommModel m = new ProfileCommModel(cluster, LogicalMesh.of(2, 8), profile);
    // catalog all-gather on 8 NVLink ranks, at the 370.8e9 B/s NCCL reaches of the H100's 450e9
    // (Architecture.ncclLinkFraction): 3e-6 + 7/8 * 1e9 / 370.8e9 = 2.362763e-3
    assertThat(m.allGather(1e9, 1)).isCloseTo(2.362763e-3, within(1e-9));
    assertThat(m.entryFor(Collective.ALL_GATHER, 1)).isEmpty();
  }

  @Test
  void nearestGroupSizeTiesGoToTheLargerGroup() {
    ProfileEntry intra4 = new ProfileEntry(Collective.ALL_REDUCE, LinkLevel.INTRA_NODE, 4,
        new AlphaBeta(1e-6, 1e-12), 1, Optional.empty());
    ProfileEntry intra16 = new ProfileEntry(Collective.ALL_REDUCE, LinkLevel.INTRA_NODE, 16,
        new AlphaBeta(1e-6, 1e-12), 1, Optional.empty());
    Profile p = new Profile(1, "1x16", List.of(intra4, intra16));
    // 8 is 1 doubling from both 4 and 16.
    ProfileCommModel m = new ProfileCommModel(ClusterSpec.parse("1xnvl16:gb200"),
        LogicalMesh.of(2, 8), p);
    assertThat(m.entryFor(Collective.ALL_REDUCE, 1)).contains(intra16);
    // axis 0 (2 ranks): 2 is nearer to 4.
    assertThat(m.entryFor(Collective.ALL_REDUCE, 0)).contains(intra4);
  }
}
