package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorCliTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return Main.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  @Test
  void missingRootIsBadInputWithOneLineAndNoStackTrace(@TempDir Path tmp) {
    Path missing = tmp.resolve("no-such-sys");

    int code = run("doctor", "--sysfs-root", missing.toString(), "--json");

    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString().lines()).hasSize(1);
    assertThat(err.toString())
        .startsWith("meshplan: error: --sysfs-root " + missing)
        .contains("no such directory")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void rootThatIsAFileIsBadInput(@TempDir Path tmp) throws IOException {
    Path file = Files.writeString(tmp.resolve("sys"), "not a directory\n");

    int code = run("doctor", "--sysfs-root", file.toString());

    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString().lines()).hasSize(1);
    assertThat(err.toString()).contains("not a directory").doesNotContain("\tat ");
  }

  @Test
  void humanOutputHasOneRowPerPortThenExportsThenWarnings() throws Exception {
    int code = run("doctor", "--sysfs-root", DoctorGoldenTest.fixturePath("port-down").toString());

    assertThat(code).isEqualTo(ExitCodes.OK);
    assertThat(err.toString()).isEmpty();
    String text = out.toString();
    assertThat(text.lines().filter(l -> l.startsWith("mlx5_"))).hasSize(2);
    assertThat(text).containsPattern("(?m)^mlx5_0 +1 +ACTIVE +LinkUp +InfiniBand +200 +- .* ib0 +yes$");
    assertThat(text).containsPattern("(?m)^mlx5_1 +1 +DOWN +Disabled +InfiniBand +10 +- .* ib1 +no$");
    assertThat(text).contains(
        "export NCCL_IB_HCA==mlx5_0:1\n"
            + "export NCCL_SOCKET_IFNAME=ib0\n"
            + "export UCX_NET_DEVICES=mlx5_0:1\n"
            + "export UCX_TLS=rc,cuda_copy,cuda_ipc\n");
    assertThat(text.indexOf("export ")).isGreaterThan(text.indexOf("mlx5_1 "));
    assertThat(text.indexOf("warnings (1):")).isGreaterThan(text.lastIndexOf("export "));
    assertThat(text).contains("  - mlx5_1:1: port is DOWN (phys state Disabled)");
  }

  @Test
  void humanOutputShowsTheRoceGidIndex() throws Exception {
    int code = run("doctor", "--sysfs-root", DoctorGoldenTest.fixturePath("roce-bond").toString());

    assertThat(code).isEqualTo(ExitCodes.OK);
    assertThat(out.toString())
        .containsPattern("(?m)^mlx5_bond_0 +1 +ACTIVE +LinkUp +Ethernet +200 +3 +RoCE v2 IPv4 +bond0 +yes$")
        .contains("export NCCL_IB_GID_INDEX=3\n")
        .contains("no warnings");
  }

  @Test
  void withoutRdmaTheTcpFallbackIsSpelledOut() throws Exception {
    int code = run("doctor", "--sysfs-root", DoctorGoldenTest.fixturePath("no-rdma").toString());

    assertThat(code).isEqualTo(ExitCodes.OK);
    assertThat(out.toString())
        .contains("no RDMA ports found")
        .contains("export NCCL_IB_DISABLE=1\n")
        .contains("NCCL will fall back to TCP sockets over eth0");
  }
}
