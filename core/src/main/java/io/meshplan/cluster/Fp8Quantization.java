package io.meshplan.cluster;

import io.meshplan.util.InputException;

/**
 * How a training step quantizes the operands of its FP8 GEMMs, which sets how much faster than a
 * 16-bit GEMM of the same shape each one runs: a GEMM in FP8 training is the cast of its operands
 * (each scale found, each tensor read and written again in 8 bits) and then the GEMM at the FP8
 * rate. Transformer Engine calls the sum "autocast" time.
 *
 * <p>The speed-ups are Transformer Engine's own measurement of exactly that
 * (NVIDIA/TransformerEngine 8f2e635, {@code docs/examples/gemm_profiling/gemm_profiling.rst},
 * "Autocast (includes quantization overhead)", {@code benchmarks/gemm/benchmark_gemm.py}). It timed
 * the 12 GEMMs of one layer of a 5B model (hidden 4,096, intermediate 16,384, 15,872 tokens; 19.17
 * TFLOP a layer) in each recipe, and the ratio is the layer's BF16 time over its time in the
 * recipe:
 *
 * <table>
 *   <caption>per-layer GEMM time, ms (autocast)</caption>
 *   <tr><th>GPU</th><th>BF16</th><th>delayed</th><th>current</th><th>MXFP8</th><th>NVFP4</th>
 *       </tr>
 *   <tr><td>H200 NVL (Hopper)</td><td>32.014</td><td>18.978 (1.687x)</td><td>20.285 (1.578x)</td>
 *       <td>-</td><td>-</td></tr>
 *   <tr><td>B300 SXM6 (Blackwell)</td><td>12.758</td><td>7.802 (1.635x)</td><td>9.147 (1.395x)
 *       </td><td>8.984 (1.420x)</td><td>6.453 (1.977x)</td></tr>
 * </table>
 *
 * <p>The same page's pre-quantized GEMMs alone (the casts left out) run current scaling 1.90x
 * (H200 NVL) and 1.93x (B300: 13.102 / 6.812 ms) over BF16, near the FP8 to 16-bit peak ratio of
 * 2: the rest is the casts, "~17% of its autocast time" on Hopper. NVFP4's kernels alone run
 * 3.48x (13.102 / 3.764 ms): its casts, Hadamard transforms and scales are 42% of its autocast
 * time, which is why 4-bit GEMMs train at 1.98x, not the 3-6x of the tensor cores' peaks; the
 * pre-quantized ratio bounds the price ({@link #kernelAloneOver16Bit}). A ratio, not a fraction of
 * the FP8 peak, carries the measurement over to other GPUs of the architecture: it holds the clocks
 * and power limit of the GPU it was measured on (the H200 NVL runs at 600 W) out of the price.
 *
 * <p>AMD's CDNA 3 (MI300X, MI325X) has no such measurement of its own. Its speed-up is the ratio
 * of its measured FP8 and 16-bit GEMM kernels alone, 1,159.23 TFLOP/s (hipBLASLt, {@link
 * Fp8Gemms#CDNA3_EFFICIENCY}) over 668.4 ({@link KernelTimeModel#CDNA3_16BIT_GEMM_EFFICIENCY}),
 * 1.734x, times the share of the kernel-alone speed-up that the same page measured surviving the
 * casts on the H200 NVL: its pre-quantized per-layer times are 31.968 ms (BF16) and 16.785 ms
 * (FP8, 1.905x), so delayed scaling keeps (32.014 / 18.978) / 1.905 = 0.886 of it and current
 * scaling (32.014 / 20.285) / 1.905 = 0.829. Delayed scaling on CDNA 3 is then 1.734 x 0.886 =
 * 1.536x, current 1.437x. The share carries over because the casts are passes over memory and the
 * two GPUs are alike where it matters: the MI300X's FP8 GEMM kernel (1,159 TFLOP/s) and the H200
 * NVL's (16.785 ms for 19.17 TFLOP, 1,142 TFLOP/s) run at the same rate, and their HBM at 5.3 and
 * 4.8 TB/s (datasheets), so the casts take the same share of a layer's time on both.
 */
