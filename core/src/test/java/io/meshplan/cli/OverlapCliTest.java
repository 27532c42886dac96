package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The overlap flags: Megatron-LM's combination rules in one line each, the simulator's hidden
 * communication, the plan file and the Megatron-LM arguments that carry them.
 */
class OverlapCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /** GPT-3 175B with 8 layers on 2 nodes of A100: tp 8, pp 2, dp 1... plus the given flags. */
  private static CliRun simulate(String... extra) {
    List<String> a = new ArrayList<>(List.of("simulate", "--model", "gpt3-175b", "--layers",
        "4", "--cluster", "4x8:a100-80gb", "--tp", "8", "--pp", "2", "--dp", "2",
        "--micro-batch", "1", "--global-batch", "16"));
    a.addAll(List.of(extra));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void megatronsCombinationRulesEndInOneLine() {
    simulate("--tp-comm-overlap").refusedInOneLine(2,
        "--tp-comm-overlap needs --sequence-parallel");
    simulate("--overlap-param-gather", "--distributed-optimizer").refusedInOneLine(2,
        "--overlap-param-gather needs --overlap-grad-reduce");
    simulate("--overlap-param-gather", "--overlap-grad-reduce").refusedInOneLine(2,
        "--overlap-param-gather needs the distributed optimizer");
    CliRun.of("export", "--to", "megatron", "--model", "gpt3-175b", "--layers", "4",
        "--cluster", "4x8:a100-80gb", "--tp", "8", "--pp", "2", "--dp", "2", "--micro-batch",
        "1", "--global-batch", "16", "--tp-comm-overlap")
        .refusedInOneLine(2, "--tp-comm-overlap needs --sequence-parallel");
  }

  @Test
  void theSimulatorShowsWhatIsHiddenAndTheOverlapIsFaster() throws Exception {
    CliRun serial = simulate("--sequence-parallel", "--json");
    CliRun overlapped = simulate("--sequence-parallel", "--tp-comm-overlap", "--json");
    assertThat(serial.code()).as(serial.err()).isZero();
    assertThat(overlapped.code()).as(overlapped.err()).isZero();
    JsonNode s = JSON.readTree(serial.out());
    JsonNode o = JSON.readTree(overlapped.out());
    assertThat(s.get("breakdown").get("hiddenCommunication").asDouble()).isZero();
    double hidden = o.get("breakdown").get("hiddenCommunication").asDouble();
    assertThat(hidden).isPositive();
    assertThat(o.get("breakdown").get("overlapSlowdown").asDouble()).isPositive()
        .isLessThan(hidden);
    // The tensor-parallel communication left exposed shrinks, and so does the iteration.
    assertThat(o.get("breakdown").get("tensorParallel").asDouble())
        .isLessThan(s.get("breakdown").get("tensorParallel").asDouble());
    assertThat(o.get("iterationSeconds").asDouble())
        .isLessThan(s.get("iterationSeconds").asDouble());
    CliRun text = simulate("--sequence-parallel", "--tp-comm-overlap");
    assertThat(text.out()).contains("of communication hidden under compute, which it slows by")
        .contains("hidden s");
    assertThat(simulate("--sequence-parallel").out()).doesNotContain("hidden");
  }

  @Test
  void thePlanFileKeepsItsOverlapsAndExportWritesThem() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "16", "--megatron-grid", "--overlap-grad-reduce",
        "--tp-comm-overlap", "--no-gradient-accumulation-fusion", "--out", plan.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode ov = JSON.readTree(Files.readString(plan)).get("overlaps");
    assertThat(ov.get("gradReduce").asBoolean()).isTrue();
    assertThat(ov.get("tensorComm").asBoolean()).isTrue();
    assertThat(ov.get("gradAccumFusion").asBoolean()).isFalse();
    assertThat(ov.get("fsdpPrefetch").asBoolean()).isTrue();
    CliRun same = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(same.code()).as(same.err()).isZero();
    assertThat(JSON.readTree(same.out()).get("iterationSeconds").asDouble()).isEqualTo(
        JSON.readTree(Files.readString(plan)).get("iterationSeconds").asDouble());
    CliRun export = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(export.code()).as(export.err()).isIn(0, 3);
    assertThat(export.out()).contains("--overlap-grad-reduce")
        .contains("--no-gradient-accumulation-fusion");
    CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--tp-comm-overlap")
        .refusedInOneLine(2, "--plan carries the overlaps it was planned with");
  }

  @Test
  void aPlanFileWithAParameterGatherButNoOverlappedReductionIsRefused() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "16", "--out", plan.toString());
    assertThat(r.code()).as(r.err()).isZero();
    String text = Files.readString(plan).replace("\"paramGather\" : false",
        "\"paramGather\" : true");
    assertThat(text).contains("\"paramGather\" : true");
    Files.writeString(plan, text);
    CliRun.of("simulate", "--plan", plan.toString()).refusedInOneLine(2,
        "'paramGather' is true but 'gradReduce' is false");
  }

  /**
   * The fused cross-entropy kernel reads and writes 2-byte logits instead of fp32 tensors, so the
   * iteration is shorter and the last stage keeps less; the plan file carries it, and no
   * framework meshplan exports to runs it: each exits 3 with the same configuration in fp32 as
   * the nearest.
   */
  @Test
  void theFusedCrossEntropyIsFasterIsKeptInThePlanAndNoExportRunsIt() throws Exception {
    CliRun fp32 = simulate("--json");
    CliRun fused = simulate("--fused-cross-entropy", "--json");
    assertThat(fused.code()).as(fused.err()).isZero();
    JsonNode a = JSON.readTree(fp32.out());
    JsonNode b = JSON.readTree(fused.out());
    assertThat(b.get("iterationSeconds").asDouble())
        .isLessThan(a.get("iterationSeconds").asDouble());
    // The last stage holds the loss.
    assertThat(b.get("stages").get(1).get("peakMemoryBytes").asDouble())
        .isLessThan(a.get("stages").get(1).get("peakMemoryBytes").asDouble());
    Path plan = dir.resolve("fused.json");
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "16", "--megatron-grid", "--fused-cross-entropy",
        "--out", plan.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(JSON.readTree(Files.readString(plan)).get("overlaps").get("lossFusion")
        .asBoolean()).isTrue();
    CliRun same = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(JSON.readTree(same.out()).get("iterationSeconds").asDouble()).isEqualTo(
        JSON.readTree(Files.readString(plan)).get("iterationSeconds").asDouble());
    for (String to : List.of("megatron", "deepspeed")) {
      CliRun export = CliRun.of("export", "--to", to, "--plan", plan.toString());
      assertThat(export.code()).as(to + export.err()).isEqualTo(3);
      assertThat(export.err().strip()).doesNotContain("\n").contains("fp32",
          "--fused-cross-entropy");
      String nearest = export.nearestExport();
      assertThat(nearest).doesNotContain("--fused-cross-entropy");
    }
  }

  /**
   * torchtitan runs the fused loss by compiling the loss alone (config/configs.py's
   * CompileConfig, components/loss.py's _maybe_compile): both of its forms say so, and only
   * with the flag.
   */
  @Test
  void torchtitanCompilesTheLossForTheFusedCrossEntropy() {
    String[] flags = {"--model", "llama3.1-8b", "--seq", "2048", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--zero-stage", "3", "--micro-batch", "1",
        "--global-batch", "16", "--recompute", "full"};
    List<String> main = new ArrayList<>(List.of("export", "--to", "torchtitan"));
    main.addAll(List.of(flags));
    List<String> v022 = new ArrayList<>(main);
    v022.addAll(List.of("--framework-version", "0.2.2"));
    assertThat(CliRun.of(main.toArray(String[]::new)).out()).doesNotContain("compile");
    main.add("--fused-cross-entropy");
    v022.add("--fused-cross-entropy");
    CliRun py = CliRun.of(main.toArray(String[]::new));
    assertThat(py.code()).as(py.err()).isZero();
    assertThat(py.out()).contains("    config.compile.enable = True\n"
        + "    config.compile.components = [\"loss\"]\n");
    CliRun toml = CliRun.of(v022.toArray(String[]::new));
    assertThat(toml.code()).as(toml.err()).isZero();
    assertThat(toml.out()).contains("[compile]\nenable = true\ncomponents = ['loss']\n");
  }
}
