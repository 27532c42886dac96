package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileFilesTest {
  private Profile fitted() {
    List<MeasuredPoint> pts = new ArrayList<>();
    pts.addAll(Fixtures.read("all_reduce_perf_8gpu_a100.log", 8).points());
    pts.addAll(Fixtures.read("runai_rdma_allreduce_table.md", 8).points());
    return new ProfileFitter("4x8:a100-80gb:ib-hdr200").fit(pts).profile();
  }

  @Test
  void yamlAndJsonRoundTrip(@TempDir Path dir) {
    Profile p = fitted();
    for (String name : List.of("p.yaml", "p.json")) {
      Path f = dir.resolve(name);
      ProfileFiles.write(f, p);
      assertThat(ProfileFiles.read(f)).isEqualTo(p);
    }
  }

  @Test
  void writingTwiceGivesTheSameBytes(@TempDir Path dir) throws IOException {
    ProfileFiles.write(dir.resolve("a.yaml"), fitted());
    ProfileFiles.write(dir.resolve("b.yaml"), fitted());
    assertThat(Files.readString(dir.resolve("a.yaml")))
        .isEqualTo(Files.readString(dir.resolve("b.yaml")))
        .startsWith("version: 1\ncluster: \"4x8:a100-80gb:ib-hdr200\"\n");
  }

  @Test
  void otherVersionsAreRefused(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("v2.yaml");
    Files.writeString(f, "version: 2\ncluster: x\nentries: []\n");
    assertThatThrownBy(() -> ProfileFiles.read(f)).isInstanceOf(InputException.class)
        .hasMessageContaining("version 2");
  }
}
