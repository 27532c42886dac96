package io.meshplan.cluster;

import io.meshplan.util.InputException;
import java.util.List;
import java.util.Optional;

/**
 * The GPUs of meshplan's own catalog ({@link HardwareCatalog#shipped}, the {@code catalog.yaml}
 * resource, where each entry cites its datasheet): lookups for code that prices on the shipped
 * hardware. Code that takes a user's catalog asks its {@link HardwareCatalog} instead.
 *
 * <p>Memory sizes are binary gigabytes (2^30 bytes), the unit in which the marketing capacities
 * are actually provisioned; bandwidths are decimal (10^9). NVLink bandwidth is stored per
 * direction, half of the datasheet's bidirectional figure. Short names: "H100" alone means the
 * SXM part of its datasheet's first column ({@code h100-80gb}), "H200" the catalog's {@code
 * h200-141gb}; {@code v100} and {@code a100} fit two entries each and are refused naming both.
 */
public final class GpuCatalog {
  private GpuCatalog() {}

  /**
   * Looks a GPU up by its catalog name or its short name (case-insensitive).
   *
   * @param name the name
   * @return the spec, or empty
   */
  public static Optional<GpuSpec> find(String name) {
    return HardwareCatalog.shipped().gpu(name).map(GpuEntry::spec);
  }

  /**
   * Every name {@link #find} accepts, sorted: the catalog names and the short names.
   *
   * @return the names
   */
  public static List<String> acceptedNames() {
    return HardwareCatalog.shipped().acceptedGpuNames();
  }

  /**
   * Why a name is not a GPU, in words, listing the accepted names.
   *
   * @param name the name {@link #find} did not know
   * @return e.g. {@code unknown gpu 'a100': it is a100-40gb or a100-80gb; valid: ...}
   */
  public static String unknown(String name) {
    return HardwareCatalog.shipped().unknownGpu(name);
  }

  /**
   * The catalog names, sorted.
   *
   * @return the names
   */
  public static List<String> names() {
    return HardwareCatalog.shipped().gpuNames();
  }

  /**
   * The fabric a cluster of this GPU has when the cluster string names none: its catalog entry's
   * {@code defaultFabric}.
   *
   * @param gpu a GPU of the shipped catalog
   * @return the catalog fabric name
   * @throws InputException when the GPU is not in the shipped catalog
   */
  public static String defaultFabric(GpuSpec gpu) {
    return HardwareCatalog.shipped().gpu(gpu.name())
        .orElseThrow(() -> new InputException(unknown(gpu.name()))).defaultFabric();
  }
}
