package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/** The published DeepEP and Hybrid-EP bandwidths, read as {@link ExpertDispatchBandwidth} says. */
class ExpertDispatchBandwidthTest {
  private static final ClusterSpec H100 = ClusterSpec.parse("8x8:h100-80gb:ib-ndr400");

  /**
   * At the 50 GB/s per GPU they were measured with, the tables' own figures: Hybrid-EP on H100,
   * 2 nodes 54.47 / 53.35 GB/s and 8 nodes 41.24 / 46.57; DeepEP on H800, 4 nodes 58 / 57. At 3
   * nodes, log2(3) = 1.585 lies 0.585 of the way from 2 to 4 nodes: 54.47 + 0.585 (47.36 - 54.47)
   * = 50.31 GB/s. Beyond 8 nodes the 8-node figure; at half the fabric, half the bandwidth.
   */
  @Test
  void acrossNodesTheTablesAreReadAtTheirNodeCounts() {
    boolean h = true;
    assertThat(ExpertDispatchBandwidth.of(h, false, H100, 2, 8, 50e9))
        .isCloseTo(54.47e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(h, true, H100, 2, 8, 50e9))
        .isCloseTo(53.35e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(h, false, H100, 8, 8, 50e9))
        .isCloseTo(41.24e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(h, true, H100, 8, 8, 50e9))
        .isCloseTo(46.57e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(false, false, H100, 4, 8, 50e9))
        .isCloseTo(58e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(false, true, H100, 4, 8, 50e9))
        .isCloseTo(57e9, within(1.0));
    double x = Math.log(3) / Math.log(2) - 1;
    assertThat(ExpertDispatchBandwidth.of(h, false, H100, 3, 8, 50e9))
        .isCloseTo(54.47e9 + x * (47.36e9 - 54.47e9), within(1.0))
        .isCloseTo(50.31e9, within(0.01e9));
    assertThat(ExpertDispatchBandwidth.of(h, false, H100, 64, 8, 50e9)).isCloseTo(41.24e9,
        within(1.0));
    assertThat(ExpertDispatchBandwidth.of(h, false, H100, 2, 8, 25e9)).isCloseTo(54.47e9 / 2,
        within(1.0));
  }

  /**
   * Inside a node, DeepEP's H800 efficiency 153 / 160 = 0.95625 of NVLink for the dispatch, on an
   * H100's 450 GB/s per direction: 430.3 GB/s, at any rank count; on a B200 DeepEP's 421 GB/s
   * dispatch and 361 combine (the means of 348 and 494, 302 and 420, at 16 and 24
   * multiprocessors) of its 900.
   */
  @Test
  void insideANodeTheyAreAShareOfNvlink() {
    assertThat(ExpertDispatchBandwidth.of(true, false, H100, 1, 8, 50e9))
        .isCloseTo(153.0 / 160 * H100.gpu().nvlinkBandwidth(), within(1.0))
        .isCloseTo(430.3e9, within(0.1e9));
    assertThat(ExpertDispatchBandwidth.of(true, false, H100, 1, 4, 50e9))
        .isEqualTo(ExpertDispatchBandwidth.of(true, false, H100, 1, 8, 50e9));
    ClusterSpec b200 = ClusterSpec.parse("1x8:b200");
    assertThat(ExpertDispatchBandwidth.of(false, false, b200, 1, 8, 50e9))
        .isCloseTo(421e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(false, true, b200, 1, 8, 50e9))
        .isCloseTo(361e9, within(1.0));
  }

  /**
   * Hybrid-EP inside a Blackwell NVLink domain, GB200's table at 32 multiprocessors: 8 ranks
   * 545.71 / 568.94 GB/s, 32 ranks 484.22 / 464.54. At 12 ranks, log2(12 / 8) = 0.585 of the way
   * from 8 to 16: 545.71 + 0.585 (523.48 - 545.71) = 532.71 GB/s dispatch. Beyond 36 ranks the
   * 36-rank 479.02 / 447.89; below 8 the 8-rank figure. A GPU with half NVLink 5's bandwidth
   * gets half.
   */
  @Test
  void insideABlackwellDomainHybridEpSlowsWithItsRanks() {
    ClusterSpec rack = ClusterSpec.parse("1xnvl72:gb200");
    assertThat(ExpertDispatchBandwidth.of(true, false, rack, 1, 8, 50e9))
        .isCloseTo(545.71e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(true, true, rack, 1, 8, 50e9))
        .isCloseTo(568.94e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(true, false, rack, 1, 32, 50e9))
        .isCloseTo(484.22e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(true, true, rack, 1, 32, 50e9))
        .isCloseTo(464.54e9, within(1.0));
    double x = Math.log(12.0 / 8) / Math.log(2);
    assertThat(ExpertDispatchBandwidth.of(true, false, rack, 1, 12, 50e9))
        .isCloseTo(545.71e9 + x * (523.48e9 - 545.71e9), within(1.0))
        .isCloseTo(532.71e9, within(0.01e9));
    assertThat(ExpertDispatchBandwidth.of(true, false, rack, 1, 64, 50e9))
        .isCloseTo(479.02e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(true, true, rack, 1, 64, 50e9))
        .isCloseTo(447.89e9, within(1.0));
    assertThat(ExpertDispatchBandwidth.of(true, false, rack, 1, 2, 50e9))
        .isCloseTo(545.71e9, within(1.0));
    ClusterSpec b200 = ClusterSpec.parse("1x8:b200");
    ClusterSpec slow = new ClusterSpec(1, 8, b200.gpu().withNvlinkBandwidth(450e9),
        b200.fabric());
    assertThat(ExpertDispatchBandwidth.of(true, false, slow, 1, 8, 50e9))
        .isCloseTo(545.71e9 / 2, within(1.0));
  }

  @Test
  void gpusWithoutAPublishedFigureAreRefused() {
    for (String gpu : new String[] {"a100-80gb", "v100-32gb"}) {
      assertThatThrownBy(() -> ExpertDispatchBandwidth.check("deepep",
          ClusterSpec.parse("2x8:" + gpu).gpu())).isInstanceOf(InputException.class)
          .hasMessageContaining("no published bandwidth");
    }
    ExpertDispatchBandwidth.check("hybridep", ClusterSpec.parse("2x8:b200").gpu());
  }
}
