package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/**
 * FP8 GEMMs in training priced with their operands' casts: the 16-bit GEMM fraction times
 * Transformer Engine's measured speed-up (gemm_profiling.rst at 8f2e635), over the peak ratio.
 */
class Fp8QuantizationTest {
  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  private static double efficiency(String gpu, Fp8Quantization q) {
    return Fp8Gemms.of(gpu(gpu), q).orElseThrow().efficiency();
  }

  /**
   * The speed-ups are the published per-layer times' ratios: H200 NVL 32.014 ms bf16 against
   * 18.978 (delayed) and 20.285 (current); B300 12.758 against 7.802, 9.147, 8.984 (MXFP8) and
   * 6.453 (NVFP4), and NVFP4's kernels alone 13.102 against 3.764 = 3.48087.
   */
  @Test
  void speedUpsAreThePublishedTimeRatios() {
    assertThat(Fp8Quantization.DELAYED.speedupOver16Bit(Architecture.HOPPER))
        .isCloseTo(1.68690, within(1e-5));
    assertThat(Fp8Quantization.CURRENT.speedupOver16Bit(Architecture.HOPPER))
        .isCloseTo(1.57821, within(1e-5));
    assertThat(Fp8Quantization.DELAYED.speedupOver16Bit(Architecture.BLACKWELL))
        .isCloseTo(1.63522, within(1e-5));
    assertThat(Fp8Quantization.CURRENT.speedupOver16Bit(Architecture.BLACKWELL))
        .isCloseTo(1.39477, within(1e-5));
    assertThat(Fp8Quantization.MX_BLOCK.speedupOver16Bit(Architecture.BLACKWELL))
        .isCloseTo(1.42008, within(1e-5));
    assertThat(Fp8Quantization.NVFP4.speedupOver16Bit(Architecture.BLACKWELL))
        .isCloseTo(1.97706, within(1e-5));
    assertThat(Fp8Quantization.NVFP4.kernelAloneOver16Bit()).hasValueCloseTo(3.48087,
        within(1e-5));
    assertThat(Fp8Quantization.CURRENT.kernelAloneOver16Bit()).isEmpty();
  }

  /**
   * Fractions of the FP8 peak: H100 0.8 x 0.5 x 1.68690 = 0.674760 (delayed) and 0.631284
   * (current); B200 0.68 x 0.5 x 1.39477 = 0.474223 (current), x 1.42008 = 0.482827 (MXFP8), x
   * 1.63522 = 0.555975 (delayed), x 1.97706 = 0.672202 (NVFP4); GB300 has B200's peak ratio
   * (2,500 / 5,000), so the same; GB200 states its own 16-bit share (catalog gemm16 0.639), so
   * 0.639 x 0.5 x 1.39477 = 0.445630 (current).
   */
  @Test
  void fractionsOfTheFp8PeakFollowTheSixteenBitGemm() {
    assertThat(efficiency("h100-80gb", Fp8Quantization.DELAYED)).isCloseTo(0.674760,
        within(1e-6));
    assertThat(efficiency("h100-80gb", Fp8Quantization.CURRENT)).isCloseTo(0.631284,
        within(1e-6));
    assertThat(efficiency("h200-141gb", Fp8Quantization.CURRENT)).isCloseTo(0.631284,
        within(1e-6));
    assertThat(efficiency("b200", Fp8Quantization.CURRENT)).isCloseTo(0.474223, within(1e-6));
    assertThat(efficiency("b200", Fp8Quantization.MX_BLOCK)).isCloseTo(0.482827, within(1e-6));
    assertThat(efficiency("b200", Fp8Quantization.DELAYED)).isCloseTo(0.555975, within(1e-6));
    assertThat(efficiency("gb200", Fp8Quantization.CURRENT)).isCloseTo(0.445630, within(1e-6));
    assertThat(efficiency("b200", Fp8Quantization.NVFP4)).isCloseTo(0.672202, within(1e-6));
    assertThat(efficiency("gb300", Fp8Quantization.NVFP4)).isCloseTo(0.672202, within(1e-6));
    assertThat(Fp8Gemms.of(gpu("h100-80gb")).orElseThrow().efficiency())
        .isEqualTo(efficiency("h100-80gb", Fp8Quantization.DELAYED));
  }

