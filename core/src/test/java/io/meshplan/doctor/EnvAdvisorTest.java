package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** The advisor on hand-made snapshots, one change per test. */
class EnvAdvisorTest {
  private static final String V4 = "0000:0000:0000:0000:0000:ffff:0a00:0032";
  private static final String V4B = "0000:0000:0000:0000:0000:ffff:0a00:0033";
  private static final String LL = "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f";

  private final EnvAdvisor advisor = new EnvAdvisor();

  private static PortInfo ib(String dev, String state, double rate) {
    return new PortInfo(dev, 1, state, state.equals("ACTIVE") ? "LinkUp" : "Disabled",
        PortInfo.INFINIBAND, OptionalDouble.of(rate), List.of());
  }

  private static PortInfo roce(String dev, double rate, GidEntry... gids) {
    return new PortInfo(dev, 1, "ACTIVE", "LinkUp", PortInfo.ETHERNET, OptionalDouble.of(rate),
        List.of(gids));
  }

  private static GidEntry gid(int i, String addr, GidType type, String netdev) {
    return new GidEntry(i, addr, GidAddressKind.of(addr), type, netdev);
  }

  private static NetInterface iface(String name, String oper, int type, String... rdma) {
    return new NetInterface(name, oper, type, 1500, "", List.of(rdma), -1);
  }

  private static SysfsSnapshot snap(List<PortInfo> ports, List<NetInterface> ifaces) {
    return new SysfsSnapshot(
        ports.stream().map(p -> new DeviceInfo(p.device(), List.of(p))).toList(), ifaces, List.of());
  }

  @Test
  void allPortsDownFallsBackToTcpWithAWarning() {
    DoctorReport r = advisor.advise(snap(
        List.of(ib("mlx5_0", "DOWN", 200), ib("mlx5_1", "INIT", 200)),
        List.of(iface("lo", "unknown", 772), iface("eth0", "up", 1))));

    assertThat(r.env()).containsEntry("NCCL_IB_DISABLE", "1")
        .containsEntry("UCX_TLS", EnvAdvisor.UCX_TLS_TCP)
        .containsEntry("NCCL_SOCKET_IFNAME", "eth0")
        .doesNotContainKey("NCCL_IB_HCA");
    assertThat(r.warnings()).anyMatch(w -> w.startsWith("no ACTIVE RDMA port (mlx5_0:1, mlx5_1:1")
        && w.contains("fall back to TCP sockets over eth0"));
    assertThat(r.warnings()).anyMatch(w -> w.startsWith("mlx5_1:1: port is INIT"));
  }

  @Test
  void aDeviceWhosePortsWereAllSkippedIsNotCalledAbsent() {
    // mlx5_0 is there, but its only port directory was skipped as a read problem.
    DoctorReport r = advisor.advise(new SysfsSnapshot(List.of(new DeviceInfo("mlx5_0", List.of())),
        List.of(iface("eth0", "up", 1)), List.of(new ReadProblem("mlx5_0",
            "class/infiniband/mlx5_0/ports/-1", "not a port number (1 to 99999999); port skipped"))));

    assertThat(r.warnings()).containsExactly(
        "mlx5_0: class/infiniband/mlx5_0/ports/-1: not a port number (1 to 99999999); port skipped",
        "no readable port on RDMA device mlx5_0 (see its warnings): NCCL will fall back to TCP"
            + " sockets over eth0 (NCCL_IB_DISABLE=1), typically 5-10x slower between nodes; check"
            + " the RDMA driver and that the container was given the RDMA device");
  }

  @Test
  void noUsableInterfaceAtAllIsSaid() {
    DoctorReport r = advisor.advise(snap(List.of(),
        List.of(iface("lo", "unknown", 772), iface("docker0", "up", 1), iface("eth0", "down", 1))));

    assertThat(r.env()).containsEntry("NCCL_IB_DISABLE", "1").doesNotContainKey("NCCL_SOCKET_IFNAME");
    assertThat(r.warnings()).anyMatch(w -> w.contains("NCCL_SOCKET_IFNAME not set"));
  }

  @Test
  void roceGidIndexComesFromTheChosenEntryAndSocketFromItsNetdev() {
    DoctorReport r = advisor.advise(snap(
        List.of(roce("mlx5_bond_0", 200, gid(0, LL, GidType.ROCE_V1, "bond0"),
            gid(7, V4, GidType.ROCE_V2, "bond0"))),
        List.of(iface("bond0", "up", 1), iface("eth0", "up", 1))));

    assertThat(r.env()).containsEntry("NCCL_IB_GID_INDEX", "7")
        .containsEntry("NCCL_IB_HCA", "=mlx5_bond_0:1")
        .containsEntry("NCCL_SOCKET_IFNAME", "bond0");
    assertThat(r.warnings()).isEmpty();
  }

