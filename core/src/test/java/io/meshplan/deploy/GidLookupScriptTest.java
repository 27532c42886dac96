package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.doctor.DeviceInfo;
import io.meshplan.doctor.GidChoice;
import io.meshplan.doctor.GidSelector;
import io.meshplan.doctor.PortInfo;
import io.meshplan.doctor.SysfsReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-node script's GID lookup (bash, at run time) and the doctor's {@link GidSelector} (Java)
 * pick the same index: on the doctor's sysfs fixtures and on seeded random GID tables with every
 * kind of entry (IPv4-mapped, IPv6, link-local, zero, malformed; RoCE v2, v1, unknown or missing
 * type; sparse and multi-digit indices).
 */
class GidLookupScriptTest {
  @TempDir Path tmp;

  /** Runs the function for every port under a sysfs root; "dev:port" to index, "none" if empty. */
  private static Map<String, String> shell(Path root) {
    String script = "set -euo pipefail\n" + GidLookupScript.FUNCTION
        + "for p in \"$MESHPLAN_SYSFS_ROOT\"/class/infiniband/*/ports/*; do\n"
        + "  d=\"${p%/ports/*}\"; d=\"${d##*/}\"; n=\"${p##*/}\"\n"
        + "  if i=\"$(meshplan_gid_index \"$d\" \"$n\")\"; then echo \"$d:$n=$i\";"
        + " else echo \"$d:$n=none\"; fi\n"
        + "done\n";
    Path file = Shell.temp(script);
    try {
      Shell.Result r = Shell.bash(file, List.of(), Map.of("MESHPLAN_SYSFS_ROOT", root.toString()),
          null);
      assertThat(r.code()).as(r.err()).isZero();
      Map<String, String> m = new TreeMap<>();
      r.out().lines().forEach(l -> m.put(l.substring(0, l.indexOf('=')),
          l.substring(l.indexOf('=') + 1)));
      return m;
    } finally {
      Shell.delete(file);
    }
  }

  private static Map<String, String> doctor(Path root) {
    Map<String, String> m = new TreeMap<>();
    for (DeviceInfo d : new SysfsReader(root).read().devices()) {
      for (PortInfo p : d.ports()) {
        m.put(p.id(), GidSelector.choose(p.gids()).map(GidChoice::index).map(String::valueOf)
            .orElse("none"));
      }
    }
    return m;
  }

  @Test
  void agreesWithTheDoctorOnItsFixtures() {
    for (String fixture : List.of("roce-bond", "roce-bond-gid9", "sparse-gids", "mixed",
        "ib-hdr")) {
      Path root = Path.of("core/src/test/resources/sysfs", fixture).toAbsolutePath();
      Map<String, String> want = doctor(root);
      assertThat(want).as(fixture).isNotEmpty();
      assertThat(shell(root)).as(fixture).isEqualTo(want);
    }
    // roce-bond-gid9: the RunAI guide's answer, index 9 (RoCE v2, IPv4-mapped).
    Path gid9 = Path.of("core/src/test/resources/sysfs/roce-bond-gid9").toAbsolutePath();
    assertThat(shell(gid9)).containsEntry("mlx5_bond_0:1", "9");
  }

  @Test
  void agreesWithTheDoctorOnRandomGidTables() throws IOException {
    Random rnd = new Random(20261126L);
    String[] types = {"RoCE v2", "IB/RoCE v1", "RoCE v2\n", "  RoCE v2 ", "RoCE v3", null};
    for (int trial = 0; trial < 40; trial++) {
      Path root = Files.createDirectories(tmp.resolve("trial-" + trial));
      Path port = root.resolve("class/infiniband/mlx5_0/ports/1");
      Files.createDirectories(port.resolve("gids"));
      Files.createDirectories(port.resolve("gid_attrs/types"));
      Files.writeString(port.resolve("state"), "4: ACTIVE\n");
      Files.writeString(port.resolve("phys_state"), "5: LinkUp\n");
      Files.writeString(port.resolve("rate"), "200 Gb/sec (4X HDR)\n");
      Files.writeString(port.resolve("link_layer"), "Ethernet\n");
      int entries = rnd.nextInt(14);
      for (int e = 0; e < entries; e++) {
        int index = rnd.nextInt(4) == 0 ? 10 + rnd.nextInt(15) : rnd.nextInt(10);
        Files.writeString(port.resolve("gids/" + index), gid(rnd) + "\n");
        String type = types[rnd.nextInt(types.length)];
        if (type != null) {
          Files.writeString(port.resolve("gid_attrs/types/" + index), type);
        }
      }
      assertThat(shell(root)).as("trial " + trial).isEqualTo(doctor(root));
    }
  }

  private static String gid(Random rnd) {
    String v4 = String.format("%04x:%04x", rnd.nextInt(0x10000), rnd.nextInt(0x10000));
    return switch (rnd.nextInt(6)) {
      case 0 -> "0000:0000:0000:0000:0000:ffff:" + v4;
      case 1 -> "0000:0000:0000:0000:0000:FFFF:" + v4.toUpperCase(java.util.Locale.ROOT);
      case 2 -> "fe80:0000:0000:0000:" + v4 + ":" + v4;
      case 3 -> "2001:0db8:0000:0000:" + v4 + ":" + v4;
      case 4 -> "0000:0000:0000:0000:0000:0000:0000:0000";
      default -> "not-a-gid";
    };
  }
}
