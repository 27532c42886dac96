package io.meshplan.calibrate;

import io.meshplan.cluster.Architecture;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;

/**
 * The sustained compute throughput of one GPU architecture relative to meshplan's kernel-level
 * prices ({@link io.meshplan.cluster.KernelTimeModel#scaled}): every kernel time is divided by
 * {@code scale}, communication is untouched. The kernel-level prices come from short kernel
 * benchmarks at boost clock; a training job runs for hours at the clock its power limit
 * sustains, with the host and framework stalls a kernel benchmark does not have. One physical
 * quantity per architecture, fitted to end-to-end runs ({@code meshplan calibrate --train}).
 *
 * @param scale the throughput factor, in [{@link ComputeScaleFitter#MIN}, {@link #MAX}] (0.8:
 *     kernels take 1/0.8 of their kernel-level time)
 * @param runs the runs it was fitted to, >= 1
 * @param folds the public folds (one per software stack) the runs came from, sorted; empty for a
 *     fit to a user's training logs. With folds, a scale of exactly 1 says the protocol kept
 *     kernel-level prices for the architecture and only checked them on the runs
 * @param band the 90% interval of its predictions, or null where too few residuals give one
 */
public record ComputeScale(double scale, int runs, List<String> folds, ErrorBand band)
    implements java.io.Serializable {
  private static final long serialVersionUID = 2L;

  /**
   * The largest scale read or fitted: kernels 20% faster than their kernel-level price. The
   * kernel-level prices are measured kernel throughputs (cuBLAS, FlashAttention); a job cannot run
   * its kernels much faster than the kernels run alone, and a larger factor points at a run stated
   * wrongly, not at the hardware.
   */
  public static final double MAX = 1.2;

  /** Validates the numbers. */
  public ComputeScale {
    Require.that(scale > 0 && Double.isFinite(scale), "compute scale must be > 0, got " + scale);
    Require.positive(runs, "runs");
    folds = List.copyOf(new java.util.TreeSet<>(Require.nonNull(folds, "folds")));
  }

  /**
   * A scale fitted to a user's training logs, with no folds and no band.
   *
   * @param scale the factor
   * @param runs the runs
   */
  public ComputeScale(double scale, int runs) {
    this(scale, runs, List.of(), null);
  }

  /**
   * Whether the protocol kept kernel-level prices: a scale of 1 checked on public folds.
   *
   * @return whether nothing was fitted
   */
  public boolean kernelLevel() {
    return scale == 1 && !folds.isEmpty();
  }

  /**
   * The 90% interval of predictions at this scale.
   *
   * @return the band, or empty
   */
  public Optional<ErrorBand> errorBand() {
    return Optional.ofNullable(band);
  }

  /**
   * The largest meaningful scale of an architecture: {@link #MAX}, or less where the loosest
   * {@link io.meshplan.cluster.KernelTimeModel#maxScale} of its catalog GPUs over the precisions
   * they train in is lower (the scale at which the fastest modelled kernel reaches the dense
   * peak).
   *
   * @param architecture the architecture
   * @return the bound, or empty when no catalog GPU has the architecture or meshplan prices none
   *     of its precisions (CDNA 4)
   */
  public static java.util.OptionalDouble bound(Architecture architecture) {
    java.util.OptionalDouble max = java.util.OptionalDouble.empty();
    for (String name : io.meshplan.cluster.GpuCatalog.names()) {
      io.meshplan.cluster.GpuSpec g = io.meshplan.cluster.GpuCatalog.find(name).orElseThrow();
      if (g.architecture() != architecture) {
        continue;
      }
      for (int bytes : new int[] {2, 4}) {
        if (!architecture.prices(io.meshplan.cluster.KernelTimeModel.trainingPrecision(g, bytes))) {
          continue;
        }
        double m = io.meshplan.cluster.KernelTimeModel.of(g, bytes).maxScale();
        max = java.util.OptionalDouble.of(Math.max(m, max.orElse(0)));
      }
    }
    return max.isPresent() ? java.util.OptionalDouble.of(Math.min(MAX, max.getAsDouble())) : max;
  }

  /**
   * The architecture a profile's {@code compute} key names: an architecture word ({@code
   * hopper}), or, as profiles written before architectures were catalog data did, the catalog
   * name of a GPU before its first {@code -} ({@code h100} for {@code h100-80gb}).
   *
   * @param key the key
   * @return the architecture
   * @throws InputException when the key names neither
   */
  public static Architecture architecture(String key) {
    String k = key.toLowerCase(java.util.Locale.ROOT);
    for (Architecture a : Architecture.values()) {
      if (a.word().equals(k)) {
        return a;
      }
    }
    for (String name : io.meshplan.cluster.GpuCatalog.names()) {
      int dash = name.indexOf('-');
      if ((dash > 0 ? name.substring(0, dash) : name).equals(k)) {
        return io.meshplan.cluster.GpuCatalog.find(name).orElseThrow().architecture();
      }
    }
    throw new InputException("'" + key + "' is neither a GPU architecture ("
        + String.join(", ", java.util.Arrays.stream(Architecture.values())
            .map(Architecture::word).toList()) + ") nor a GPU of meshplan's catalog");
  }
}
