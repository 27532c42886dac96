package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Fused attention kernels' fractions of the dense peak by head dimension, and their prices. */
class FusedAttentionKernelsTest {
  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  /**
   * Hopper: 0.60 / 0.50 at head dimension 128 and above, 0.34 / 0.29 at 64 and below (cuDNN's
   * H200 benchmark), linear between: at 96, halfway, 0.34 + (0.60 - 0.34) / 2 = 0.47 forward and
   * 0.29 + (0.50 - 0.29) / 2 = 0.395 backward; at 80, a quarter of the way, 0.34 + 0.26 / 4 =
   * 0.405 forward.
   */
  @Test
  void hopperKernelsSlowDownWithNarrowHeads() {
    FusedAttentionKernels k = FusedAttentionKernels.of(gpu("h100-80gb")).orElseThrow();
    assertThat(k.efficiency(false, 128)).isEqualTo(0.60);
    assertThat(k.efficiency(true, 128)).isEqualTo(0.50);
    assertThat(k.efficiency(false, 64)).isEqualTo(0.34);
    assertThat(k.efficiency(true, 64)).isEqualTo(0.29);
    assertThat(k.efficiency(false, 96)).isCloseTo(0.47, within(1e-12));
    assertThat(k.efficiency(true, 96)).isCloseTo(0.395, within(1e-12));
    assertThat(k.efficiency(false, 80)).isCloseTo(0.405, within(1e-12));
    // Outside the measured head dimensions the nearer end holds.
    assertThat(k.efficiency(false, 16)).isEqualTo(0.34);
    assertThat(k.efficiency(true, 256)).isEqualTo(0.50);
    // H200 has Hopper's SMs and clocks; B200 and GB200 run Blackwell's kernels.
    assertThat(FusedAttentionKernels.of(gpu("h200-141gb"))).contains(k);
    assertThat(FusedAttentionKernels.of(gpu("b200"))).contains(FusedAttentionKernels.BLACKWELL);
    assertThat(FusedAttentionKernels.of(gpu("gb200"))).contains(FusedAttentionKernels.BLACKWELL);
  }

  /** Ampere has no narrow-head measurement: FlashAttention-2's 0.70 / 0.55 at every width. */
  @Test
  void ampereKernelsKeepTheirFractionsAtEveryHeadDimension() {
    FusedAttentionKernels k = FusedAttentionKernels.of(gpu("a100-80gb")).orElseThrow();
    for (int d : new int[] {16, 64, 80, 128, 256}) {
      assertThat(k.efficiency(false, d)).as("forward at %d", d).isEqualTo(0.70);
      assertThat(k.efficiency(true, d)).as("backward at %d", d).isEqualTo(0.55);
    }
    assertThat(FusedAttentionKernels.of(gpu("v100-32gb"))).isEmpty();
  }

  /**
   * H100 bf16, 1 TFLOP of attention, no traffic: at head dimension 64 the forward takes 1e12 /
   * (989.5e12 * 0.34) = 2.97239e-3 s and the backward 1e12 / (989.5e12 * 0.29) = 3.48487e-3 s; at
   * 128 (and through the head-blind price) 1e12 / (989.5e12 * 0.60) = 1.68435e-3 s.
   */
  @Test
  void h100PricesAttentionByItsHeadDimension() {
    KernelTimeModel m = KernelTimeModel.of(gpu("h100-80gb"), 2);
    assertThat(m.attentionCost(1e12, 0, false, 64)).isCloseTo(2.97239e-3, within(1e-8));
    assertThat(m.attentionCost(1e12, 0, true, 64)).isCloseTo(3.48487e-3, within(1e-8));
    assertThat(m.attentionCost(1e12, 0, false, 128)).isCloseTo(1.68435e-3, within(1e-8));
    assertThat(m.attentionCost(1e12, 0, false)).isEqualTo(m.attentionCost(1e12, 0, false, 128));
    // Never faster than its traffic: 2.68e9 bytes at 0.8 of 3.35 TB/s is 1e-3 s, above 1e9 FLOPs'
    // 2.97e-6 s.
    assertThat(m.attentionCost(1e9, 2.68e9, false, 64)).isCloseTo(1e-3, within(1e-12));
    // A scaled model divides the narrow-head price too.
    assertThat(m.scaled(0.5).attentionCost(1e12, 0, true, 64))
        .isCloseTo(2 * m.attentionCost(1e12, 0, true, 64), within(1e-15));
  }

