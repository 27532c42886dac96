package io.meshplan.cluster;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The fabrics meshplan knows. Bandwidths are line rates per direction divided by 8: InfiniBand EDR
 * 100 Gb/s, HDR 200 Gb/s, NDR 400 Gb/s (NVIDIA ConnectX-5/6/7 product briefs), RoCE at 100/200/400
 * GbE, and 25 GbE for the TCP socket transport.
 *
 * <p>NICs per node: 8 for InfiniBand and RoCE, the rail-optimized layout of DGX A100/H100/B200 (one
 * compute NIC per GPU); 1 for TCP. A node never uses more NICs than it has GPUs (see {@link
 * ClusterSpec#nodeNetworkBandwidth()}).
 *
 * <p>Latency is an order of magnitude for one small NCCL collective step across the fabric (a few
 * microseconds with RDMA, tens with sockets), not a switch port latency; calibration replaces it.
 */
public final class FabricCatalog {
  private static final double GBIT = 1e9 / 8;
  private static final Map<String, Fabric> FABRICS = build();

  private FabricCatalog() {}

  private static Map<String, Fabric> build() {
    Map<String, Fabric> m = new LinkedHashMap<>();
    add(m, new Fabric("ib-edr100", FabricKind.INFINIBAND, 100 * GBIT, 8, 5e-6));
    add(m, new Fabric("ib-hdr200", FabricKind.INFINIBAND, 200 * GBIT, 8, 5e-6));
    add(m, new Fabric("ib-ndr400", FabricKind.INFINIBAND, 400 * GBIT, 8, 5e-6));
    add(m, new Fabric("roce-100", FabricKind.ROCE, 100 * GBIT, 8, 8e-6));
    add(m, new Fabric("roce-200", FabricKind.ROCE, 200 * GBIT, 8, 8e-6));
    add(m, new Fabric("roce-400", FabricKind.ROCE, 400 * GBIT, 8, 8e-6));
    add(m, new Fabric("tcp-25", FabricKind.ETHERNET, 25 * GBIT, 1, 50e-6));
    return Map.copyOf(m);
  }

  private static void add(Map<String, Fabric> m, Fabric f) {
    m.put(f.name(), f);
  }

  /**
   * Looks a fabric up by name (case-insensitive).
   *
   * @param name the name
   * @return the fabric, or empty
   */
  public static Optional<Fabric> find(String name) {
    return Optional.ofNullable(FABRICS.get(name.toLowerCase(Locale.ROOT)));
  }

  /**
   * The catalog names, sorted.
   *
   * @return the names
   */
  public static List<String> names() {
    return FABRICS.keySet().stream().sorted().toList();
  }
}
