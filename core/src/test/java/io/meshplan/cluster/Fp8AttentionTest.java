package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.Optional;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * cuDNN's FP8 attention ({@code --attention cudnn-fp8}): the GPU's bf16 cuDNN prices times the
 * FP8 over bf16 speed of the same cuDNN benchmark run, by sequence length.
 */
class Fp8AttentionTest {
  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  private static final Offset<Double> EXACT = Offset.offset(1e-9);

  /**
   * GB200 (2,500 TFLOP/s dense bf16): at the table's lengths the FP8 fractions are the FP8 run's
   * own figures over the peak. Per-tensor FP8 at 4,096 tokens, 1,805 forward and 1,178 backward:
   * 0.722 and 0.4712; at 8,192, 2,047 and 1,454; at 32,768, 2,197 and 1,687. MXFP8 at 4,096,
   * 1,685 and 1,054.
   */
  @Test
  void blackwellRunsAtTheFp8RunsFigures() {
    FusedAttentionKernels d = FusedAttentionKernels.fp8(gpu("gb200"), Fp8Quantization.DELAYED);
    assertThat(d.efficiency(false, 128, 4096)).isCloseTo(1805 / 2500.0, EXACT);
    assertThat(d.efficiency(true, 128, 4096)).isCloseTo(1178 / 2500.0, EXACT);
    assertThat(d.efficiency(false, 128, 8192)).isCloseTo(2047 / 2500.0, EXACT);
    assertThat(d.efficiency(true, 128, 8192)).isCloseTo(1454 / 2500.0, EXACT);
    assertThat(d.efficiency(false, 128, 32768)).isCloseTo(2197 / 2500.0, EXACT);
    assertThat(d.efficiency(true, 128, 32768)).isCloseTo(1687 / 2500.0, EXACT);
    assertThat(FusedAttentionKernels.fp8(gpu("gb200"), Fp8Quantization.CURRENT)).isEqualTo(d);
    FusedAttentionKernels mx = FusedAttentionKernels.fp8(gpu("gb200"), Fp8Quantization.MX_BLOCK);
    assertThat(mx.efficiency(false, 128, 4096)).isCloseTo(1685 / 2500.0, EXACT);
    assertThat(mx.efficiency(true, 128, 4096)).isCloseTo(1054 / 2500.0, EXACT);
    // The FP8 tensor cores run twice the bf16 peak: fractions may pass 1 of the bf16 peak's, and
    // the scale bound is their share of the FP8 peak.
    assertThat(d.peakMultiple()).isEqualTo(2.0);
    assertThat(d.peakShare()).isCloseTo(2197 / 5000.0, EXACT);
  }

  /**
   * H100 (Hopper's cuDNN at 0.60 and 0.50 of the peak at 4,096 tokens): FP8 runs the H200's FP8
   * over bf16 speeds, 854 / 591 forward and 471 / 474 backward at 4,096, so 0.86701 and 0.49684;
   * at 8,192 the backward is 0.50 x 430 / 474 = 0.45359, slower than bf16's 0.50 x 541 / 474 =
   * 0.57068, as the H200 measured.
   */
  @Test
  void hoppersFp8BackwardIsNoFaster() {
    FusedAttentionKernels d = FusedAttentionKernels.fp8(gpu("h100-80gb"),
        Fp8Quantization.DELAYED);
    assertThat(d.efficiency(false, 128, 4096)).isCloseTo(0.60 * 854 / 591, EXACT);
    assertThat(d.efficiency(true, 128, 4096)).isCloseTo(0.50 * 471 / 474, EXACT);
    assertThat(d.efficiency(true, 128, 8192)).isCloseTo(0.50 * 430 / 474, EXACT);
    assertThat(FusedAttentionKernels.HOPPER.efficiency(true, 128, 8192))
        .isCloseTo(0.50 * 541 / 474, EXACT);
    // Narrow heads take the same ratios: 0.34 x 854 / 591 forward at 4,096.
    assertThat(d.efficiency(false, 64, 4096)).isCloseTo(0.34 * 854 / 591, EXACT);
    // Through the kernel model: a named cudnn-fp8 kernel prices its FP8 fractions.
    KernelTimeModel k = KernelTimeModel.of(gpu("h100-80gb"), Precision.BF16,
        Optional.of(AttentionKernel.CUDNN_FP8), Fp8Quantization.DELAYED);
    assertThat(k.attention()).contains(d);
    assertThat(k.maxScale()).isCloseTo(1 / Math.max(0.8, d.peakShare()), EXACT);
  }

  @Test
  void itIsRefusedWhereNoFp8AttentionWasMeasured() {
    assertThatThrownBy(() -> FusedAttentionKernels.fp8(gpu("a100-80gb"),
        Fp8Quantization.DELAYED)).isInstanceOf(InputException.class)
        .hasMessage("a100-80gb: meshplan has no published cudnn-fp8 attention benchmark on "
            + "ampere to price it with; use flash2, triton or unfused");
    assertThatThrownBy(() -> FusedAttentionKernels.fp8(gpu("mi300x"), Fp8Quantization.DELAYED))
        .isInstanceOf(InputException.class).hasMessageContaining("cudnn-fp8");
    assertThatThrownBy(() -> FusedAttentionKernels.fp8(gpu("h100-80gb"),
        Fp8Quantization.MX_BLOCK)).isInstanceOf(InputException.class);
    assertThat(AttentionKernel.parse("cudnn-fp8")).isEqualTo(AttentionKernel.CUDNN_FP8);
    assertThat(AttentionKernel.CUDNN_FP8.word()).isEqualTo("cudnn-fp8");
  }
}
