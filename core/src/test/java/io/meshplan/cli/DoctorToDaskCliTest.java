package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The InfiniBand node, from sysfs to the Dask script: ib0 is up but its {@code device}
 * link is missing (as in a container), eth0 sorts before it. doctor must pick ib0, the IPoIB
 * interface of the port (its address carries the port's GID), and the Dask script enables rdmacm
 * only on such an interface (dask-cuda 63a1ea97 {@code docs/source/examples/ucx.rst}: the IPoIB
 * interface "to ensure RDMACM is used"; {@code dask_cuda/cli.py}: rdmacm needs InfiniBand).
 */
class DoctorToDaskCliTest {
  @TempDir Path dir;

  private void write(String file, String text) throws IOException {
    SysfsFiles.write(dir.resolve("sys"), file, text);
  }

  private Path doctorJson() throws IOException {
    String port = "class/infiniband/mlx5_0/ports/1/";
    write(port + "state", "4: ACTIVE");
    write(port + "phys_state", "5: LinkUp");
    write(port + "rate", "400 Gb/sec (4X NDR)");
    write(port + "link_layer", "InfiniBand");
    write(port + "gids/0", "fe80:0000:0000:0000:b859:9f03:00d4:e6a0");
    write(port + "gid_attrs/types/0", "IB/RoCE v1");
    write("class/net/eth0/type", "1");
    write("class/net/eth0/operstate", "up");
    write("class/net/eth0/address", "52:54:00:12:34:56");
    write("class/net/ib0/type", "32");
    write("class/net/ib0/operstate", "up");
    write("class/net/ib0/address", "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:e6:a0");
    CliRun doctor = CliRun.of("doctor", "--sysfs-root", dir.resolve("sys").toString(), "--json");
    assertThat(doctor.code()).as(doctor.err()).isZero();
    assertThat(doctor.out()).contains("\"NCCL_SOCKET_IFNAME\" : \"ib0\"");
    Path json = dir.resolve("doctor.json");
    Files.writeString(json, doctor.out());
    return json;
  }

  @Test
  void doctorChoosesIb0AndDaskEnablesRdmacmOnIt() throws IOException {
    CliRun dask = CliRun.of("deploy", "--target", "dask", "--cluster", "2x8:h100-80gb",
        "--fabric", doctorJson().toString(), "--", "python", "train.py");
    assertThat(dask.code()).as(dask.err()).isZero();
    assertThat(dask.out()).contains("IFACE=ib0\n", "export DASK_DISTRIBUTED_UCXX__RDMACM=True\n",
        "--enable-infiniband --enable-rdmacm").doesNotContain("rdmacm is off");
  }

  @Test
  void onAnInterfaceThatIsNotIpoibDaskLeavesRdmacmOffAndSaysWhy() throws IOException {
    CliRun dask = CliRun.of("deploy", "--target", "dask", "--cluster", "2x8:h100-80gb",
        "--fabric", doctorJson().toString(), "--interface", "eth0", "--", "python", "train.py");
    assertThat(dask.code()).as(dask.err()).isZero();
    // InfiniBand stays on (UCX's rc transport); only the connection manager falls back to TCP.
    assertThat(dask.out()).contains("IFACE=eth0\n", "export DASK_DISTRIBUTED_UCXX__RDMACM=False\n",
        "export DASK_DISTRIBUTED_UCXX__INFINIBAND=True\n", "--enable-infiniband --disable-rdmacm",
        "# rdmacm is off: eth0 is not an IPoIB interface nor the RoCE netdev of the fabric's"
            + " ports, and rdmacm needs one; UCX connects over TCP.\n");
  }

  @Test
  void onRoceRdmacmGoesWithTheNetdevOfThePortsOnly() {
    // roce-bond-gid9: the selected port mlx5_bond_0:1 sits behind net1 (its GID's ndev).
    String fabric = "core/src/test/resources/doctor-golden/roce-bond-gid9.json";
    CliRun net1 = CliRun.of("deploy", "--target", "dask", "--cluster", "2x8:h100-80gb",
        "--fabric", fabric, "--", "python", "train.py");
    assertThat(net1.code()).as(net1.err()).isZero();
    assertThat(net1.out()).contains("IFACE=net1\n", "--enable-rdmacm");
    CliRun eth0 = CliRun.of("deploy", "--target", "dask", "--cluster", "2x8:h100-80gb",
        "--fabric", fabric, "--interface", "eth0", "--", "python", "train.py");
    assertThat(eth0.out()).contains("IFACE=eth0\n", "--disable-rdmacm");
  }
}