  /**
   * Every priced pair runs slower than the GEMM kernel alone (0.75 of the FP8 peak; NVFP4's
   * kernels 3.48x the 16-bit GEMM) and faster than the 16-bit GEMM of the same shape, in seconds:
   * casts cost time, 8-bit and 4-bit math still saves it.
   */
  @Test
  void everyPricedPairLiesBetweenTheSixteenBitGemmAndTheKernelAlone() {
    for (String n : GpuCatalog.names()) {
      GpuSpec g = gpu(n);
      if (!g.architecture().hasFp8Gemms() || g.peak(Precision.FP8).isEmpty()) {
        continue;
      }
      for (Fp8Quantization q : Fp8Quantization.values()) {
        boolean block = q == Fp8Quantization.MX_BLOCK || q == Fp8Quantization.NVFP4;
        if (block && g.architecture() != Architecture.BLACKWELL) {
          continue;
        }
        KernelTimeModel k = KernelTimeModel.of(g, Precision.BF16, java.util.Optional.empty(), q);
        double fp8 = k.dotCost(1e13, 0, Precision.FP8);
        double bf16 = k.dotCost(1e13, 0, Precision.BF16);
        double alone = q.kernelAloneOver16Bit().isPresent()
            ? bf16 / q.kernelAloneOver16Bit().getAsDouble()
            : 1e13 / (g.peak(Precision.FP8).orElseThrow() * Fp8Gemms.EFFICIENCY);
        assertThat(fp8).as(n + " " + q).isLessThan(bf16).isGreaterThan(alone);
      }
    }
  }

  @Test
  void blockScalingIsNotPricedBeforeBlackwell() {
    assertThatThrownBy(() -> Fp8Gemms.of(gpu("h100-80gb"), Fp8Quantization.MX_BLOCK))
        .isInstanceOf(InputException.class)
        .hasMessage("GEMMs with mxfp8 scaling are not priced on hopper GPUs: no measurement"
            + " of them there");
    assertThatThrownBy(() -> Fp8Gemms.of(gpu("h200-141gb"), Fp8Quantization.NVFP4))
        .isInstanceOf(InputException.class)
        .hasMessage("GEMMs with nvfp4 scaling are not priced on hopper GPUs: no measurement"
            + " of them there");
  }

  /**
   * A user's Blackwell entry whose FP8 peak is no more than its 16-bit one: NVFP4's 0.68 x 1.977
   * = 1.34 of that peak is held to the peak itself, 1.0, never past it (no internal error).
   */
  @Test
  void nvfp4NeverRunsPastTheFp8Peak() {
    double g = 1e9;
    GpuSpec odd = new GpuSpec("b-odd", Architecture.BLACKWELL, java.util.Map.of(Precision.FP32,
        75e12, Precision.BF16, 2250e12, Precision.FP8, 2250e12), 180L << 30, 8000 * g, 8,
        900 * g);
    assertThat(Fp8Gemms.of(odd, Fp8Quantization.NVFP4).orElseThrow().efficiency())
        .isEqualTo(1.0);
  }

  /**
   * A catalog entry of FP8 tensor cores without a 16-bit peak (a user's catalog may state only
   * fp32 and fp8): its FP8 GEMMs have no 16-bit GEMM to be priced against, and FP8 training,
   * whose weights, attention and norms are bf16, is refused in one line.
   */
  @Test
  void fp8WithoutASixteenBitPeakIsRefused() {
    double g = 1e9;
    GpuSpec odd = new GpuSpec("h-odd", Architecture.HOPPER,
        java.util.Map.of(Precision.FP32, 67e12, Precision.FP8, 1979e12), 80L << 30, 3350 * g, 8,
        450 * g);
    assertThat(Fp8Gemms.of(odd)).isEmpty();
    assertThatThrownBy(() -> Fp8Gemms.require(odd)).isInstanceOf(InputException.class)
        .hasMessage("fp8 training keeps its weights, attention and norms in bf16, and the h-odd"
            + " states no bf16 or fp16 peak; add one to its catalog entry, or train in f32");
  }
}
