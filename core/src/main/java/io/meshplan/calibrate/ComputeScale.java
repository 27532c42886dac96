package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * The measured speed of one GPU architecture's kernels relative to meshplan's kernel model
 * ({@link io.meshplan.cluster.KernelTimeModel#scaled}): every compute time is divided by {@code
 * scale}, communication is untouched.
 *
 * @param scale the speed-up, > 0 (0.9: kernels take 1/0.9 of the modelled time)
 * @param runs the training runs it was fitted to, >= 1
 */
public record ComputeScale(double scale, int runs) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the numbers. */
  public ComputeScale {
    Require.that(scale > 0 && Double.isFinite(scale), "compute scale must be > 0, got " + scale);
    Require.positive(runs, "runs");
  }

  /**
   * The largest meaningful scale of an architecture: the loosest {@link
   * io.meshplan.cluster.KernelTimeModel#maxScale} of its catalog GPUs over the precisions they
   * train in, the scale at which the fastest modelled kernel (a large GEMM at 0.8 of the dense
   * peak, 0.68 for Blackwell's 16-bit GEMMs, or a fused attention kernel) reaches the dense
   * peak. A scale above it claims kernels faster than the hardware: 1 / 0.68 = 1.47 is the
   * largest over the whole catalog.
   *
   * @param architecture the architecture key ({@link #architecture})
   * @return the bound, or empty when no catalog GPU has the architecture
   */
  public static java.util.OptionalDouble bound(String architecture) {
    java.util.OptionalDouble max = java.util.OptionalDouble.empty();
    for (String name : io.meshplan.cluster.GpuCatalog.names()) {
      io.meshplan.cluster.GpuSpec g = io.meshplan.cluster.GpuCatalog.find(name).orElseThrow();
      if (!architecture(g.name()).equals(architecture)) {
        continue;
      }
      for (int bytes : new int[] {2, 4}) {
        double m = io.meshplan.cluster.KernelTimeModel.of(g, bytes).maxScale();
        max = java.util.OptionalDouble.of(Math.max(m, max.orElse(0)));
      }
    }
    return max;
  }

  /**
   * The architecture a GPU catalog name belongs to: the part before the first {@code -} ({@code
   * a100-80gb} and {@code a100-40gb} are both {@code a100}), lower case. The kernels, and so the
   * scale, are those of the chip, not of its memory size.
   *
   * @param gpuName a GPU name, e.g. {@code h100-80gb}
   * @return the architecture key, e.g. {@code h100}
   */
  public static String architecture(String gpuName) {
    String n = gpuName.toLowerCase(java.util.Locale.ROOT);
    int dash = n.indexOf('-');
    return dash > 0 ? n.substring(0, dash) : n;
  }
}
