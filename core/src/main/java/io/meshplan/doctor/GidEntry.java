package io.meshplan.doctor;

import io.meshplan.util.Require;

/**
 * One usable (non-zero, typed) entry of a port's GID table.
 *
 * @param index the GID index, the {@code <i>} of {@code gids/<i>}, at least 0
 * @param address the GID text as read, for example {@code 0000:0000:0000:0000:0000:ffff:0a00:0032}
 * @param addressKind what kind of address it is; never {@link GidAddressKind#ZERO}
 * @param type the RoCE version from {@code gid_attrs/types/<i>}
 * @param netdev the network interface from {@code gid_attrs/ndevs/<i>}, or empty when absent
 */
public record GidEntry(
    int index, String address, GidAddressKind addressKind, GidType type, String netdev) {
  /** Validates the entry. */
  public GidEntry {
    Require.that(index >= 0, "GID index must be >= 0, got " + index);
    Require.nonNull(address, "GID address");
    Require.nonNull(addressKind, "GID address kind");
    Require.that(addressKind != GidAddressKind.ZERO, "a zero GID is unused, not an entry");
    Require.nonNull(type, "GID type");
    netdev = netdev == null ? "" : netdev;
  }

  /**
   * The preference class of this entry.
   *
   * @return its kind
   */
  public GidKind kind() {
    return GidKind.of(type, addressKind).orElseThrow();
  }
}
