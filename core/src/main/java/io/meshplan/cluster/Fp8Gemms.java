package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How fast GEMMs with 8-bit floating-point operands (E4M3/E5M2, bf16 result) run on a GPU in
 * training: its FP8 dense peak from the datasheet ({@link GpuCatalog}) and the fraction of it a
 * large GEMM reaches, its operands' casts included.
 *
 * <p>The GEMM kernel alone, its operands already in FP8, reaches {@link #EFFICIENCY}, 0.75, a
 * kernel-level measurement: TileLang's FP8 matmul benchmark ({@code tile-ai/tilelang}, {@code
 * benchmark/matmul_fp8/README.md}) measured {@code M = N = 8192} GEMMs on an H800 SXM, whose FP8
 * tensor cores and clocks are the H100 SXM's (1,979 TFLOP/s dense), at 1,461 and 1,507 TFLOP/s
 * for {@code K = 8192} (0.74 and 0.76 of peak) and 1,523 and 1,541 for {@code K = 16384}.
 * DeepGEMM (DeepSeek, 2025) states "up to 1550 TFLOPS" (0.78) for its best FP8 shapes on the same
 * GPU. B200's kernels reach about the same fraction of their own FP8 peak: OpenXLA's measured GEMM
 * table ({@code default_matmul_perf_table.txtpb}, key {@code sm_100_B200}) puts its E4M3 GEMMs of
 * 10^11 FLOPs and more at 0.78 of 4,500 TFLOP/s (least squares on the logarithm, with an 8 us
 * ramp), and the model with 0.75 is within 10% of the table's GEMMs of 10^10 FLOPs and more
 * ({@code GemmTableTest}).
 *
 * <p>A training step also casts each GEMM's operands to FP8, and that is what it runs: the fraction
 * priced ({@link #of(GpuSpec, Fp8Quantization)}) is the same GPU's 16-bit large-GEMM fraction
 * ({@link KernelTimeModel#gemmEfficiency}) times Transformer Engine's measured speed-up of FP8
 * GEMMs with their casts over 16-bit ones ({@link Fp8Quantization#speedupOver16Bit}), over the
 * FP8 to 16-bit peak ratio, and never more than the kernel alone's 0.75. On an H100 that is 0.80 x
 * 1.687 / 2 = 0.675 of the FP8 peak under delayed scaling and 0.631 under current scaling; on a
 * B200 0.68 x 1.395 / 2 = 0.474 under current scaling, 0.483 under MXFP8 and 0.556 under delayed
 * scaling: a Blackwell GEMM in FP8 training runs 1.4-1.6x its 16-bit speed, not the 2.2x of its
 * kernels alone, as Transformer Engine's casts do not speed up with the tensor cores. NVFP4's
 * 4-bit GEMMs, which Transformer Engine runs through the same autocast, are priced in the same
 * units: 0.68 x 1.977 / 2 = 0.672 of a B200's or GB200's FP8 peak, 1.98x its 16-bit speed,
 * bounded by NVFP4's kernels alone (3.481x, {@link Fp8Quantization#kernelAloneOver16Bit}) and
 * never past the FP8 peak itself. On AMD's CDNA 3 the kernel alone reaches {@link
 * #CDNA3_EFFICIENCY}, 0.443 of the FP8 peak, and in training 0.51 x 1.536 / 2 = 0.392 under delayed
 * scaling ({@link Fp8Quantization}).
 *
 * @param peakFlops the FP8 dense peak, FLOP/s
 * @param efficiency the fraction of it a large GEMM reaches in training, in (0, 1]
 */
public record Fp8Gemms(double peakFlops, double efficiency) {
  /**
   * The large-GEMM fraction of the FP8 peak of the kernel alone, its operands already cast
   * (TileLang, H800 SXM, 8192^3: 1,484 of 1,979).
   */
  public static final double EFFICIENCY = 0.75;

  /**
   * The large-GEMM fraction of an AMD CDNA 3 GPU's (MI300X, MI325X) FP8 dense peak, the kernel
   * alone: Microsoft Azure's AI benchmarking guide ({@code Azure/AI-benchmarking-guide}, {@code
   * Azure_Results/ND_MI300X_v5_results.md}, read at the copy {@code
   * samuel-bohman/AI-benchmarking-guide} 3de0c29) measured hipBLASLt's FP8 GEMMs on an ND MI300X
   * v5 (ROCm 6.2, random operands, 10,000 warm-up iterations) at 1,159.23 TFLOP/s for {@code M = N
   * = K = 8192} and 1,159.54 for {@code 6144 x 12288 x 12288}: 1,159.23 / 2,614.9 = 0.4433 of the
   * datasheet's FP8 peak. In training the casts come on top ({@link
   * Fp8Quantization#speedupOver16Bit}).
   */
  public static final double CDNA3_EFFICIENCY = 1159.23 / 2614.9;

  /** Checks the numbers. */
  public Fp8Gemms {
    Require.that(peakFlops > 0 && Double.isFinite(peakFlops), "FP8 peak must be > 0");
    Require.that(efficiency > 0 && efficiency <= 1, "FP8 GEMM efficiency must be in (0, 1]");
  }

  /**
   * The FP8 GEMMs of a GPU under delayed scaling (Transformer Engine's and Megatron-Core's default
   * recipe), if its architecture has priced FP8 GEMMs (Hopper, Blackwell and CDNA 3, {@link
   * Architecture#hasFp8Gemms}) and its datasheet states an FP8 peak.
   *
   * @param gpu the GPU
   * @return its FP8 GEMMs, or empty
   */
  public static Optional<Fp8Gemms> of(GpuSpec gpu) {
    return of(gpu, Fp8Quantization.DELAYED);
  }

  /**
   * The FP8 GEMMs of a GPU in training whose operands are cast as a recipe casts them (above).
   *
   * @param gpu the GPU
   * @param q how the operands are scaled and cast
   * @return its FP8 GEMMs, or empty where it has no FP8 tensor cores, no FP8 peak or no 16-bit
   *     peak to measure them against
   * @throws InputException where the recipe has no measurement on the GPU's architecture
   */
  public static Optional<Fp8Gemms> of(GpuSpec gpu, Fp8Quantization q) {
    Require.nonNull(q, "FP8 quantization");
    Precision sixteen = KernelTimeModel.trainingPrecision(gpu, 2);
    Optional<Double> peak16 = gpu.peak(sixteen);
    if (!gpu.architecture().hasFp8Gemms() || peak16.isEmpty()) {
      return Optional.empty();
    }
    double sixteenBitRate = KernelTimeModel.gemmEfficiency(gpu, sixteen) * peak16.get();
    return gpu.peak(Precision.FP8).map(p -> {
      // The kernel alone bounds the price: the architecture's FP8 kernel fraction (0.75 on
      // NVIDIA), or NVFP4's measured kernels.
      double kernel = Math.min(1.0, q.kernelAloneOver16Bit().isPresent()
          ? sixteenBitRate / p * q.kernelAloneOver16Bit().getAsDouble()
          : gpu.architecture().fp8KernelEfficiency());
      return new Fp8Gemms(p, Math.min(kernel,
          sixteenBitRate / p * q.speedupOver16Bit(gpu.architecture())));
    });
  }

  /**
   * Checks that a GPU has FP8 tensor cores.
   *
   * @param gpu the GPU
   * @throws InputException naming the GPU and those that have them
   */
  public static void require(GpuSpec gpu) {
    if (gpu.peak(KernelTimeModel.trainingPrecision(gpu, 2)).isEmpty()) {
      throw new InputException("fp8 training keeps its weights, attention and norms in bf16, "
          + "and the " + gpu.name() + " states no bf16 or fp16 peak; add one to its catalog "
          + "entry, or train in f32");
    }
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
