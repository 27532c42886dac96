package io.meshplan.cluster;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * Prices one kernel on one GPU for training plans: a roofline (Williams, Waterman and Patterson,
 * CACM 2009) whose math efficiency grows with the work of the kernel. A kernel of {@code f} FLOPs
 * runs its math at {@code peak * gemmEfficiency * f / (f + peak * rampSeconds)}: a large GEMM
 * approaches {@code gemmEfficiency} of the dense peak, while a small one pays a fixed start-up and
 * tail cost of about {@code rampSeconds}, the wave-quantization and pipeline-fill time that makes
 * small or thin matrix multiplications slow. Memory-bound kernels (elementwise ops, reductions,
 * softmax) run at {@code memoryEfficiency} of the HBM bandwidth. The time is the larger of the two.
 *
 * <p>Defaults: 0.8 of the dense peak for large half-precision GEMMs (cuBLAS reaches 250-270 of
 * A100's 312 TFLOP/s on square GEMMs of size 4096 and up: NVIDIA's "Matrix Multiplication
 * Background User's Guide", and Narayanan et al. SC'21 report 52% of peak end to end on the largest
 * models), a 5 µs ramp (so a 1 GFLOP GEMM on an A100 takes about 10 µs, a third of peak), and 0.8
 * of HBM bandwidth for streaming kernels (STREAM-like copies reach 80-90%). XLA's measured GEMM
 * table confirms 0.8 and 5 us on H100 and puts B200's 16-bit GEMMs at 0.68 ({@link
 * #gemmEfficiency}).
 *
 * @param peakFlops dense peak math throughput for the precision in use, FLOP/s
 * @param hbmBandwidth device memory bandwidth, bytes/s
 * @param gemmEfficiency the fraction of peak a large GEMM reaches, in (0, 1]
 * @param rampSeconds the start-up cost of a kernel, expressed as seconds at peak, >= 0
 * @param memoryEfficiency the fraction of HBM bandwidth a streaming kernel reaches, in (0, 1]
 * @param attention the GPU's fused attention kernels, empty where it has none
 * @param fp8 the GPU's FP8 GEMMs, empty where it has no FP8 tensor cores
 */
