package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** doctor on a copy of the roce-bond tree with an out-of-range rate or port directory name. */
class DoctorBoundsCliTest {
  @TempDir Path dir;

  private static final String PORT = "class/infiniband/mlx5_bond_0/ports/1";

  private Path copy(String name) throws Exception {
    Path from = DoctorGoldenTest.fixturePath("roce-bond");
    Path sys = dir.resolve(name);
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Path to = sys.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(to);
        } else {
          Files.copy(p, to);
        }
      }
    }
    return sys;
  }

  private static JsonNode json(Path sys) throws IOException {
    CliRun r = CliRun.of("doctor", "--sysfs-root", sys.toString(), "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    assertThat(r.err()).isEmpty();
    return new ObjectMapper().readTree(r.out());
  }

  @Test
  void rateTooLargeIsUnknownWithAWarning() throws Exception {
    Path sys = copy("sys");
    // 99999999999999999999 Gb/s read as 1e20 and printed as (long) 1e20 = Long.MAX_VALUE.
    SysfsFiles.write(sys, PORT + "/rate", "99999999999999999999 Gb/sec (4X HDR)");

    JsonNode root = json(sys);

    assertThat(root.toString()).doesNotContain("9223372036854775807");
    assertThat(root.findValues("rateGbps")).allSatisfy(v -> assertThat(v.isNull()).isTrue());
    assertThat(root.get("warnings").get(0).asText()).isEqualTo("mlx5_bond_0:1: " + PORT
        + "/rate: rate '99999999999999999999 Gb/sec (4X HDR)' is not above 0 and at most 10000"
        + " Gb/sec (12X XDR is 2400); rate unknown");
  }

  @Test
  void portDirectoryThatIsNoPortNumberIsNamedNotCalledNoDevice() throws Exception {
    for (String name : new String[] {"-1", "99999999999999999999"}) {
      Path sys = copy("sys" + name);
      Files.move(sys.resolve(PORT), sys.resolve("class/infiniband/mlx5_bond_0/ports/" + name));

      JsonNode warnings = json(sys).get("warnings");

      assertThat(warnings.get(0).asText()).isEqualTo("mlx5_bond_0: class/infiniband/mlx5_bond_0"
          + "/ports/" + name + ": not a port number (1 to 99999999); port skipped");
      assertThat(warnings.get(1).asText()).startsWith("no readable port on RDMA device"
          + " mlx5_bond_0 (see its warnings): NCCL will fall back to TCP sockets");
      assertThat(warnings.toString()).doesNotContain("no RDMA device");
    }
  }
}
