package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sysfs tree with terminal control characters in interface and device names and in attribute
 * contents: doctor's text, its JSON and the scripts built from that JSON carry none of them raw.
 * A name outside letters, digits, '_', '.' and '-' is skipped with a warning that shows it
 * escaped; contents are shown escaped (as every message escapes them: ESC is <code>&#92;u001b</code>).
 */
class DoctorControlCharsCliTest {
  @TempDir Path dir;

  private static final String ESC = "\u001b";
  private static final String CSI = "\u009b";

  private void write(String file, String text) throws IOException {
    SysfsFiles.write(dir.resolve("sys"), file, text);
  }

  private void tree() throws IOException {
    String port = "class/infiniband/mlx5_0/ports/1/";
    write(port + "state", "4: ACTIVE");
    write(port + "phys_state", "5: Link" + ESC + "[31mUp");
    write(port + "rate", "200 Gb/sec (4X HDR)");
    write(port + "link_layer", "Ethernet");
    write(port + "gids/3", "0000:0000:0000:0000:0000:ffff:0a00:0032");
    write(port + "gid_attrs/types/3", "RoCE v2");
    write(port + "gid_attrs/ndevs/3", "net1" + ESC + "]0;owned" + "\u0007");
    write("class/infiniband/mlx5_" + ESC + "[2J/ports/1/state", "4: ACTIVE");
    write("class/net/eth0/type", "1");
    write("class/net/eth0/operstate", "up");
    write("class/net/eth0/address", "52:54:00" + CSI + "31m:12:34:56");
    write("class/net/ev" + ESC + "[31mil/type", "1");
    write("class/net/ev" + ESC + "[31mil/operstate", "up");
  }

  /** No C0 control but the newline, no DEL, no C1 control. */
  private static void printable(String what, String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      assertThat(c != '\n' && (c < 0x20 || (c >= 0x7f && c <= 0x9f))).as(what + " at " + i
          + ": U+" + Integer.toHexString(c)).isFalse();
    }
  }

  @Test
  void textAndJsonCarryNoControlCharacterAndSkipTheBadNames() throws IOException {
    tree();
    String root = dir.resolve("sys").toString();
    CliRun text = CliRun.of("doctor", "--sysfs-root", root);
    CliRun json = CliRun.of("doctor", "--sysfs-root", root, "--json");
    assertThat(text.code()).as(text.err()).isZero();
    assertThat(json.code()).as(json.err()).isZero();
    printable("text", text.out());
    printable("json", json.out());
    assertThat(text.out())
        .contains("class/net/ev\\u001b[31mil: interface name is not 1 to 15 letters, digits, '_',"
            + " '.' or '-'; skipped")
        .contains("class/infiniband/mlx5_\\u001b[2J: RDMA device name is not 1 to 63 letters,"
            + " digits, '_', '.' or '-'; skipped")
        .contains("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3: interface name"
            + " 'net1\\u001b]0;owned\\u0007' is not 1 to 15 letters")
        .contains("phys state Link\\u001b[31mUp, expected LinkUp")
        .contains("export NCCL_IB_GID_INDEX=3\n");
    assertThat(json.out()).contains("52:54:00\\\\u009b31m:12:34:56");
    // The report is one deploy reads: what it writes into a script is plain too.
    Path report = dir.resolve("doctor.json");
    Files.writeString(report, json.out());
    CliRun slurm = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--fabric", report.toString(), "--", "train.py");
    assertThat(slurm.code()).as(slurm.err()).isZero();
    printable("sbatch", slurm.out());
  }

  @Test
  void aControlCharacterInTheSysfsRootIsEscapedInTheRefusal() {
    CliRun r = CliRun.of("doctor", "--sysfs-root", dir.resolve("no" + ESC + "[31msys").toString());
    r.refusedInOneLine(2, "no\\u001b[31msys: no such directory");
    printable("stderr", r.err());
  }
}
