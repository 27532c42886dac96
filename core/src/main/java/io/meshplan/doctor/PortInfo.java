package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.List;
import java.util.OptionalDouble;

/**
 * One port of an RDMA device, as read from {@code class/infiniband/<device>/ports/<port>/}.
 *
 * @param device the RDMA device name, for example {@code mlx5_0} or {@code mlx5_bond_0}
 * @param port the port number (1-based, as in sysfs)
 * @param state the logical state name from {@code state} ({@code 4: ACTIVE} gives {@code ACTIVE}),
 *     or {@code UNKNOWN} when unreadable
 * @param physState the physical state name from {@code phys_state} ({@code 5: LinkUp} gives {@code
 *     LinkUp}), or {@code UNKNOWN}
 * @param linkLayer {@code InfiniBand}, {@code Ethernet} (RoCE), or {@code UNKNOWN}
 * @param rateGbps the signalling rate in Gb/s from {@code rate} ({@code 200 Gb/sec (4X HDR)} gives
 *     200), or empty when unreadable
 * @param gids the usable GID entries (non-zero, readable type), in index order
 */
public record PortInfo(
    String device,
    int port,
    String state,
    String physState,
    String linkLayer,
    OptionalDouble rateGbps,
    List<GidEntry> gids) {
  /** The value used for a state or link layer that could not be read. */
  public static final String UNKNOWN = "UNKNOWN";
  /** The {@code link_layer} text of an InfiniBand port. */
  public static final String INFINIBAND = "InfiniBand";
  /** The {@code link_layer} text of a RoCE port. */
  public static final String ETHERNET = "Ethernet";

  /** Validates and copies. */
  public PortInfo {
    Require.nonNull(device, "device");
    Require.that(port >= 0, "port number must be >= 0, got " + port);
    Require.nonNull(state, "state");
    Require.nonNull(physState, "phys state");
    Require.nonNull(linkLayer, "link layer");
    Require.nonNull(rateGbps, "rate");
    gids = List.copyOf(gids);
  }

  /**
   * The {@code device:port} name used by NCCL, UCX and the warnings.
   *
   * @return for example {@code mlx5_0:1}
   */
  public String id() {
    return device + ":" + port;
  }

  /**
   * Whether the port is logically up ({@code state} is {@code ACTIVE}).
   *
   * @return true when NCCL can use it
   */
  public boolean active() {
    return "ACTIVE".equals(state);
  }

  /**
   * Whether the link layer is Ethernet, so the port is RoCE and needs a GID index.
   *
   * @return true for RoCE
   */
  public boolean roce() {
    return ETHERNET.equals(linkLayer);
  }
}
