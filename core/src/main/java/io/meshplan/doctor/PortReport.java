package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * The doctor's view of one port: what was read plus what was decided.
 *
 * @param info the port as read from sysfs (rate in Gb/s)
 * @param gid the GID chosen for a RoCE port; empty on InfiniBand or when there is no usable GID
 * @param gidNote why the GID index is what it is, for example {@code RoCE v2 IPv4} or {@code not
 *     needed on InfiniBand (NCCL default 0)}
 * @param netdev the network interface behind the port, or empty when none was found
 * @param selected whether the port is in {@code NCCL_IB_HCA} and {@code UCX_NET_DEVICES}
 */
public record PortReport(
    PortInfo info, Optional<GidChoice> gid, String gidNote, String netdev, boolean selected) {
  /** Validates. */
  public PortReport {
    Require.nonNull(info, "port info");
    Require.nonNull(gid, "gid");
    Require.nonNull(gidNote, "gid note");
    netdev = netdev == null ? "" : netdev;
  }
}
