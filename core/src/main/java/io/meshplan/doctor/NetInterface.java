package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.List;

/**
 * A network interface under {@code class/net/}.
 *
 * @param name the interface name, for example {@code ib0}, {@code bond0} or {@code eth0}
 * @param operstate the content of {@code operstate} ({@code up}, {@code down}, {@code unknown}), or
 *     empty when unreadable
 * @param type the ARP hardware type from {@code type}: 1 Ethernet, 32 InfiniBand (IPoIB), 772
 *     loopback; -1 when unreadable
 * @param mtu the MTU in bytes, or -1 when unreadable
 * @param address the hardware address, or empty when unreadable
 * @param rdmaDevices the RDMA devices under {@code device/infiniband/}, sorted; empty for virtual
 *     interfaces such as bonds
 * @param devPort the 0-based port of the device from {@code dev_port}, or -1 when absent
 */
public record NetInterface(
    String name,
    String operstate,
    int type,
    int mtu,
    String address,
    List<String> rdmaDevices,
    int devPort) {
  /** The {@code type} of an Ethernet interface. */
  public static final int TYPE_ETHERNET = 1;
  /** The {@code type} of an IPoIB interface. */
  public static final int TYPE_INFINIBAND = 32;
  /** The {@code type} of a loopback interface. */
  public static final int TYPE_LOOPBACK = 772;

  /** Validates and copies. */
  public NetInterface {
    Require.nonNull(name, "interface name");
    operstate = operstate == null ? "" : operstate;
    address = address == null ? "" : address;
    rdmaDevices = List.copyOf(rdmaDevices);
  }

  /**
   * Whether this is an IPoIB interface whose hardware address carries a GID: the kernel writes
   * the port's GID 0 into bytes 4 to 19 of an IPoIB interface's 20-byte address, after the queue
   * pair number ({@code drivers/infiniband/ulp/ipoib/ipoib_main.c}, {@code ipoib_parent_init}).
   *
   * @param gid a GID as sysfs writes it, eight groups of four hex digits
   * @return true when the address ends with that GID
   */
  public boolean carriesGid(String gid) {
    String hex = address.replace(":", "").toLowerCase(java.util.Locale.ROOT);
    String g = gid.replace(":", "").toLowerCase(java.util.Locale.ROOT);
    return type == TYPE_INFINIBAND && hex.length() == 40 && g.length() == 32 && hex.endsWith(g);
  }

  /**
   * Whether the interface is up.
   *
   * @return true when {@code operstate} is {@code up}
   */
  public boolean up() {
    return "up".equals(operstate);
  }
}
