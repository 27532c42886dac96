package io.meshplan.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Small sysfs trees written into a directory, for what a pod with its own network and RDMA
 * namespaces sees: an SR-IOV virtual function under another device name than the node's, with its
 * own GID table, and the interfaces the pod network gives it.
 */
final class FakeSysfs {
  private final Path root;

  FakeSysfs(Path root) {
    this.root = root;
  }

  Path root() {
    return root;
  }

  FakeSysfs write(String file, String text) {
    try {
      Path p = root.resolve(file);
      Files.createDirectories(p.getParent());
      Files.writeString(p, text + "\n");
      return this;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** An interface: type 1 Ethernet, 32 IPoIB, 772 loopback. */
  FakeSysfs netInterface(String name, int type, String address) {
    String d = "class/net/" + name + "/";
    return write(d + "operstate", type == 772 ? "unknown" : "up").write(d + "type", "" + type)
        .write(d + "mtu", "1500").write(d + "address", address);
  }

  /** An ACTIVE port of a device at a rate, with its link layer. */
  FakeSysfs port(String device, int port, String linkLayer, String rate) {
    String d = "class/infiniband/" + device + "/ports/" + port + "/";
    return write(d + "state", "4: ACTIVE").write(d + "phys_state", "5: LinkUp")
        .write(d + "rate", rate).write(d + "link_layer", linkLayer);
  }

  /** A GID table entry with its type and netdev. */
  FakeSysfs gid(String device, int port, int index, String gid, String type, String netdev) {
    String d = "class/infiniband/" + device + "/ports/" + port + "/";
    write(d + "gids/" + index, gid).write(d + "gid_attrs/types/" + index, type);
    return netdev == null ? this : write(d + "gid_attrs/ndevs/" + index, netdev);
  }

  /**
   * A RoCE SR-IOV pod: virtual function mlx5_3, whose RoCE v2 IPv4 GID is index 3 on net1 (the
   * node's bond has it at 9), beside eth0 and the given Multus interface.
   */
  static FakeSysfs rocePod(Path dir, String multus) {
    String ll = "fe80:0000:0000:0000:5c6d:7eff:fe8f:9012";
    String v4 = "0000:0000:0000:0000:0000:ffff:0a01:0203";
    return new FakeSysfs(dir).port("mlx5_3", 1, "Ethernet", "200 Gb/sec (4X HDR)")
        .gid("mlx5_3", 1, 0, ll, "IB/RoCE v1", multus).gid("mlx5_3", 1, 1, ll, "RoCE v2", multus)
        .gid("mlx5_3", 1, 2, v4, "IB/RoCE v1", multus).gid("mlx5_3", 1, 3, v4, "RoCE v2", multus)
        .netInterface("lo", 772, "00:00:00:00:00:00").netInterface("eth0", 1, "0a:58:0a:f4:00:05")
        .netInterface(multus, 1, "5e:6d:7e:8f:90:12");
  }

  /** An InfiniBand SR-IOV pod: virtual function mlx5_4, its IPoIB interface the Multus one. */
  static FakeSysfs infinibandPod(Path dir, String multus) {
    String gid = "fe80:0000:0000:0000:b859:9f03:00d4:e6b4";
    return new FakeSysfs(dir).port("mlx5_4", 1, "InfiniBand", "200 Gb/sec (4X HDR)")
        .gid("mlx5_4", 1, 0, gid, "IB/RoCE v1", null)
        .netInterface("lo", 772, "00:00:00:00:00:00").netInterface("eth0", 1, "0a:58:0a:f4:00:05")
        .netInterface(multus, 32, "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:e6:b4");
  }

  /** A pod without RDMA devices. */
  static FakeSysfs plainPod(Path dir, String multus) {
    return new FakeSysfs(dir).netInterface("lo", 772, "00:00:00:00:00:00")
        .netInterface("eth0", 1, "0a:58:0a:f4:00:05")
        .netInterface(multus, 1, "5e:6d:7e:8f:90:12");
  }
}
