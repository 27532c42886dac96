package io.meshplan.cluster;

import java.util.List;
import java.util.Optional;

/**
 * The fabrics of meshplan's own catalog ({@link HardwareCatalog#shipped}, the {@code catalog.yaml}
 * resource). Bandwidths are line rates per direction divided by 8: InfiniBand EDR 100 Gb/s, HDR
 * 200 Gb/s, NDR 400 Gb/s (NVIDIA ConnectX-5/6/7 product briefs), RoCE at 100/200/400 GbE, and 25
 * GbE for the TCP socket transport.
 *
 * <p>NICs per node: 8 for InfiniBand and RoCE, the rail-optimized layout of DGX A100/H100/B200 (one
 * compute NIC per GPU); 1 for TCP. A node never uses more NICs than it has GPUs (see {@link
 * ClusterSpec#nodeNetworkBandwidth()}).
 *
 * <p>Latency is an order of magnitude for one small NCCL collective step across the fabric (a few
 * microseconds with RDMA, tens with sockets), not a switch port latency; calibration replaces it.
 */
public final class FabricCatalog {
  private FabricCatalog() {}

  /**
   * Looks a fabric up by name (case-insensitive).
   *
   * @param name the name
   * @return the fabric, or empty
   */
  public static Optional<Fabric> find(String name) {
    return HardwareCatalog.shipped().fabric(name);
  }

  /**
   * The catalog names, sorted.
   *
   * @return the names
   */
  public static List<String> names() {
    return HardwareCatalog.shipped().fabricNames();
  }
}
