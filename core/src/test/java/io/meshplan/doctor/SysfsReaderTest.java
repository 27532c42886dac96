package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SysfsReaderTest {
  @TempDir Path root;
  private Path port;

  private static void write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text + "\n");
  }

  @BeforeEach
  void onePort() throws IOException {
    port = root.resolve("class/infiniband/mlx5_0/ports/1");
    write(port.resolve("state"), "4: ACTIVE");
    write(port.resolve("phys_state"), "5: LinkUp");
    write(port.resolve("rate"), "2.5 Gb/sec (1X SDR)");
    write(port.resolve("link_layer"), "Ethernet");
  }

  private PortInfo readPort(SysfsSnapshot s) {
    return s.devices().get(0).ports().get(0);
  }

  @Test
  void parsesStateRateAndLinkLayer() {
    SysfsSnapshot s = new SysfsReader(root).read();

    PortInfo p = readPort(s);
    assertThat(p.id()).isEqualTo("mlx5_0:1");
    assertThat(p.state()).isEqualTo("ACTIVE");
    assertThat(p.physState()).isEqualTo("LinkUp");
    assertThat(p.rateGbps()).hasValue(2.5);
    assertThat(p.roce()).isTrue();
    assertThat(s.problems()).isEmpty();
    assertThat(s.interfaces()).isEmpty();
  }

  @Test
  void unreadableTypeIsReportedAndTheGidSkipped() throws IOException {
    write(port.resolve("gids/0"), "0000:0000:0000:0000:0000:ffff:0a00:0032");
    // A directory where a file should be: reading it fails with an I/O error, like EINVAL on sysfs.
    Files.createDirectories(port.resolve("gid_attrs/types/0"));
    write(port.resolve("gids/1"), "0000:0000:0000:0000:0000:ffff:0a00:0032");
    write(port.resolve("gid_attrs/types/1"), "RoCE v2");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(readPort(s).gids()).extracting(GidEntry::index).containsExactly(1);
    assertThat(s.problems()).hasSize(1);
    assertThat(s.problems().get(0).path()).isEqualTo("class/infiniband/mlx5_0/ports/1/gid_attrs/types/0");
    assertThat(s.problems().get(0).message()).startsWith("mlx5_0:1: class/infiniband/mlx5_0/ports/1/gid_attrs/types/0: unreadable (")
        .endsWith("); GID 0 skipped");
  }

  @Test
  void zeroGidsAreSkippedWithoutReadingTheirTypeAndNdevsAreOptional() throws IOException {
    write(port.resolve("gids/0"), "0000:0000:0000:0000:0000:0000:0000:0000");
    write(port.resolve("gids/2"), "FE80:0000:0000:0000:0A1B:2CFF:FE3D:4E5F");
    write(port.resolve("gid_attrs/types/2"), "IB/RoCE v1");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(s.problems()).isEmpty();
    GidEntry g = readPort(s).gids().get(0);
    assertThat(g.index()).isEqualTo(2);
    assertThat(g.addressKind()).isEqualTo(GidAddressKind.IPV6_LINK_LOCAL);
    assertThat(g.type()).isEqualTo(GidType.ROCE_V1);
    assertThat(g.netdev()).isEmpty();
  }

  @Test
  void malformedGidAndUnknownTypeAreReported() throws IOException {
    write(port.resolve("gids/0"), "fe80::1");
    write(port.resolve("gids/1"), "0000:0000:0000:0000:0000:ffff:0a00:0032");
    write(port.resolve("gid_attrs/types/1"), "RoCE v3");
    write(port.resolve("gids/README"), "not an index");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(readPort(s).gids()).isEmpty();
    assertThat(s.problems()).extracting(ReadProblem::detail).containsExactly(
        "malformed GID 'fe80::1'; GID 0 skipped",
        "unknown GID type 'RoCE v3' (expected 'IB/RoCE v1' or 'RoCE v2'); GID 1 skipped");
  }

  @Test
  void missingPortFilesAreReportedAndBadRateIsKeptUnknown() throws IOException {
    Files.delete(port.resolve("state"));
    write(port.resolve("rate"), "fast");

    SysfsSnapshot s = new SysfsReader(root).read();

    PortInfo p = readPort(s);
    assertThat(p.state()).isEqualTo(PortInfo.UNKNOWN);
    assertThat(p.active()).isFalse();
    assertThat(p.rateGbps()).isEmpty();
    assertThat(s.problems()).extracting(ReadProblem::path).containsExactly(
        "class/infiniband/mlx5_0/ports/1/state", "class/infiniband/mlx5_0/ports/1/rate");
  }

  @Test
  void interfacesMapToRdmaDevicesAndFilesInClassNetAreIgnored() throws IOException {
    Path ib0 = root.resolve("class/net/ib0");
    write(ib0.resolve("operstate"), "up");
    write(ib0.resolve("type"), "32");
    write(ib0.resolve("mtu"), "4092");
    write(ib0.resolve("address"), "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:e6:a0");
    write(ib0.resolve("dev_port"), "0");
    write(ib0.resolve("device/infiniband/mlx5_0/node_type"), "1: CA");
    write(root.resolve("class/net/bonding_masters"), "bond0");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(s.interfaces()).containsExactly(new NetInterface("ib0", "up", 32, 4092,
        "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:e6:a0", List.of("mlx5_0"), 0));
  }

  @Test
  void devicesAndPortsAreInNaturalOrder() throws IOException {
    for (String d : List.of("mlx5_10", "mlx5_2")) {
      for (String p : List.of("10", "2")) {
        write(root.resolve("class/infiniband/" + d + "/ports/" + p + "/state"), "4: ACTIVE");
      }
    }

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(s.devices()).extracting(DeviceInfo::name).containsExactly("mlx5_0", "mlx5_2", "mlx5_10");
    assertThat(s.devices().get(2).ports()).extracting(PortInfo::port).containsExactly(2, 10);
  }

  @Test
  void rateOutOfRangeIsReportedAndKeptUnknownLikeAnUnparsableOne() throws IOException {
    // 99999999999999999999 Gb/s parsed to 1e20 and printed as Long.MAX_VALUE with no warning;
    // the fastest port is 12X XDR, 12 x 200 = 2400 Gb/s, and the bound is 10000.
    for (String rate : List.of("99999999999999999999 Gb/sec (4X HDR)", "10000.5 Gb/sec",
        "0 Gb/sec (4X HDR)")) {
      write(port.resolve("rate"), rate);

      SysfsSnapshot s = new SysfsReader(root).read();

      assertThat(readPort(s).rateGbps()).as(rate).isEmpty();
      assertThat(s.problems()).extracting(ReadProblem::message).containsExactly(
          "mlx5_0:1: class/infiniband/mlx5_0/ports/1/rate: rate '" + rate + "' is not above 0"
              + " and at most 10000 Gb/sec (12X XDR is 2400); rate unknown");
    }
    write(port.resolve("rate"), "10000 Gb/sec");
    assertThat(readPort(new SysfsReader(root).read()).rateGbps()).hasValue(10000.0);
  }

  @Test
  void portDirectoriesThatAreNotPortNumbersAreReportedByName() throws IOException {
    // "-1" is no port number; 99999999999999999999 has 20 digits, more than the 8 an int holds.
    for (String name : List.of("-1", "99999999999999999999")) {
      write(root.resolve("class/infiniband/mlx5_1/ports/" + name + "/state"), "4: ACTIVE");
    }
    write(port.resolve("gids/99999999999999999999"), "fe80::1");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(s.devices()).extracting(DeviceInfo::name).containsExactly("mlx5_0", "mlx5_1");
    assertThat(s.devices().get(1).ports()).isEmpty();
    assertThat(s.problems()).extracting(ReadProblem::message).containsExactlyInAnyOrder(
        "mlx5_0:1: class/infiniband/mlx5_0/ports/1/gids/99999999999999999999: not a GID index"
            + " (0 to 99999999); skipped",
        "mlx5_1: class/infiniband/mlx5_1/ports/-1: not a port number (1 to 99999999); port"
            + " skipped",
        "mlx5_1: class/infiniband/mlx5_1/ports/99999999999999999999: not a port number (1 to"
            + " 99999999); port skipped");
  }

  @Test
  void badRootIsInputError() throws IOException {
    Path file = Files.writeString(root.resolve("file"), "x");

    assertThatThrownBy(() -> new SysfsReader(root.resolve("nope")))
        .isInstanceOf(InputException.class).hasMessageContaining("no such directory");
    assertThatThrownBy(() -> new SysfsReader(file))
        .isInstanceOf(InputException.class).hasMessageContaining("not a directory");
  }

  /**
   * An MTU, type or dev_port past an int is a problem of that attribute, kept unknown, not an end
   * of the whole report; before, 2147483648 in one interface's mtu ended doctor with 'For input
   * string'. The JSON writes an unknown type and MTU as null, not -1; a port numbered 0 (ports
   * count from 1) is skipped by name.
   */
  @Test
  void attributesPastAnIntAreProblemsOfTheirOwnAndUnknownIsNull() throws IOException {
    Path eth = root.resolve("class/net/eth0");
    write(eth.resolve("operstate"), "up");
    write(eth.resolve("type"), "4294967297");
    write(eth.resolve("mtu"), "2147483648");
    write(eth.resolve("address"), "52:54:00:ab:cd:ef");
    write(eth.resolve("dev_port"), "99999999999999999999");
    write(root.resolve("class/infiniband/mlx5_0/ports/0/state"), "4: ACTIVE");

    SysfsSnapshot s = new SysfsReader(root).read();

    assertThat(s.interfaces()).containsExactly(new NetInterface("eth0", "up", -1, -1,
        "52:54:00:ab:cd:ef", List.of(), -1));
    assertThat(s.problems()).extracting(ReadProblem::message).contains(
        "eth0: class/net/eth0/type: '4294967297' is past 2147483647; unknown",
        "eth0: class/net/eth0/mtu: '2147483648' is past 2147483647; unknown",
        "eth0: class/net/eth0/dev_port: '99999999999999999999' is past 2147483647; unknown",
        "mlx5_0: class/infiniband/mlx5_0/ports/0: not a port number (1 to 99999999); port"
            + " skipped");
    com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(DoctorJson.write(new EnvAdvisor().advise(s)));
    assertThat(json.at("/interfaces/0/mtu").isNull()).isTrue();
    assertThat(json.at("/interfaces/0/type").isNull()).isTrue();
  }
}
