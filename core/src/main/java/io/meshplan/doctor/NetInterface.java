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
   * Whether the interface is up.
   *
   * @return true when {@code operstate} is {@code up}
   */
  public boolean up() {
    return "up".equals(operstate);
  }
}