  /**
   * Blackwell states the GB200's cuDNN figures at 4,096 tokens (cudnn-frontend 60e572b): 1,408 /
   * 2,500 = 0.5632 forward, 1,148 / 2,500 = 0.4592 backward. Blackwell Ultra states its own
   * (catalog.yaml, the GB300 in the same run): 1,703 / 2,500 = 0.6812, 0.681; 1,248 / 2,500 =
   * 0.4992, 0.499. Narrow heads keep 0.34 and 0.29. 1 TFLOP of GB300 attention at head dimension
   * 128 and 4,096 tokens: forward 1e12 / (2,500e12 * 0.681) = 5.873715e-4 s, backward 1e12 /
   * (2,500e12 * 0.499) = 8.016032e-4 s; a GB200's forward 1e12 / (2,500e12 * 0.5632) =
   * 7.102273e-4 s.
   */
  @Test
  void blackwellUltraRunsItsOwnMeasuredAttention() {
    FusedAttentionKernels ultra = new FusedAttentionKernels(0.681, 0.499, 0.34, 0.29,
        FusedAttentionKernels.BLACKWELL_LENGTHS);
    for (String g : new String[] {"gb300", "b300"}) {
      assertThat(FusedAttentionKernels.of(gpu(g))).as(g).contains(ultra);
      // Naming the default kernel (cuDNN) prices it the same.
      assertThat(FusedAttentionKernels.of(gpu(g),
          java.util.Optional.of(AttentionKernel.CUDNN))).as(g).contains(ultra);
    }
    assertThat(FusedAttentionKernels.BLACKWELL.efficiency(false, 128)).isEqualTo(0.5632);
    assertThat(FusedAttentionKernels.BLACKWELL.efficiency(true, 128)).isEqualTo(0.4592);
    KernelTimeModel gb300 = KernelTimeModel.of(gpu("gb300"), 2);
    assertThat(gb300.attentionCost(1e12, 0, false, 128)).isCloseTo(5.873715e-4, within(1e-9));
    assertThat(gb300.attentionCost(1e12, 0, true, 128)).isCloseTo(8.016032e-4, within(1e-9));
    assertThat(KernelTimeModel.of(gpu("gb200"), 2).attentionCost(1e12, 0, false, 128))
        .isCloseTo(7.102273e-4, within(1e-9));
    // A kernel other than the default keeps its architecture's table: Hopper's flash3.
    assertThat(FusedAttentionKernels.of(gpu("h100-80gb"),
        java.util.Optional.of(AttentionKernel.FLASH2))).contains(
            FusedAttentionKernels.HOPPER_FLASH2);
  }

