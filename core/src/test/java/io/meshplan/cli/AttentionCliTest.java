package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --attention}: its default per GPU, the plan file, and bad values in one line. */
class AttentionCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static void oneLine(CliRun r, int code, String contains) {
    r.refusedInOneLine(code, contains);
  }

  @Test
  void badValuesEndInOneLine() {
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb",
        "--attention", "foo"), 2, "--attention 'foo' is unknown");
    oneLine(CliRun.of("simulate", "--model", "llama2-7b", "--cluster", "1x8:v100-32gb", "--tp",
        "8", "--pp", "1", "--dp", "1", "--micro-batch", "1", "--global-batch", "8",
        "--attention", "flash"), 2, "--attention flash needs Ampere or later");
    oneLine(CliRun.of("plan", "--hlo", "examples/train_step.hlo", "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--attention", "flash"), 2, "--attention cannot be used with --hlo");
  }

  @Test
  void thePlanFileKeepsItsAttentionForSimulate() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x4:a100-80gb", "--global-batch", "8", "--out", plan.toString(), "--json");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode p = JSON.readTree(Files.readString(plan));
    // A100: fused attention by default.
    assertThat(p.get("attention").asText()).isEqualTo("flash");
    CliRun same = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(same.code()).as(same.err()).isZero();
    assertThat(JSON.readTree(same.out()).get("iterationSeconds").asDouble())
        .isEqualTo(p.get("iterationSeconds").asDouble());
    // Unfused attention writes and reads the scores: the same plan runs slower.
    CliRun unfused = CliRun.of("simulate", "--plan", plan.toString(), "--json", "--attention",
        "unfused");
    assertThat(unfused.code()).as(unfused.err()).isZero();
    assertThat(JSON.readTree(unfused.out()).get("iterationSeconds").asDouble())
        .isGreaterThan(p.get("iterationSeconds").asDouble());
    // V100: unfused by default, and the file says so.
    Path v100 = dir.resolve("v.json");
    CliRun v = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x4:v100-32gb", "--global-batch", "8", "--out", v100.toString(), "--json");
    assertThat(v.code()).as(v.err()).isZero();
    assertThat(JSON.readTree(Files.readString(v100)).get("attention").asText())
        .isEqualTo("unfused");
  }

  /**
   * {@code export --to megatron} states the kernel the plan was priced with as Megatron-Core's
   * {@code --attention-backend} (AttnBackend: flash, fused, unfused, local, auto).
   */
  @Test
  void megatronArgumentsNameTheAttentionBackend() {
    String[] base = {"export", "--to", "megatron", "--model", "llama2-7b", "--cluster",
        "1x8:a100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
        "--global-batch", "8"};
    CliRun flash = CliRun.of(base);
    assertThat(flash.code()).as(flash.err()).isZero();
    assertThat(flash.out()).contains("  --attention-backend flash\n");
    String[] unfused = java.util.Arrays.copyOf(base, base.length + 2);
    unfused[base.length] = "--attention";
    unfused[base.length + 1] = "unfused";
    assertThat(CliRun.of(unfused).out()).contains("  --attention-backend unfused\n");
    String[] v100 = base.clone();
    v100[6] = "1x8:v100-32gb";
    assertThat(CliRun.of(v100).out()).contains("  --attention-backend unfused\n");
    String[] bad = java.util.Arrays.copyOf(v100, v100.length + 2);
    bad[v100.length] = "--attention";
    bad[v100.length + 1] = "flash";
    oneLine(CliRun.of(bad), 2, "--attention flash needs Ampere or later");
  }

  /**
   * A value of any length echoed back in a refusal is cut: the line holds at most 1,000
   * characters of the message plus the prefix and the count of what was cut (here 100,000 + 14
   * characters of "--attention '...'" quoting, less the 1,000 kept).
   */
  @Test
  void aHugeValueIsEchoedCut() {
    String huge = "b".repeat(100_000);
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb",
        "--attention", huge);
    r.refusedInOneLine(2, "more characters)");
    assertThat(r.err().length()).isLessThan(1_100);
    CliRun p = CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
        "--image", "x", "--pod-network", "multus:" + huge, "--", "train.py");
    p.refusedInOneLine(2, "more characters)");
    assertThat(p.err().length()).isLessThan(1_100);
  }
}
