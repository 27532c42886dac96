package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --recompute op}, torchtitan's per-op selective checkpointing, as a user states it:
 * simulated between none and full (faster than full, keeping less than none), written by the
 * torchtitan exports in both of their forms, taken by mixture-of-experts models as by dense
 * ones, and refused, in one line with full recomputation as the nearest, by the frameworks that
 * recompute whole layers or listed modules.
 */
class PerOpRecomputeCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] FLAGS = {"--model", "llama3.1-8b", "--seq", "4096", "--cluster",
      "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--zero-stage", "3",
      "--micro-batch", "1", "--global-batch", "16"};

  private static JsonNode simulate(String recompute) throws Exception {
    List<String> a = new ArrayList<>(List.of("simulate", "--json", "--recompute", recompute));
    a.addAll(List.of(FLAGS));
    CliRun r = CliRun.of(a.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  @Test
  void liesBetweenNoneAndFull() throws Exception {
    JsonNode none = simulate("none");
    JsonNode op = simulate("op");
    JsonNode full = simulate("full");
    double t = op.get("iterationSeconds").asDouble();
    assertThat(t).isGreaterThan(none.get("iterationSeconds").asDouble())
        .isLessThan(full.get("iterationSeconds").asDouble());
    double m = op.get("peakMemoryBytesPerGpu").asDouble();
    assertThat(m).isLessThan(none.get("peakMemoryBytesPerGpu").asDouble())
        .isGreaterThan(full.get("peakMemoryBytesPerGpu").asDouble());
  }

  @Test
  void torchtitanWritesItsPerOpMode() {
    List<String> main = new ArrayList<>(List.of("export", "--to", "torchtitan", "--recompute",
        "op"));
    main.addAll(List.of(FLAGS));
    CliRun py = CliRun.of(main.toArray(String[]::new));
    assertThat(py.code()).as(py.err()).isZero();
    assertThat(py.out()).contains(
        "from torchtitan.distributed.activation_checkpoint import SelectiveAC\n",
        "    config.activation_checkpoint = SelectiveAC.Config()\n");
    main.addAll(List.of("--framework-version", "0.2.2"));
    CliRun toml = CliRun.of(main.toArray(String[]::new));
    assertThat(toml.code()).as(toml.err()).isZero();
    assertThat(toml.out()).contains(
        "[activation_checkpoint]\nmode = 'selective'\nselective_ac_option = 'op'\n");
  }

  @Test
  void megatronAndDeepSpeedRefuseItWithFullAsTheNearest() {
    for (String to : List.of("megatron", "deepspeed")) {
      List<String> a = new ArrayList<>(List.of("export", "--to", to, "--recompute", "op"));
      a.addAll(List.of(FLAGS));
      a.set(a.indexOf("--zero-stage") + 1, "1");
      // Llama 3, whose unscaled RoPE both build (Megatron-DeepSpeed has no RoPE scaling).
      a.set(a.indexOf("llama3.1-8b"), "llama3-8b");
      CliRun r = CliRun.of(a.toArray(String[]::new));
      assertThat(r.code()).as(to + r.err()).isEqualTo(3);
      assertThat(r.err().strip()).doesNotContain("\n").contains("--recompute op");
      String nearest = r.nearestExport();
      assertThat(nearest).as(to).contains("--recompute full");
    }
  }

  /**
   * A mixture-of-experts model (Mixtral 8x7B cut to 4 blocks, its experts 8 ways) takes it too,
   * between none and full in time and memory, from flags and from a plan file's stage.
   */
  @Test
  void aMixtureOfExpertsModelTakesIt(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    String[] moe = {"--model", "mixtral-8x7b", "--layers", "4", "--seq", "4096", "--cluster",
        "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--ep", "8", "--zero-stage", "1",
        "--micro-batch", "1", "--global-batch", "16"};
    java.util.Map<String, JsonNode> runs = new java.util.HashMap<>();
    for (String mode : List.of("none", "op", "full")) {
      List<String> a = new ArrayList<>(List.of("simulate", "--json", "--recompute", mode));
      a.addAll(List.of(moe));
      CliRun r = CliRun.of(a.toArray(String[]::new));
      assertThat(r.code()).as(r.err()).isZero();
      runs.put(mode, JSON.readTree(r.out()));
    }
    double t = runs.get("op").get("iterationSeconds").asDouble();
    assertThat(t).isGreaterThan(runs.get("none").get("iterationSeconds").asDouble())
        .isLessThan(runs.get("full").get("iterationSeconds").asDouble());
    double m = runs.get("op").get("peakMemoryBytesPerGpu").asDouble();
    assertThat(m).isLessThan(runs.get("none").get("peakMemoryBytesPerGpu").asDouble())
        .isGreaterThan(runs.get("full").get("peakMemoryBytesPerGpu").asDouble());

    java.nio.file.Path plan = dir.resolve("mixtral.json");
    CliRun p = CliRun.of("plan", "--model", "mixtral-8x7b", "--layers", "2", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--megatron-grid", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    java.util.Map<String, Double> peaks = new java.util.HashMap<>();
    for (String mode : List.of("none", "op", "full")) {
      com.fasterxml.jackson.databind.node.ObjectNode root =
          (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(plan.toFile());
      for (JsonNode stage : root.get("stages")) {
        ((com.fasterxml.jackson.databind.node.ObjectNode) stage).put("recompute", mode);
      }
      java.nio.file.Path file = dir.resolve("mixtral-" + mode + ".json");
      JSON.writeValue(file.toFile(), root);
      CliRun r = CliRun.of("simulate", "--json", "--plan", file.toString());
      assertThat(r.code()).as(r.err()).isZero();
      peaks.put(mode, JSON.readTree(r.out()).get("peakMemoryBytesPerGpu").asDouble());
    }
    assertThat(peaks.get("op")).isLessThan(peaks.get("none")).isGreaterThan(peaks.get("full"));
  }

  @Test
  void anUnknownModeNamesEveryMode() {
    List<String> a = new ArrayList<>(List.of("simulate", "--recompute", "ops"));
    a.addAll(List.of(FLAGS));
    CliRun r = CliRun.of(a.toArray(String[]::new));
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().strip()).doesNotContain("\n")
        .contains("use none, selective, full, op, maxtext:full, ").contains(" or maxtext:save_out_proj");
  }
}