  @Test
  void disagreeingRocePortsWarnAndTheFirstPortWins() {
    DoctorReport r = advisor.advise(snap(
        List.of(roce("mlx5_0", 100, gid(3, V4, GidType.ROCE_V2, "eth2")),
            roce("mlx5_1", 100, gid(5, V4B, GidType.ROCE_V2, "eth3"))),
        List.of(iface("eth2", "up", 1), iface("eth3", "up", 1))));

    assertThat(r.env()).containsEntry("NCCL_IB_GID_INDEX", "3")
        .containsEntry("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1");
    assertThat(r.warnings()).containsExactly("RoCE ports disagree on the GID index (mlx5_0:1=3,"
        + " mlx5_1:1=5); NCCL_IB_GID_INDEX is global, set to 3 from mlx5_0:1;"
        + " fix the GID tables or run one process per port");
  }

  @Test
  void atEqualRateInfinibandWinsOverEthernet() {
    DoctorReport r = advisor.advise(snap(
        List.of(roce("mlx5_0", 200, gid(3, V4, GidType.ROCE_V2, "eth2")), ib("mlx5_1", "ACTIVE", 200)),
        List.of(iface("eth2", "up", 1), iface("ib0", "up", 32, "mlx5_1"))));

    assertThat(r.env()).containsEntry("NCCL_IB_HCA", "=mlx5_1:1")
        .containsEntry("NCCL_SOCKET_IFNAME", "ib0")
        .doesNotContainKey("NCCL_IB_GID_INDEX");
    assertThat(r.warnings()).contains(
        "mlx5_0:1: Ethernet port at 200 Gb/s left out of NCCL_IB_HCA, which keeps the InfiniBand ports",
        "mixed link layers: Ethernet on mlx5_0:1; InfiniBand on mlx5_1:1");
  }

  @Test
  void roceWithoutAnyGidIsWarnedAndHasNoIndex() {
    DoctorReport r = advisor.advise(snap(List.of(roce("mlx5_0", 100)),
        List.of(iface("ens1f0", "up", 1, "mlx5_0"))));

    assertThat(r.env()).doesNotContainKey("NCCL_IB_GID_INDEX")
        .containsEntry("NCCL_SOCKET_IFNAME", "ens1f0");
    assertThat(r.warnings()).containsExactly("mlx5_0:1: RoCE port has no usable GID (no non-zero GID"
        + " with a readable type); no GID index can be chosen for it");
    assertThat(r.devices().get(0).ports().get(0).gidNote()).isEqualTo("no usable GID");
  }

  @Test
  void downNetdevIsUsedOnlyWhenNoUsedPortHasAnUpOne() {
    DoctorReport oneUp = advisor.advise(snap(
        List.of(ib("mlx5_0", "ACTIVE", 200), ib("mlx5_1", "ACTIVE", 200)),
        List.of(iface("ib0", "down", 32, "mlx5_0"), iface("ib1", "up", 32, "mlx5_1"))));
    DoctorReport noneUp = advisor.advise(snap(List.of(ib("mlx5_0", "ACTIVE", 200)),
        List.of(iface("ib0", "down", 32, "mlx5_0"), iface("eth0", "up", 1))));

    assertThat(oneUp.env()).containsEntry("NCCL_SOCKET_IFNAME", "ib1");
    assertThat(oneUp.warnings()).isEmpty();
    assertThat(noneUp.env()).containsEntry("NCCL_SOCKET_IFNAME", "ib0");
    assertThat(noneUp.warnings()).containsExactly(
        "mlx5_0:1: its netdev ib0 is not up (operstate 'down'); NCCL_SOCKET_IFNAME uses it anyway");
  }

  @Test
  void withoutAnyNetdevBehindThePortsTheSocketFallsBack() {
    DoctorReport r = advisor.advise(snap(List.of(ib("mlx5_0", "ACTIVE", 400)),
        List.of(iface("docker0", "up", 1), iface("eno1", "up", 1))));

    assertThat(r.env()).containsEntry("NCCL_SOCKET_IFNAME", "eno1")
        .containsEntry("NCCL_IB_HCA", "=mlx5_0:1");
    assertThat(r.warnings()).containsExactly(
        "mlx5_0:1: no netdev found behind the RDMA ports; NCCL_SOCKET_IFNAME falls back to eno1");
  }

  @Test
  void activeButNotLinkUpIsWarned() {
    PortInfo p = new PortInfo("mlx5_0", 1, "ACTIVE", "Polling", PortInfo.INFINIBAND,
        OptionalDouble.of(200), List.of());
    DoctorReport r = advisor.advise(snap(List.of(p), List.of(iface("ib0", "up", 32, "mlx5_0"))));

    assertThat(r.warnings()).containsExactly("mlx5_0:1: phys state Polling, expected LinkUp");
  }

  @Test
  void readProblemsBecomeWarningsFirst() {
    SysfsSnapshot s = new SysfsSnapshot(List.of(), List.of(iface("eth0", "up", 1)),
        List.of(new ReadProblem("mlx5_0:1", "class/infiniband/mlx5_0/ports/1/rate", "unreadable (file missing); ignored")));

    assertThat(advisor.advise(s).warnings().get(0))
        .isEqualTo("mlx5_0:1: class/infiniband/mlx5_0/ports/1/rate: unreadable (file missing); ignored");
  }
}
