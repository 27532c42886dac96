package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * Prices computation by the roofline model (Williams, Waterman and Patterson, CACM 2009): an op
 * takes the longer of its math time {@code flops / (peak * mathEfficiency)} and its memory time
 * {@code bytes / (hbmBandwidth * memoryEfficiency)}. The efficiencies are explicit parameters that
 * calibration can change; the defaults (0.6 of peak math, 0.8 of HBM bandwidth) are typical of
 * large matrix multiplications and streaming kernels on A100/H100.
 *
 * @param peakFlops peak math throughput for the precision in use, FLOP/s
 * @param hbmBandwidth device memory bandwidth, bytes/s
 * @param mathEfficiency the achieved fraction of peak math, in (0, 1]
 * @param memoryEfficiency the achieved fraction of memory bandwidth, in (0, 1]
 */
public record RooflineComputeModel(
    double peakFlops, double hbmBandwidth, double mathEfficiency, double memoryEfficiency)
    implements ComputeModel {
  /** Validates the numbers. */
  public RooflineComputeModel {
    Require.that(peakFlops > 0 && hbmBandwidth > 0, "peak FLOP/s and HBM bandwidth must be > 0");
    Require.that(mathEfficiency > 0 && mathEfficiency <= 1 && memoryEfficiency > 0
        && memoryEfficiency <= 1, "efficiencies must be in (0, 1]");
  }

  /**
   * The default model of a GPU for an element size.
   *
   * @param gpu the GPU
   * @param elementBytes 4 for fp32 (TF32 tensor cores when the GPU has them), 2 for bf16/fp16
   * @return the model
   */
  public static RooflineComputeModel of(GpuSpec gpu, int elementBytes) {
    Precision p = elementBytes >= 4 ? Precision.TF32 : Precision.BF16;
    double peak = gpu.peak(p).orElse(gpu.peak(Precision.FP32).orElseThrow());
    return new RooflineComputeModel(peak, gpu.hbmBandwidth(), 0.6, 0.8);
  }

  @Override
  public double cost(double flops, double bytes) {
    return Math.max(flops / (peakFlops * mathEfficiency), bytes / (hbmBandwidth * memoryEfficiency));
  }
}
