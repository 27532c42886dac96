package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/**
 * The H100 NVL (NVIDIA H100 datasheet, NVL column): a PCIe card whose NVLink bridge joins a pair
 * of GPUs, so its NVLink domain is 2 and a cluster of them is written in pairs; and the rule it
 * brought for every GPU whose NVLink stops at the host: a node larger than the domain is refused,
 * not priced as one NVLink domain.
 */
class H100NvlCatalogTest {
  @Test
  void itIsAHopperPairWithTheDatasheetsFigures() {
    GpuEntry e = HardwareCatalog.shipped().gpu("h100-nvl").orElseThrow();
    GpuSpec g = e.spec();
    assertThat(g.architecture()).isEqualTo(Architecture.HOPPER);
    // Dense peaks are the datasheet's sparse figures halved: BF16 1,671 / 2 = 835.5, FP8 3,341 / 2
    // = 1,670.5, TF32 835 / 2 = 417.5 TFLOP/s; FP32 60 as printed.
    assertThat(g.peak(Precision.BF16)).contains(835.5e12);
    assertThat(g.peak(Precision.FP8)).contains(1670.5e12);
    assertThat(g.peak(Precision.TF32)).contains(417.5e12);
    assertThat(g.peak(Precision.FP32)).contains(60e12);
    // 94 GiB = 94 * 2^30 = 100,931,731,456 bytes; 3.9 TB/s; NVLink bridge 600 GB/s both ways.
    assertThat(g.hbmBytes()).isEqualTo(100_931_731_456L);
    assertThat(g.hbmBandwidth()).isEqualTo(3900e9);
    assertThat(g.nvlinkDomain()).isEqualTo(2);
    assertThat(g.nvlinkBandwidth()).isEqualTo(300e9);
    assertThat(e.powerWatts()).hasValue(400);
    // Hopper's FP8 GEMM table, on this part's own FP8 peak.
    assertThat(Fp8Gemms.of(g).orElseThrow().peakFlops()).isEqualTo(1670.5e12);
  }

  @Test
  void aClusterIsWrittenInBridgedPairs() {
    ClusterSpec c = ClusterSpec.parse("8x2:h100-nvl");
    assertThat(c.nodes()).isEqualTo(8);
    assertThat(c.gpusPerNode()).isEqualTo(2);
    assertThat(c.toShortString()).isEqualTo("8x2:h100-nvl:ib-ndr400");
    // Two NICs a pair at 50 GB/s each (NDR400, at most one per GPU): 100 GB/s out of a pair.
    assertThat(c.nodeNetworkBandwidth()).isEqualTo(100e9);
    assertThat(ClusterSpec.parse("2xnvl2:h100-nvl").gpuCount()).isEqualTo(4);
    assertThatThrownBy(() -> ClusterSpec.parse("2x8:h100-nvl"))
        .isInstanceOf(InputException.class)
        .hasMessage("cluster '2x8:h100-nvl': a node of 8 h100-nvl GPUs is more than the 2 that "
            + "its NVLink joins; give PAIRSx2:h100-nvl: each bridged pair is a node, and the "
            + "pairs of a host talk over PCIe, priced at the fabric's rate as between hosts");
    assertThatThrownBy(() -> ClusterSpec.parse("1xnvl8:h100-nvl"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("h100-nvl's NVLink joins 2 GPUs of one host");
  }

  @Test
  void aNodeBeyondTheNvlinkDomainIsRefusedOnEveryGpu() {
    // Was priced as one NVLink domain of 16 before: an HGX board joins 8.
    assertThatThrownBy(() -> ClusterSpec.parse("1x16:h100"))
        .isInstanceOf(InputException.class)
        .hasMessage("cluster '1x16:h100': a node of 16 h100-80gb GPUs is more than the 8 that "
            + "its NVLink joins; give NODESx8:h100-80gb");
    assertThatThrownBy(() -> ClusterSpec.parse("2x12:a100-80gb"))
        .isInstanceOf(InputException.class).hasMessageContaining("more than the 8");
    // The sweep's hosts (ClusterSpec.ofHosts) keep the same rule: a grid's 1x8 of H100 NVL was
    // planned as one NVLink domain of 8; so were 16 MI300X.
    GpuSpec nvl = HardwareCatalog.shipped().gpu("h100-nvl").orElseThrow().spec();
    Fabric ndr = HardwareCatalog.shipped().fabric("ib-ndr400").orElseThrow();
    assertThatThrownBy(() -> ClusterSpec.ofHosts("1x8:h100-nvl", 1, 8, nvl, 2, ndr))
        .isInstanceOf(InputException.class).hasMessageContaining("give PAIRSx2:h100-nvl");
    GpuSpec mi = HardwareCatalog.shipped().gpu("mi300x").orElseThrow().spec();
    assertThatThrownBy(() -> ClusterSpec.ofHosts("1x16:mi300x", 1, 16, mi, 8, ndr))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("more than the 8 that AMD Infinity Fabric joins");
    assertThat(ClusterSpec.ofHosts("4x2:h100-nvl", 4, 2, nvl, 2, ndr).gpuCount()).isEqualTo(8);
    // Nodes of fewer GPUs than the domain stay as they were.
    assertThat(ClusterSpec.parse("3x6:a100-80gb").gpusPerNode()).isEqualTo(6);
  }
}
