package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * An inter-node network as seen by one node.
 *
 * @param name catalog name, e.g. {@code ib-ndr400}
 * @param kind transport family
 * @param nicBandwidth bandwidth of one NIC in one direction, in bytes/s (line rate / 8)
 * @param nicsPerNode the number of NICs a node usually has for GPU traffic with this fabric
 * @param latency the end-to-end latency of one small NCCL operation across the fabric, in seconds
 */
public record Fabric(String name, FabricKind kind, double nicBandwidth, int nicsPerNode,
    double latency) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the numbers. */
  public Fabric {
    Require.nonNull(name, "fabric name");
    Require.nonNull(kind, "fabric kind");
    Require.that(nicBandwidth > 0 && Double.isFinite(nicBandwidth),
        "fabric " + name + ": NIC bandwidth must be positive, got " + nicBandwidth);
    Require.positive(nicsPerNode, "fabric " + name + " NICs per node");
    Require.nonNegative(latency, "fabric " + name + " latency");
  }

  /**
   * A copy with another per-NIC bandwidth.
   *
   * @param bytesPerSecond bytes/s
   * @return the new fabric
   */
  public Fabric withNicBandwidth(double bytesPerSecond) {
    return new Fabric(name, kind, bytesPerSecond, nicsPerNode, latency);
  }

  /**
   * A copy with another NIC count.
   *
   * @param nics NICs per node
   * @return the new fabric
   */
  public Fabric withNicsPerNode(int nics) {
    return new Fabric(name, kind, nicBandwidth, nics, latency);
  }

  /**
   * A copy with another latency.
   *
   * @param seconds seconds
   * @return the new fabric
   */
  public Fabric withLatency(double seconds) {
    return new Fabric(name, kind, nicBandwidth, nicsPerNode, seconds);
  }
}
