package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped fitted prices as a user meets them: by default on Hopper, said in one line and in
 * JSON with the 90% band; {@code --prices kernel} without them; V100, with no public run, at
 * kernel-level prices either way; bad values refused in one line.
 */
class PricesCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> H100 = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "1x8:h100-80gb", "--tp", "4", "--pp", "1", "--dp", "2", "--global-batch", "16",
      "--micro-batch", "1");

  @TempDir Path dir;

  private static CliRun run(List<String> base, String... more) {
    return CliRun.of(base, more);
  }

  @Test
  void hopperIsPricedWithTheShippedFactorAndSaysSo() throws Exception {
    CliRun text = run(H100);
    assertThat(text.code()).as(text.err()).isZero();
    assertThat(text.out()).contains("prices: hopper compute x0.811 (fitted on 46 public runs, 7 "
        + "stacks); 90% band -21%/+27%").containsPattern("iteration [0-9.]+ s \\([0-9.]+-[0-9.]+ "
        + "s, 90%\\)");
    JsonNode fitted = JSON.readTree(run(H100, "--json").out());
    JsonNode kernel = JSON.readTree(run(H100, "--json", "--prices", "kernel").out());
    assertThat(fitted.at("/prices/source").asText()).isEqualTo("public");
    assertThat(fitted.at("/prices/computeScale").asDouble()).isEqualTo(0.8113);
    assertThat(fitted.at("/prices/dtype").asText()).isEqualTo("bf16");
    // Hopper's default fused kernel, cuDNN's (AttentionKernel.defaultFor).
    assertThat(fitted.at("/prices/attention").asText()).isEqualTo("cudnn");
    assertThat(JSON.readTree(run(H100, "--json", "--attention", "flash2").out())
        .at("/prices/attention").asText()).isEqualTo("flash2");
    assertThat(fitted.at("/prices/folds").size()).isEqualTo(7);
    double t = fitted.get("iterationSeconds").asDouble();
    // The band is the shipped factors x0.7856 and x1.273 of the predicted time.
    assertThat(fitted.at("/iterationSecondsBand/0").asDouble()).isCloseTo(t * 0.7856,
        within(1e-9));
    assertThat(fitted.at("/iterationSecondsBand/1").asDouble()).isCloseTo(t * 1.273,
        within(1e-9));
    assertThat(kernel.at("/prices/source").asText()).isEqualTo("kernel");
    assertThat(kernel.has("iterationSecondsBand")).isFalse();
    // Kernels 1 / 0.8113 = 1.233 times slower: the iteration is slower, by less than that
    // (communication is not scaled), and the memory verdict stays the last field.
    double tk = kernel.get("iterationSeconds").asDouble();
    assertThat(t / tk).isGreaterThan(1.1).isLessThanOrEqualTo(1 / 0.8113 + 1e-9);
    List<String> fields = new ArrayList<>();
    fitted.fieldNames().forEachRemaining(fields::add);
    assertThat(fields.get(fields.size() - 1)).isEqualTo("fits");
  }

  @Test
  void voltaHasNoPublicRunAndKeepsTheKernelLevelPrices() {
    CliRun p = CliRun.of("plan", "--model", "llama2-13b", "--cluster", "50x4:v100-32gb");
    assertThat(p.code()).as(p.err()).isZero();
    // The README's main job, unchanged by the shipped factors.
    assertThat(p.out()).contains("iteration 6.1132 s, 171528 tokens/s")
        .contains("prices: volta compute at kernel-level prices (no public run on this "
            + "architecture; no band)");
  }

  @Test
  void aPlanAtKernelPricesIsSimulatedAtThem() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--prices", "kernel", "--out", plan.toString(),
        "--json");
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(JSON.readTree(Files.readString(plan)).at("/prices/source").asText())
        .isEqualTo("kernel");
    JsonNode again = JSON.readTree(CliRun.of("simulate", "--plan", plan.toString(), "--json")
        .out());
    assertThat(again.get("iterationSeconds").asDouble())
        .isEqualTo(JSON.readTree(p.out()).get("iterationSeconds").asDouble());
  }

  @Test
  void badPricesAndFoldsAreRefusedInOneLine() {
    run(H100, "--prices", "foo").refusedInOneLine(2, "--prices 'foo' is unknown");
    run(H100, "--prices", "kernel", "--profile", "p.yaml").refusedInOneLine(2,
        "--prices and --profile both choose the compute prices");
    Path out = dir.resolve("f.yaml");
    CliRun.of("calibrate", "--train", "--folds", "torchtitan", "--out", out.toString())
        .refusedInOneLine(2, "fold 'torchtitan' is not a public fold");
    CliRun.of("calibrate", "--train", "--folds", ",", "--out", out.toString())
        .refusedInOneLine(2, "--folds names no fold");
    CliRun.of("calibrate", "--train", "--folds", "public", "--cluster", "1x8:h100-80gb",
        "--out", out.toString()).refusedInOneLine(2, "each run states its own cluster");
    CliRun.of("calibrate", "--train", "--out", out.toString()).refusedInOneLine(2,
        "--train needs training logs");
    assertThat(out).doesNotExist();
    CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:a100-80gb", "--tp", "4",
        "--pp", "1", "--dp", "2", "--global-batch", "16", "--micro-batch", "1", "--attention",
        "flash3").refusedInOneLine(2, "runs on Hopper GPUs only");
  }
}