public record KernelTimeModel(double peakFlops, double hbmBandwidth, double gemmEfficiency,
    double rampSeconds, double memoryEfficiency, Optional<FusedAttentionKernels> attention,
    Optional<Fp8Gemms> fp8)
    implements ComputeModel {
  /** The default large-GEMM efficiency. */
  public static final double GEMM_EFFICIENCY = 0.8;
  /**
   * The large-GEMM fraction of a Blackwell GPU's 16-bit dense peak (XLA's measured B200 table,
   * {@link #gemmEfficiency}).
   */
  public static final double BLACKWELL_16BIT_GEMM_EFFICIENCY = 0.68;
  /**
   * The large-GEMM fraction of an AMD CDNA 3 GPU's (MI300X, MI325X) 16-bit dense peak: the
   * "Maximum Achievable Matmul FLOPS" table of stas00/ml-engineering ({@code
   * compute/accelerator/README.md} at b9e29720eebd4aa946fa9678975385efbc90a777, BF16, mean of 100
   * iterations of the best shape a brute-force search found through {@code torch.matmul}) measured
   * the MI300X at 668.4 TFLOP/s (10240x15360x8192, torch 2.5.1 on ROCm 6.3, TunableOp on): 668.4 /
   * 1,307.4 = 0.511 of the datasheet's dense peak. The same table's MI325X (same peaks, 1,000 W)
   * reached 784.9 (0.600), which the MI325X's catalog entry states as its own ({@link
   * GpuSpec#gemm16Efficiency}, {@code gemm16: 0.600}); the MI300X's figure is the
   * architecture's. The same table on NVIDIA agrees with {@link #GEMM_EFFICIENCY} (H100 SXM
   * 794.5 of 989, 0.80).
   */
  public static final double CDNA3_16BIT_GEMM_EFFICIENCY = 0.51;
  /** The default ramp, seconds. */
  public static final double RAMP_SECONDS = 5e-6;
  /** The default streaming efficiency. */
  public static final double MEMORY_EFFICIENCY = 0.8;

  /** Validates the numbers. */
  public KernelTimeModel {
    Require.that(peakFlops > 0 && Double.isFinite(peakFlops), "peak FLOP/s must be > 0");
    Require.that(hbmBandwidth > 0 && Double.isFinite(hbmBandwidth), "HBM bandwidth must be > 0");
    Require.that(gemmEfficiency > 0 && gemmEfficiency <= 1, "GEMM efficiency must be in (0, 1]");
    Require.that(rampSeconds >= 0 && Double.isFinite(rampSeconds), "ramp must be >= 0");
    Require.that(memoryEfficiency > 0 && memoryEfficiency <= 1,
        "memory efficiency must be in (0, 1]");
    Require.nonNull(attention, "attention kernels");
    Require.nonNull(fp8, "FP8 GEMMs");
  }

  /**
   * The default model of a GPU for a training precision's element size ({@link
   * #trainingPrecision}).
   *
   * @param gpu the GPU
   * @param elementBytes 4 for fp32 (IEEE fp32 math), 2 for bf16/fp16
   * @return the model
   */
  public static KernelTimeModel of(GpuSpec gpu, int elementBytes) {
    return of(gpu, trainingPrecision(gpu, elementBytes));
  }

  /**
   * The default model of a GPU whose matrix products run in a precision.
   *
   * @param gpu the GPU
   * @param dots the precision of the matrix products; the GPU must have it
   * @return the model
   */
  public static KernelTimeModel of(GpuSpec gpu, Precision dots) {
    return of(gpu, dots, Optional.empty());
  }

  /**
   * The default model of a GPU whose matrix products run in a precision and whose attention runs
   * a named fused kernel ({@link FusedAttentionKernels#of(GpuSpec, Optional)}).
   *
   * @param gpu the GPU
   * @param dots the precision of the matrix products; the GPU must have it
   * @param kernel the attention kernel, or empty for the architecture's default
   * @return the model
   * @throws io.meshplan.util.InputException when the kernel is not priced on the GPU
   */
  public static KernelTimeModel of(GpuSpec gpu, Precision dots,
      Optional<AttentionKernel> kernel) {
    return of(gpu, dots, kernel, Fp8Quantization.DELAYED);
  }

  /**
   * The default model of a GPU whose matrix products run in a precision, whose attention runs a
   * named fused kernel, and whose FP8 GEMMs cast their operands as a recipe does ({@link
   * Fp8Gemms#of(GpuSpec, Fp8Quantization)}).
   *
   * @param gpu the GPU
   * @param dots the precision of the matrix products; the GPU must have it
   * @param kernel the attention kernel, or empty for the architecture's default
   * @param fp8 how FP8 GEMMs scale and cast their operands
   * @return the model
   * @throws io.meshplan.util.InputException when the kernel or the FP8 recipe is not priced on
   *     the GPU
   */
  public static KernelTimeModel of(GpuSpec gpu, Precision dots,
      Optional<AttentionKernel> kernel, Fp8Quantization fp8) {
    gpu.architecture().requirePriced(gpu.name());
    return new KernelTimeModel(densePeak(gpu, dots), gpu.hbmBandwidth(), gemmEfficiency(gpu, dots),
        RAMP_SECONDS, MEMORY_EFFICIENCY, FusedAttentionKernels.of(gpu, kernel, fp8),
        Fp8Gemms.of(gpu, fp8));
  }

  /**
   * The fraction of the dense peak a large GEMM reaches on a GPU, by its architecture ({@link
   * Architecture#gemmEfficiency}): {@link #GEMM_EFFICIENCY}, except for 16-bit GEMMs on Blackwell
   * (B200), which reach {@link #BLACKWELL_16BIT_GEMM_EFFICIENCY}.
   *
   * <p>XLA's measured GEMM tables ({@code xla/service/gpu/model/default_matmul_perf_table.txtpb},
   * OpenXLA, 2026: one GPU's throughput for every {@code b x m x n x k} with {@code b} in 1, 2,
   * 4 and {@code m, n, k} from 256 to 4,096) check the form: fitted by least squares on the
   * logarithm over GEMMs of 10^11 FLOPs and more, H100's bf16 rows give 0.82 with a 7 us ramp
   * and over all rows 0.79 with 5 us, where this model has 0.8 and 5 us (its mean error on the
   * table is within a few percent, {@code GemmTableTest}); B200's bf16 rows give 0.68 with
   * 5 us, well below the 0.8 that Hopper and Ampere reach, and its FP8 rows 0.78 with 8 us,
   * where {@link Fp8Gemms} has 0.75 for the kernel alone. A GPU measured apart from its
   * architecture states its own 16-bit figure ({@link GpuSpec#gemm16Efficiency}).
   *
   * @param gpu the GPU
   * @param dots the precision of the matrix products
   * @return the fraction, in (0, 1]
   */
  public static double gemmEfficiency(GpuSpec gpu, Precision dots) {
    double own = gpu.gemm16Efficiency();
    return dots.sixteenBit() && own > 0 ? own : gpu.architecture().gemmEfficiency(dots);
  }

  /**
   * The dense peak of a training precision's element size ({@link #trainingPrecision}).
   *
   * @param gpu the GPU
   * @param elementBytes element size of the compute dtype, bytes
   * @return FLOP/s
   */
  public static double densePeak(GpuSpec gpu, int elementBytes) {
    return densePeak(gpu, trainingPrecision(gpu, elementBytes));
  }

  /**
   * The dense peak of a precision on a GPU.
   *
   * @param gpu the GPU
   * @param dots the precision
   * @return FLOP/s
   * @throws IllegalArgumentException if the GPU lacks it (callers check with {@link
   *     GpuSpec#requireTraining} first)
   */
  public static double densePeak(GpuSpec gpu, Precision dots) {
    return gpu.peak(dots).orElseThrow(() -> new IllegalArgumentException(gpu.name() + " has no "
        + dots + " math"));
  }

  /**
   * The math a training framework's matrix products run in, by element size: FP32 for 4-byte
   * elements (IEEE fp32, not TF32: {@link Precision#ofTraining}), BF16 for 2-byte ones, or FP16
   * on a GPU without BF16 (the two peaks are equal wherever both exist).
   *
   * @param gpu the GPU
   * @param elementBytes element size of the compute dtype, bytes
   * @return the precision
   */
  public static Precision trainingPrecision(GpuSpec gpu, int elementBytes) {
    if (elementBytes >= 4) {
      return Precision.FP32;
    }
    return gpu.peak(Precision.BF16).isPresent() ? Precision.BF16 : Precision.FP16;
  }

  /**
   * The math XLA's GPU compiler runs an HLO module's dots in, by element size: f32 dots with the
   * default precision config run on TF32 tensor cores where the GPU has them (JAX's {@code
   * jax_default_matmul_precision} documentation: "tensorfloat32" is the GPU default for f32
   * matrix products), on FP32 otherwise; 2-byte dots as {@link #trainingPrecision}.
   *
   * @param gpu the GPU
   * @param elementBytes element size of the module's dots, bytes
   * @return the precision
   */
  public static Precision xlaPrecision(GpuSpec gpu, int elementBytes) {
    if (elementBytes >= 4 && gpu.peak(Precision.TF32).isPresent()) {
      return Precision.TF32;
    }
    return trainingPrecision(gpu, elementBytes);
  }

  /**
   * This model with every kernel {@code scale} times faster: each time it prices (GEMMs, fused
   * attention, memory-bound kernels, and the ramp) divided by {@code scale}. A measured scale from
   * {@code meshplan calibrate --train} moves the whole kernel model of an architecture at once, so
   * one training log (one measured iteration time) determines it. Peak and bandwidth are
   * multiplied and the ramp divided, so {@code scaled(s).dotCost(f, b) == dotCost(f, b) / s}; the
   * FP8 peak scales with them.
   *
   * @param scale the speed-up, > 0 (1 leaves the model as is; 0.9 makes kernels 10% slower in
   *     throughput, i.e. 1/0.9 times the seconds)
   * @return the scaled model
   */
  public KernelTimeModel scaled(double scale) {
    Require.that(scale > 0 && Double.isFinite(scale), "compute scale must be > 0, got " + scale);
    // A profile's scale is bounded for its architecture when read; this precision's kernel model
    // may reach the peak sooner (Blackwell's 16-bit GEMMs against its fp32 ones).
    if (scale > maxScale() * (1 + 1e-12)) {
      throw new io.meshplan.util.InputException(String.format(java.util.Locale.ROOT,
          "compute scale %s would run the fastest kernel above the dense peak; at most %.4g in "
          + "this precision (1 / %.3g, the largest fraction of the peak the kernel model gives a "
          + "kernel)", scale, maxScale(), 1 / maxScale()));
    }
    if (scale == 1) {
      return this;
    }
    return new KernelTimeModel(peakFlops * scale, hbmBandwidth * scale, gemmEfficiency,
        rampSeconds / scale, memoryEfficiency, attention,
        fp8.map(f -> new Fp8Gemms(f.peakFlops() * scale, f.efficiency())));
  }

  /**
   * The largest {@link #scaled} factor that keeps every kernel at or below the dense peak: one over
   * the highest fraction of peak any kernel reaches (large GEMMs, fused attention). A measured
   * scale above it would claim kernels faster than the hardware.
   *
   * @return the largest meaningful scale, >= 1
   */
  public double maxScale() {
    double top = gemmEfficiency;
    if (attention.isPresent()) {
      // An FP8 kernel's fractions run to the FP8 peak: its share of that peak bounds the scale.
      top = Math.max(top, attention.get().peakShare());
    }
    if (fp8.isPresent()) {
      top = Math.max(top, fp8.get().efficiency());
    }
    return 1 / top;
  }

  /** FP8 GEMMs are priced with their operands' casts ({@link Fp8Gemms}) wherever there are any. */
  @Override
  public boolean fp8GemmsHoldTheirCasts() {
    return fp8.isPresent();
  }

  @Override
  public double cost(double flops, double bytes) {
    return Math.max(flops / (peakFlops * gemmEfficiency),
        bytes / (hbmBandwidth * memoryEfficiency));
  }

  /**
   * A fused attention kernel with heads of {@link FusedAttentionKernels#WIDE_HEAD} elements or
   * more ({@link #attentionCost(double, double, boolean, int)}).
   */
  @Override
  public double attentionCost(double flops, double bytes, boolean backward) {
    return attentionCost(flops, bytes, backward, FusedAttentionKernels.WIDE_HEAD);
  }

  /**
   * A fused attention kernel at {@link SequenceScaling#REFERENCE} tokens ({@link
   * #attentionCost(double, double, boolean, int, int)}).
   */
  @Override
  public double attentionCost(double flops, double bytes, boolean backward, int headDim) {
    return attentionCost(flops, bytes, backward, headDim, SequenceScaling.REFERENCE);
  }

  /**
   * A fused attention kernel at its published fraction of the dense peak for its head dimension
   * and sequence length ({@link FusedAttentionKernels#efficiency(boolean, int, int)}), never
   * faster than its memory traffic; priced as a matrix product on GPUs without the kernels.
   */
  @Override
  public double attentionCost(double flops, double bytes, boolean backward, int headDim,
      int sequence) {
    if (attention.isEmpty()) {
      return dotCost(flops, bytes);
    }
    double eff = attention.get().efficiency(backward, headDim, sequence);
    return Math.max(flops / (peakFlops * eff), cost(0, bytes));
  }

  /**
   * A GEMM with FP8 operands runs at the FP8 peak times its own large-GEMM efficiency ({@link
   * Fp8Gemms}), with the same ramp in seconds; on a GPU without FP8 tensor cores, or for other
   * operands, it is priced as {@link #dotCost(double, double)}.
   */
  @Override
  public double dotCost(double flops, double bytes, Precision operands) {
    if (operands != Precision.FP8 || fp8.isEmpty() || flops <= 0) {
      return dotCost(flops, bytes);
    }
    Fp8Gemms f = fp8.get();
    return Math.max((flops + f.peakFlops() * rampSeconds) / (f.peakFlops() * f.efficiency()),
        bytes / (hbmBandwidth * memoryEfficiency));
  }

  @Override
  public double dotCost(double flops, double bytes) {
    if (flops <= 0) {
      return cost(flops, bytes);
    }
    return Math.max((flops + peakFlops * rampSeconds) / (peakFlops * gemmEfficiency),
        bytes / (hbmBandwidth * memoryEfficiency));
  }
}
