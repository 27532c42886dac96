package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The H100 96 GB HBM2e at 500 W of torchtitan's published benchmarks (pytorch/torchtitan
 * 820504e, benchmarks/llama3_h100_202412_torchtitan.md), added as one catalog.yaml entry.
 */
class H100Hbm2eCatalogTest {
  @Test
  void itIsAHopperPartWithTheBenchmarksMemory() {
    GpuEntry e = HardwareCatalog.shipped().gpu("h100-96gb-hbm2e").orElseThrow();
    GpuSpec g = e.spec();
    assertThat(g.architecture()).isEqualTo(Architecture.HOPPER);
    // 96 GiB = 96 * 2^30 = 103,079,215,104 bytes; 2.4 TB/s = 2400e9 bytes/s.
    assertThat(g.hbmBytes()).isEqualTo(103_079_215_104L);
    assertThat(g.hbmBandwidth()).isEqualTo(2400e9);
    // The SXM datasheet's dense bf16 peak, 1,979 / 2 = 989.5 TFLOP/s, as torchtitan's MFU uses.
    assertThat(g.peak(Precision.BF16)).contains(989.5e12);
    assertThat(e.powerWatts()).hasValue(500);
    assertThat(ClusterSpec.parse("64x8:h100-96gb-hbm2e").toShortString())
        .isEqualTo("64x8:h100-96gb-hbm2e:ib-ndr400");
    // Hopper's kernel tables: FlashAttention-3's fractions and FP8 GEMMs at 0.75 of 1,979.
    assertThat(FusedAttentionKernels.of(g)).contains(FusedAttentionKernels.HOPPER);
    assertThat(Fp8Gemms.of(g).orElseThrow().peakFlops()).isEqualTo(1979e12);
  }
}