  /**
   * The cuDNN tables' own points come back: the H200 (cudnn-frontend h200_919_only_cudnn)
   * measured 644 / 591 of its 4,096 forward at 8,192 tokens, so Hopper's forward there is 0.60 x
   * 644 / 591 = 0.653807; its backward 0.50 x 541 / 474 = 0.570675; at 2,048 0.60 x 484 / 591 =
   * 0.491371. The GB200 at 8,192: 0.5632 x 1,574 / 1,408 = 1,574 / 2,500 = 0.6296, its own
   * figure. Between points the factor is linear in log2 of the length: at 6,144 (log2 0.585 of
   * the way from 4,096 to 8,192) Hopper's forward is 0.60 x (1 + 0.584963 x 53 / 591) = 0.631476.
   * Past the last point (32,768) the last holds: 0.60 x 688 / 591 at 131,072 tokens.
   */
  @Test
  void longerSequencesRunFasterAsTheBenchmarksMeasured() {
    FusedAttentionKernels h = FusedAttentionKernels.HOPPER;
    assertThat(h.efficiency(false, 128, 8192)).isCloseTo(0.653807, within(1e-6));
    assertThat(h.efficiency(true, 128, 8192)).isCloseTo(0.570675, within(1e-6));
    assertThat(h.efficiency(false, 128, 2048)).isCloseTo(0.491371, within(1e-6));
    assertThat(h.efficiency(false, 128, 4096)).isEqualTo(0.60);
    assertThat(h.efficiency(false, 128, 6144)).isCloseTo(0.631476, within(1e-6));
    assertThat(h.efficiency(false, 128, 131072)).isCloseTo(0.60 * 688 / 591, within(1e-12));
    assertThat(h.efficiency(false, 128, 512)).isCloseTo(0.60 * 484 / 591, within(1e-12));
    // Narrow heads follow GPT-OSS's table: 0.34 x 349 / 336 = 0.353155 at 8,192.
    assertThat(h.efficiency(false, 64, 8192)).isCloseTo(0.353155, within(1e-6));
    assertThat(FusedAttentionKernels.BLACKWELL.efficiency(false, 128, 8192))
        .isCloseTo(0.6296, within(1e-12));
    // Kernels without a length table hold at every length.
    assertThat(FusedAttentionKernels.HOPPER_FLASH2.efficiency(true, 128, 65536)).isEqualTo(0.30);
    assertThat(FusedAttentionKernels.AMPERE.efficiency(false, 128, 1024)).isEqualTo(0.70);
    // The price follows: 1 TFLOP of H100 forward at 8,192 tokens, 1e12 / (989.5e12 x 0.653807).
    KernelTimeModel m = KernelTimeModel.of(gpu("h100-80gb"), 2);
    assertThat(m.attentionCost(1e12, 0, false, 128, 8192))
        .isCloseTo(1e12 / (989.5e12 * 0.60 * 644 / 591), within(1e-12));
    // The fastest kernel anywhere bounds the calibrated scale: Hopper's backward at 32,768,
    // 0.50 x 581 / 474 = 0.612869, under the GEMMs' own top.
    assertThat(h.peakEfficiency()).isCloseTo(0.60 * 688 / 591, within(1e-12));
  }

  /** A length table must be normalised at 4,096 tokens and increase. */
  @Test
  void aLengthTableIsCheckedWhenBuilt() {
    var one = new SequenceScaling.Point(SequenceScaling.REFERENCE, 1, 1, 1, 1);
    assertThatThrownBy(() -> new SequenceScaling(java.util.List.of(
        new SequenceScaling.Point(2048, 0.8, 0.8, 0.9, 0.9))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("every factor 1");
    assertThatThrownBy(() -> new SequenceScaling(java.util.List.of(one,
        new SequenceScaling.Point(2048, 0.8, 0.8, 0.9, 0.9))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must increase");
    assertThatThrownBy(() -> new FusedAttentionKernels(0.9, 0.5, 0.34, 0.29,
        FusedAttentionKernels.HOPPER_LENGTHS)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 1");
  }

  /** Volta has no fused kernel, so a GPU entry may not state fractions for one. */
  @Test
  void aGpuWithoutAFusedKernelMayNotStateAttentionFractions() {
    GpuSpec v = gpu("v100-32gb");
    assertThatThrownBy(() -> new GpuSpec("v-odd", Architecture.VOLTA, v.peakFlops(),
        v.hbmBytes(), v.hbmBandwidth(), 8, v.nvlinkBandwidth(), 0,
        FusedAttentionKernels.HOPPER))
        .isInstanceOf(io.meshplan.util.InputException.class)
        .hasMessage("gpu v-odd: volta has no priced fused attention kernel to state the "
            + "fractions of; leave 'attention' out");
  }

  @Test
  void aHeadDimensionBelowOneIsABug() {
    FusedAttentionKernels k = FusedAttentionKernels.of(gpu("h100-80gb")).orElseThrow();
    assertThatThrownBy(() -> k.efficiency(false, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("head dimension");
    assertThatThrownBy(() -> new FusedAttentionKernels(0.6, 0.5, 0, 0.29))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("narrow-head forward efficiency");
  }
}
