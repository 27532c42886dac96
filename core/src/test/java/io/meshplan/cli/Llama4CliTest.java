package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Llama 4 as a user meets it: Maverick plans on 16 nodes of H100s, the plan file keeps its chunked
 * attention and dense blocks, and the frameworks meshplan writes for say what they lack.
 */
class Llama4CliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void maverickPlansAndItsPlanFileKeepsItsLayers() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama4-maverick", "--cluster", "16x8:h100-80gb",
        "--global-batch", "256", "--seq", "16384", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("llama4-maverick (400.7B parameters, 17.2B active, 48 layers");
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/architecture/attention/chunked").asBoolean()).isTrue();
    assertThat(saved.at("/model/architecture/attention/window").asInt()).isEqualTo(8192);
    assertThat(saved.at("/model/architecture/attention/qkNorm").asText()).isEqualTo("l2");
    assertThat(saved.at("/model/parameters").asLong()).isEqualTo(400_711_848_960L);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isCloseTo(saved.get("iterationSeconds").asDouble(), withinPercentage(0.01));
    // Megatron-LM's --window-size slides; it is not told chunks.
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(m.code()).isEqualTo(3);
    assertThat(m.err()).contains("chunked attention");
    CliRun t = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan");
    assertThat(t.code()).isEqualTo(3);
  }
}
