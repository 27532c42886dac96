package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * NVIDIA collectives are priced at the bandwidth NCCL's topology model gives each NVLink link
 * ({@code ncclTopoNVLinkBw}, {@code src/graph/topo.h}, NVIDIA/nccl 069a3d4), not at the
 * datasheet's line rate, which the catalog keeps.
 */
class NcclLinkBandwidthTest {
  private static GpuSpec gpu(String cluster) {
    return ClusterSpec.parse(cluster).gpu();
  }

  @Test
  void eachNvidiaArchitectureGetsNcclsPerLinkFigure() {
    // V100 SXM2: 6 NVLink 2 links x 25 GB/s = 150e9 on the datasheet; SM70_NVLINK_BW 20.0 GB/s
    // a link: 6 x 20 = 120e9.
    assertThat(gpu("1x8:v100-32gb").nvlinkBandwidth()).isEqualTo(150e9);
    assertThat(gpu("1x8:v100-32gb").collectiveBandwidth(8)).isCloseTo(120e9, within(1e3));
    // A100: 12 links x 25 = 300e9; SM80_NVLINK_BW 20.0: 12 x 20 = 240e9.
    assertThat(gpu("1x8:a100-80gb").collectiveBandwidth(8)).isCloseTo(240e9, within(1e3));
    // H100 and H200: 18 links x 25 = 450e9; SM90_NVLINK_BW 20.6: 18 x 20.6 = 370.8e9, within 3%
    // of the 360 GB/s NCCL's maintainer expects of 8 H100s (NVIDIA/nccl-tests issue 326).
    assertThat(gpu("1x8:h100-80gb").nvlinkBandwidth()).isEqualTo(450e9);
    assertThat(gpu("1x8:h100-80gb").collectiveBandwidth(8)).isCloseTo(370.8e9, within(1e3));
    assertThat(gpu("1x8:h200-141gb").collectiveBandwidth(2)).isCloseTo(370.8e9, within(1e3));
    // Blackwell, B200 to GB300: 18 NVLink 5 links x 50 = 900e9; SM100_NVLINK_BW 40.1:
    // 18 x 40.1 = 721.8e9.
    for (String c : new String[] {"1x8:b200", "1xnvl72:gb200", "1xnvl72:gb300", "1x8:b300"}) {
      assertThat(gpu(c).collectiveBandwidth(8)).as(c).isCloseTo(721.8e9, within(1e3));
    }
  }

  @Test
  void infinityFabricKeepsItsLinkRates() {
    // MI300X: 7 links of 64 GB/s a direction (448 in all); a group of 4 uses 3 of them, 192e9,
    // priced as is: RCCL states no per-link figure meshplan takes.
    GpuSpec mi = gpu("1x8:mi300x");
    assertThat(mi.collectiveBandwidth(4)).isEqualTo(mi.intraNodeBandwidth(4)).isEqualTo(192e9);
    assertThat(mi.collectiveBandwidth(8)).isEqualTo(448e9);
  }

  @Test
  void sendRecvInsideANodeIsPricedAtTheSameRate() {
    // 1 GB between two H100s of a node: 3 us + 1e9 / 370.8e9 = 3e-6 + 2.696872e-3.
    SendRecvModel m = SendRecvModel.catalog(ClusterSpec.parse("2x8:h100-80gb"));
    assertThat(m.sendRecv(1e9, 1, LinkLevel.INTRA_NODE)).isCloseTo(2.699872e-3, within(1e-9));
  }
}
