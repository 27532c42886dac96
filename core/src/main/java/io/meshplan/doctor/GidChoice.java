package io.meshplan.doctor;

import io.meshplan.util.Require;

/**
 * The GID index chosen for a RoCE port.
 *
 * @param index the value for {@code NCCL_IB_GID_INDEX}
 * @param kind its kind; anything but {@link GidKind#ROCE_V2_IPV4} is a fallback
 * @param address the GID text
 * @param netdev the interface from {@code gid_attrs/ndevs/<index>}, or empty
 */
public record GidChoice(int index, GidKind kind, String address, String netdev) {
  /** Validates. */
  public GidChoice {
    Require.that(index >= 0, "GID index must be >= 0, got " + index);
    Require.nonNull(kind, "GID kind");
    Require.nonNull(address, "GID address");
    netdev = netdev == null ? "" : netdev;
  }
}
