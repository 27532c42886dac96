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
    // H200 has Hopper's SMs and clocks, B200 takes Hopper's fractions.
    assertThat(FusedAttentionKernels.of(gpu("h200-141gb"))).contains(k);
    assertThat(FusedAttentionKernels.of(gpu("b200"))).contains(k);
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
   * Blackwell Ultra states its own cuDNN fractions (catalog.yaml, cudnn-frontend 60e572b's GB300
   * run): forward (1,703 + 1,856) / 2 / 2,500 = 0.7118, 0.71; backward (1,248 + 1,435) / 2 /
   * 2,500 = 0.5366, 0.54. The GB200 of the same run, (1,408 + 1,574) / 2 / 2,500 = 0.596 and
   * (1,148 + 1,332) / 2 / 2,500 = 0.496, keeps Blackwell's 0.60 and 0.50. Narrow heads keep
   * Blackwell's 0.34 and 0.29. 1 TFLOP of GB300 attention at head dimension 128: forward 1e12 /
   * (2,500e12 * 0.71) = 5.633803e-4 s, backward 1e12 / (2,500e12 * 0.54) = 7.407407e-4 s; a
   * GB200's forward 1e12 / (2,500e12 * 0.60) = 6.666667e-4 s.
   */
  @Test
  void blackwellUltraRunsItsOwnMeasuredAttention() {
    FusedAttentionKernels ultra = new FusedAttentionKernels(0.71, 0.54, 0.34, 0.29);
    for (String g : new String[] {"gb300", "b300"}) {
      assertThat(FusedAttentionKernels.of(gpu(g))).as(g).contains(ultra);
      // Naming the default kernel (cuDNN) prices it the same.
      assertThat(FusedAttentionKernels.of(gpu(g),
          java.util.Optional.of(AttentionKernel.CUDNN))).as(g).contains(ultra);
    }
    assertThat(FusedAttentionKernels.of(gpu("gb200"))).contains(FusedAttentionKernels.HOPPER);
    KernelTimeModel gb300 = KernelTimeModel.of(gpu("gb300"), 2);
    assertThat(gb300.attentionCost(1e12, 0, false, 128)).isCloseTo(5.633803e-4, within(1e-9));
    assertThat(gb300.attentionCost(1e12, 0, true, 128)).isCloseTo(7.407407e-4, within(1e-9));
    assertThat(KernelTimeModel.of(gpu("gb200"), 2).attentionCost(1e12, 0, false, 128))
        .isCloseTo(6.666667e-4, within(1e-9));
    // A kernel other than the default keeps its architecture's table: Hopper's flash3.
    assertThat(FusedAttentionKernels.of(gpu("h100-80gb"),
        java.util.Optional.of(AttentionKernel.FLASH2))).contains(
            FusedAttentionKernels.HOPPER_FLASH2);
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
