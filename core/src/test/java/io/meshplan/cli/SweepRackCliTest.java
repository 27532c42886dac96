package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sweep over rack-scale GPUs: its grid names hosts (GB200's compute trays of 4), which are
 * grouped into NVLink domains of 72 as {@code --cluster HOSTSx4:gb200} groups them; a point is
 * the plan of that cluster, and hosts that fill no whole rack are rejected with the reason.
 */
class SweepRackCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void gridHostsFormRacksAsTheClusterFlagDoes() throws Exception {
    Path grid = dir.resolve("racks.yaml");
    Files.writeString(grid, "models: [llama3.1-8b]\nseq: [4096]\ngpus: [gb200]\n"
        + "clusters: [18x4, 20x4]\nglobalBatch: [144]\n");
    CliRun s = CliRun.of("sweep", "--grid", grid.toString(), "--jsonl",
        dir.resolve("racks.jsonl").toString());
    assertThat(s.code()).as(s.err()).isZero();
    List<JsonNode> points = Files.readAllLines(dir.resolve("racks.jsonl")).stream()
        .map(l -> {
          try {
            return JSON.readTree(l);
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        }).toList();
    assertThat(points).hasSize(2);
    JsonNode rack = points.get(0);
    assertThat(rack.get("status").asText()).isEqualTo("ok");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--seq", "4096", "--cluster",
        "18x4:gb200", "--global-batch", "144", "--json");
    assertThat(p.code()).as(p.err()).isZero();
    // The sweep prints six decimals.
    assertThat(rack.get("iterationSeconds").asDouble()).isCloseTo(
        JSON.readTree(p.out()).get("iterationSeconds").asDouble(),
        org.assertj.core.api.Assertions.within(5e-7));
    // 80 GPUs fill no whole rack of 72: the point says so.
    assertThat(points.get(1).get("status").asText()).isEqualTo("rejected");
    assertThat(points.get(1).get("message").asText()).isEqualTo("cluster '20x4:gb200': 80 GPUs"
        + " do not fill whole NVLink domains of 72 (gb200); give a multiple of 18 hosts");
  }
}
