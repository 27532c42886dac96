package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On InfiniBand the doctor's socket interface is the IPoIB interface of the chosen port, found by
 * its {@code device/infiniband} link or, where a container or a copied tree lacks that link, by
 * the port's GID in bytes 4 to 19 of the interface's address; failing both, an up IPoIB
 * interface before any Ethernet one. eth0 sorts before ib0, so a first-up fallback took eth0.
 */
class IpoibInterfaceTest {
  private static final String GID = "fe80:0000:0000:0000:b859:9f03:00d4:e6a0";
  /** QPN 00:00:10:49, then the GID above. */
  private static final String ADDRESS =
      "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:e6:a0";

  @TempDir Path root;

  private void write(String file, String text) throws IOException {
    Path p = root.resolve(file);
    Files.createDirectories(p.getParent());
    Files.writeString(p, text + "\n");
  }

  /** One InfiniBand port, eth0 up, ib0 (no device link) with the given address and state. */
  private DoctorReport tree(String ib0Address, String ib0State) throws IOException {
    String port = "class/infiniband/mlx5_0/ports/1/";
    write(port + "state", "4: ACTIVE");
    write(port + "phys_state", "5: LinkUp");
    write(port + "rate", "200 Gb/sec (4X HDR)");
    write(port + "link_layer", "InfiniBand");
    write(port + "gids/0", GID);
    write(port + "gid_attrs/types/0", "IB/RoCE v1");
    for (String[] i : new String[][] {{"eth0", "1", "52:54:00:12:34:56", "up"},
        {"ib0", "32", ib0Address, ib0State}}) {
      write("class/net/" + i[0] + "/type", i[1]);
      write("class/net/" + i[0] + "/address", i[2]);
      write("class/net/" + i[0] + "/operstate", i[3]);
      write("class/net/" + i[0] + "/mtu", "1500");
    }
    return new EnvAdvisor().advise(new SysfsReader(root).read());
  }

  @Test
  void theIpoibInterfaceCarryingThePortsGidIsTheSocketInterface() throws IOException {
    DoctorReport r = tree(ADDRESS, "up");
    assertThat(r.env()).containsEntry("NCCL_SOCKET_IFNAME", "ib0");
    assertThat(r.devices().get(0).ports().get(0).netdev()).isEqualTo("ib0");
    assertThat(r.warnings()).isEmpty();
  }

  @Test
  void withoutATieAnUpIpoibInterfaceWinsOverEthernetAndIsWarned() throws IOException {
    DoctorReport r = tree("00:00:10:49:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01", "up");
    assertThat(r.env()).containsEntry("NCCL_SOCKET_IFNAME", "ib0");
    assertThat(r.warnings()).containsExactly("mlx5_0:1: no netdev is tied to the RDMA ports (no"
        + " device/infiniband link, no port GID in an IPoIB address); NCCL_SOCKET_IFNAME uses the"
        + " up IPoIB interface ib0");
  }

  @Test
  void aDownIpoibInterfaceTiedToThePortIsUsedWithAWarningAsBefore() throws IOException {
    DoctorReport r = tree(ADDRESS, "down");
    assertThat(r.env()).containsEntry("NCCL_SOCKET_IFNAME", "ib0");
    assertThat(r.warnings()).containsExactly("mlx5_0:1: its netdev ib0 is not up (operstate"
        + " 'down'); NCCL_SOCKET_IFNAME uses it anyway");
  }

  @Test
  void onlyAnIpoibAddressCarriesAGid() {
    NetInterface eth = new NetInterface("eth0", "up", NetInterface.TYPE_ETHERNET, 1500, ADDRESS,
        java.util.List.of(), -1);
    NetInterface ib = new NetInterface("ib0", "up", NetInterface.TYPE_INFINIBAND, 4092,
        ADDRESS.toUpperCase(java.util.Locale.ROOT), java.util.List.of(), -1);
    assertThat(eth.carriesGid(GID)).isFalse();
    assertThat(ib.carriesGid(GID)).isTrue();
    assertThat(ib.carriesGid("fe80:0000:0000:0000:b859:9f03:00d4:e6a1")).isFalse();
  }
}
