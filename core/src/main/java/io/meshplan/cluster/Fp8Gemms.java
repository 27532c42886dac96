package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How fast GEMMs with 8-bit floating-point operands (E4M3/E5M2, bf16 result) run on a GPU: its
 * FP8 dense peak from the datasheet ({@link GpuCatalog}) and the fraction of it a large GEMM
 * reaches.
 *
 * <p>The fraction, 0.75, is a kernel-level measurement: TileLang's FP8 matmul benchmark ({@code
 * tile-ai/tilelang}, {@code benchmark/matmul_fp8/README.md}) measured {@code M = N = 8192}
 * GEMMs on an H800 SXM, whose FP8 tensor cores and clocks are the H100 SXM's (1,979 TFLOP/s
 * dense), at 1,461 and 1,507 TFLOP/s for {@code K = 8192} (0.74 and 0.76 of peak) and 1,523 and
 * 1,541 for {@code K = 16384}. DeepGEMM (DeepSeek, 2025) states "up to 1550 TFLOPS" (0.78) for
 * its best FP8 shapes on the same GPU. Large bf16 GEMMs reach 0.8 of their peak ({@link
 * KernelTimeModel#GEMM_EFFICIENCY}); FP8 GEMMs reach a little less, as the doubled math rate
 * leaves the same memory system and the operand scaling in the epilogue. B200 takes the same
 * fraction of its own FP8 peak: OpenXLA's measured GEMM table ({@code
 * default_matmul_perf_table.txtpb}, key {@code sm_100_B200}) puts its E4M3 GEMMs of 10^11 FLOPs
 * and more at 0.78 of 4,500 TFLOP/s (least squares on the logarithm, with an 8 us ramp), and the
 * model with 0.75 is within 10% of the table's GEMMs of 10^10 FLOPs and more ({@code
 * GemmTableTest}).
 *
 * @param peakFlops the FP8 dense peak, FLOP/s
 * @param efficiency the fraction of it a large GEMM reaches, in (0, 1]
 */
public record Fp8Gemms(double peakFlops, double efficiency) {
  /** The large-GEMM fraction of the FP8 peak (TileLang, H800 SXM, 8192^3: 1,484 of 1,979). */
  public static final double EFFICIENCY = 0.75;

  /** Checks the numbers. */
  public Fp8Gemms {
    Require.that(peakFlops > 0 && Double.isFinite(peakFlops), "FP8 peak must be > 0");
    Require.that(efficiency > 0 && efficiency <= 1, "FP8 GEMM efficiency must be in (0, 1]");
  }

  /**
   * The FP8 GEMMs of a GPU, if its architecture has FP8 tensor cores (Hopper and later, {@link
   * Architecture#fp8GemmEfficiency}) and its datasheet states an FP8 peak.
   *
   * @param gpu the GPU
   * @return its FP8 GEMMs, or empty
   */
  public static Optional<Fp8Gemms> of(GpuSpec gpu) {
    java.util.OptionalDouble e = gpu.architecture().fp8GemmEfficiency();
    return e.isEmpty() ? Optional.empty()
        : gpu.peak(Precision.FP8).map(p -> new Fp8Gemms(p, e.getAsDouble()));
  }

  /**
   * Checks that a GPU has FP8 tensor cores.
   *
   * @param gpu the GPU
   * @throws InputException naming the GPU and those that have them
   */
  public static void require(GpuSpec gpu) {
    if (of(gpu).isEmpty() && gpu.peak(Precision.FP8).isPresent()) {
      throw new InputException("fp8 training is not priced on the " + gpu.name() + " ("
          + gpu.architecture().word() + "): it has FP8 math, but meshplan has no published FP8 "
          + "GEMM benchmark there to price it with; use " + gpu.trainingType().hloName()
          + ", or a GPU that has them: " + String.join(", ", withFp8()));
    }
    if (of(gpu).isEmpty()) {
      throw new InputException("fp8 training needs FP8 tensor cores, which the " + gpu.name()
          + " does not have; use " + gpu.trainingType().hloName() + ", or a GPU that has them: " + String.join(", ", withFp8()));
    }
  }

  private static java.util.List<String> withFp8() {
    return GpuCatalog.names().stream()
        .filter(n -> GpuCatalog.find(n).flatMap(Fp8Gemms::of).isPresent()).toList();
  }
}
