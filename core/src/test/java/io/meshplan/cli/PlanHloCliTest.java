package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code meshplan plan --hlo}: the JSON contract, and bad input in one line. */
class PlanHloCliTest {
  private static final String STEP = "examples/train_step.hlo";

  @TempDir Path dir;

  private static void oneLine(CliRun r, int code, String contains) {
    r.refusedInOneLine(code, contains);
  }

  @Test
  void jsonKeepsThePlanContract() throws Exception {
    CliRun r = CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode j = new ObjectMapper().readTree(r.out());
    assertThat(j.get("format").asText()).isEqualTo("meshplan-plan");
    assertThat(j.get("source").get("path").asText()).isEqualTo(STEP);
    assertThat(j.get("module").asText()).isEqualTo("jit_train_step");
    assertThat(j.get("microbatches").asInt()).isEqualTo(4);
    assertThat(j.get("tokensPerSecond").isNull()).isTrue();
    assertThat(j.get("iterationSeconds").asDouble()).isPositive();
    assertThat(j.get("mfu").asDouble()).isBetween(0.0, 1.0);
    // Microbatches per second is the iteration's 4 microbatches over its time.
    assertThat(j.get("microbatchesPerSecond").asDouble())
        .isCloseTo(4 / j.get("iterationSeconds").asDouble(), org.assertj.core.data.Percentage
            .withPercentage(1e-9));
    int next = 0;
    int gpus = 0;
    for (JsonNode s : j.get("stages")) {
      assertThat(s.get("layers").get(0).asInt()).isEqualTo(next);
      next = s.get("layers").get(1).asInt() + 1;
      int n = s.get("submesh").get(0).asInt() * s.get("submesh").get(1).asInt();
      assertThat(s.get("logicalMesh").get(0).asInt() * s.get("logicalMesh").get(1).asInt())
          .isEqualTo(n);
      assertThat(s.get("firstDevice").asInt()).isEqualTo(gpus);
      gpus += n;
      assertThat(s.get("peakMemoryBytes").asDouble()).isPositive();
    }
    assertThat(next).isEqualTo(2);
    assertThat(gpus).isLessThanOrEqualTo(4);
  }

  @Test
  void badInputEndsInOneLine() throws Exception {
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb"), 2,
        "--hlo needs --microbatches N");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "0"), 2, "--microbatches must be a positive integer");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "99999999999"), 2, "--microbatches must be a positive integer");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "1000000"), 2, "more than the limit");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--model", "llama2-7b", "--cluster",
        "1x4:a100-80gb", "--microbatches", "4"), 2, "--model cannot be used with --hlo");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--global-batch", "64", "--cluster",
        "1x4:a100-80gb", "--microbatches", "4"), 2, "--global-batch cannot be used with --hlo");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--layers", "2", "--cluster",
        "1x4:a100-80gb", "--microbatches", "4"), 2, "--layers cannot be used with --hlo");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "4", "--spark", "local[2]", "--out", dir.resolve("p.json").toString()), 2,
        "--spark cannot be used with --hlo");
    assertThat(dir.resolve("p.json")).doesNotExist();
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "4", "--schedule", "gpipe"), 2, "--schedule 'gpipe' is unknown");
    oneLine(CliRun.of("plan", "--hlo", dir.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4"), 2, dir.toString());
    oneLine(CliRun.of("plan", "--hlo", dir.resolve("missing.hlo").toString(), "--cluster",
        "1x4:a100-80gb", "--microbatches", "4"), 2, "missing.hlo");
    Path empty = Files.createFile(dir.resolve("empty.hlo"));
    oneLine(CliRun.of("plan", "--hlo", empty.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4"), 2, "empty.hlo");
    Path forward = dir.resolve("forward.hlo");
    try (var in = getClass().getResourceAsStream("/hlo/attention_forward.hlo")) {
      Files.write(forward, in.readAllBytes());
    }
    oneLine(CliRun.of("plan", "--hlo", forward.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4"), 2, "has no backward pass");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb", "--microbatches",
        "4", "--memory", "1KiB"), 3, "no pipeline of jit_train_step with 4 microbatches fits in "
        + "1KiB per GPU; it needs");
    oneLine(CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:tpu-v9", "--microbatches", "4"),
        2, "tpu-v9");
  }
}