public enum Fp8Quantization {
  /** One scale per tensor from the amax history of earlier steps (Transformer Engine's default). */
  DELAYED(32.014 / 18.978, 12.758 / 7.802, Cdna3.KERNELS * (32.014 / 18.978) / Cdna3.H200_NVL),
  /** One scale per tensor from its own amax in the current step. */
  CURRENT(32.014 / 20.285, 12.758 / 9.147, Cdna3.KERNELS * (32.014 / 20.285) / Cdna3.H200_NVL),
  /** One E8M0 scale per 32 elements (MXFP8), which only Blackwell's tensor cores apply. */
  MX_BLOCK(Double.NaN, 12.758 / 8.984, Double.NaN),
  /**
   * 4-bit E2M1 operands with one E4M3 scale per 16 elements (NVFP4), Blackwell's tensor cores
   * only; its kernels alone 13.102 / 3.764 = 3.481x the 16-bit GEMMs on the B300.
   */
  NVFP4(Double.NaN, 12.758 / 6.453, Double.NaN, 13.102 / 3.764);

  /** The ratios CDNA 3's speed-ups are made of (above). */
  private static final class Cdna3 {
    /** CDNA 3's FP8 over 16-bit GEMM kernels alone: 1,159.23 / 668.4 TFLOP/s. */
    static final double KERNELS = 1159.23 / 668.4;
    /** The H200 NVL's pre-quantized FP8 over BF16 layer: 31.968 / 16.785 ms. */
    static final double H200_NVL = 31.968 / 16.785;
  }

  private final double hopper;
  private final double blackwell;
  private final double cdna3;
  private final double kernelAlone;

  Fp8Quantization(double hopper, double blackwell, double cdna3) {
    this(hopper, blackwell, cdna3, Double.NaN);
  }

  Fp8Quantization(double hopper, double blackwell, double cdna3, double kernelAlone) {
    this.hopper = hopper;
    this.blackwell = blackwell;
    this.cdna3 = cdna3;
    this.kernelAlone = kernelAlone;
  }

  /**
   * How many times faster than a 16-bit GEMM the recipe's GEMM kernels run alone, their operands
   * already quantized, where that bound is not the FP8 kernel's ({@link Fp8Gemms#EFFICIENCY}):
   * NVFP4's 4-bit kernels, 3.481x on the B300 (above).
   *
   * @return the ratio, or empty for the 8-bit recipes
   */
  public java.util.OptionalDouble kernelAloneOver16Bit() {
    return Double.isNaN(kernelAlone) ? java.util.OptionalDouble.empty()
        : java.util.OptionalDouble.of(kernelAlone);
  }

  /**
   * How many times faster than a 16-bit GEMM of the same shape an FP8 GEMM runs in training, with
   * its operands' casts, on an architecture.
   *
   * @param a the architecture; Hopper, Blackwell or CDNA 3, the ones with FP8 GEMM prices
   * @return the speed-up, > 1
   * @throws InputException where the pair was not measured (MXFP8 before Blackwell, or an
   *     architecture without FP8 GEMM prices)
   */
  public double speedupOver16Bit(Architecture a) {
    double s = switch (a) {
      case HOPPER -> hopper;
      case BLACKWELL -> blackwell;
      case CDNA3 -> cdna3;
      default -> Double.NaN;
    };
    if (Double.isNaN(s)) {
      throw new InputException("GEMMs with " + word() + " scaling are not priced on "
          + a.word() + " GPUs: no measurement of them there");
    }
    return s;
  }

  /**
   * The recipe's word, as Megatron-LM's {@code --fp8-recipe} writes it.
   *
   * @return {@code delayed}, {@code tensorwise}, {@code mxfp8} or {@code nvfp4}
   */
  public String word() {
    return switch (this) {
      case DELAYED -> "delayed";
      case CURRENT -> "tensorwise";
      case MX_BLOCK -> "mxfp8";
      case NVFP4 -> "nvfp4";
    };
  }
}
