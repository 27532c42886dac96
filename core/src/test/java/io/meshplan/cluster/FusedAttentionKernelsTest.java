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
