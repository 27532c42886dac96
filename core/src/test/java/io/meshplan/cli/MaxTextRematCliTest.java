package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --recompute maxtext:POLICY}, MaxText's remat policies, as a user states them: simulated
 * between none and full in memory and time, read from a plan file's stages, refused in one line
 * (exit 2) when unknown, offloaded, custom, given twice, broken by a newline or given for a
 * mixture-of-experts model, and refused by the exports (exit 3, nothing written) except {@code
 * maxtext:full}, which they write as full recomputation.
 */
class MaxTextRematCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> FLAGS = List.of("--model", "llama3-8b", "--layers", "4",
      "--seq", "4096", "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8",
      "--zero-stage", "3", "--micro-batch", "1", "--global-batch", "16");

  /** Llama 3 8B whole (torchtitan's 8B flavor), as every export builds it. */
  private static final List<String> EXPORT = List.of("--model", "llama3-8b", "--seq", "4096",
      "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "4", "--zero-stage", "3",
      "--micro-batch", "1", "--global-batch", "16");

  private static JsonNode simulate(String recompute) throws Exception {
    CliRun r = run("simulate", "--json", "--recompute", recompute);
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  private static CliRun run(String... args) {
    return run(FLAGS, args);
  }

  private static CliRun run(List<String> flags, String... args) {
    List<String> a = new ArrayList<>(List.of(args));
    a.addAll(flags);
    return CliRun.of(a.toArray(String[]::new));
  }

  /**
   * Peak memory rises and the iteration time falls as the policy saves more: full,
   * save_qkv_proj, save_dot_except_mlp, minimal, minimal_flash, none.
   */
  @Test
  void policiesOrderMemoryAndTime() throws Exception {
    List<String> order = List.of("maxtext:full", "maxtext:save_qkv_proj",
        "maxtext:save_dot_except_mlp", "maxtext:minimal", "maxtext:minimal_flash", "none");
    List<Double> peak = new ArrayList<>();
    List<Double> time = new ArrayList<>();
    for (String mode : order) {
      JsonNode j = simulate(mode);
      peak.add(j.get("peakMemoryBytesPerGpu").asDouble());
      time.add(j.get("iterationSeconds").asDouble());
    }
    assertThat(peak).as("peak").isSortedAccordingTo(Double::compare).doesNotHaveDuplicates();
    assertThat(time).as("time").isSortedAccordingTo((a, b) -> Double.compare(b, a))
        .doesNotHaveDuplicates();
  }

  @Test
  void badValuesAreRefusedInOneLine() {
    Map<String, String> says = new HashMap<>();
    says.put("maxtext:minimal_offloaded", "host memory");
    says.put("maxtext:qkv_proj_offloaded", "host memory");
    says.put("maxtext:custom", "its own flag");
    says.put("maxtext:minimal_flsh", "not a MaxText remat policy");
    says.put("maxtext:minimal\n", "control character");
    says.put("maxtext:minimal\nfull", "control character");
    for (Map.Entry<String, String> e : says.entrySet()) {
      CliRun r = run("simulate", "--recompute", e.getKey());
      assertThat(r.code()).as(e.getKey()).isEqualTo(2);
      assertThat(r.err().strip()).as(e.getKey()).doesNotContain("\n")
          .startsWith("meshplan:").contains(e.getValue());
    }
    CliRun twice = run("simulate", "--recompute", "maxtext:minimal", "--recompute",
        "maxtext:full");
    assertThat(twice.code()).isEqualTo(2);
    assertThat(twice.err().strip()).doesNotContain("\n").contains("only once");
    CliRun moe = CliRun.of("simulate", "--model", "mixtral-8x7b", "--layers", "2", "--seq",
        "4096", "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--ep", "8",
        "--micro-batch", "1", "--global-batch", "16", "--recompute", "maxtext:minimal");
    assertThat(moe.code()).isEqualTo(2);
    assertThat(moe.err().strip()).doesNotContain("\n").contains("dense decoder models only");
  }

  /** No export states a policy; nothing is written and full recomputation is the nearest. */
  @Test
  void exportsRefuseThePoliciesAndWriteFull(@TempDir Path dir) {
    for (String to : List.of("megatron", "torchtitan", "deepspeed", "accelerate")) {
      Path out = dir.resolve(to + ".out");
      CliRun r = run(EXPORT, "export", "--to", to, "--recompute",
          "maxtext:minimal_flash", "--out", out.toString());
      assertThat(r.code()).as(to + r.err()).isEqualTo(3);
      assertThat(r.err().strip()).as(to).doesNotContain("\n")
          .contains("maxtext:minimal_flash");
      assertThat(out).as(to).doesNotExist();
    }
    CliRun full = run(EXPORT, "export", "--to", "megatron", "--recompute",
        "maxtext:full");
    assertThat(full.code()).as(full.err()).isZero();
    assertThat(full.out()).contains("--recompute-granularity full");
  }

  /** A plan file's stage may name a policy; simulate --plan prices it as the flags do. */
  @Test
  void aPlanFileStageTakesAPolicy(@TempDir Path dir) throws Exception {
    Path plan = dir.resolve("llama.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "2", "--seq", "4096",
        "--cluster", "1x8:h100-80gb", "--global-batch", "16", "--megatron-grid", "--out",
        plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    Map<String, Double> peaks = new HashMap<>();
    for (String mode : List.of("maxtext:full", "maxtext:minimal_flash", "none")) {
      ObjectNode root = (ObjectNode) JSON.readTree(plan.toFile());
      for (JsonNode stage : root.get("stages")) {
        ((ObjectNode) stage).put("recompute", mode);
      }
      Path file = dir.resolve(mode.replace(':', '-') + ".json");
      JSON.writeValue(file.toFile(), root);
      CliRun r = CliRun.of("simulate", "--json", "--plan", file.toString());
      assertThat(r.code()).as(mode + r.err()).isZero();
      peaks.put(mode, JSON.readTree(r.out()).get("peakMemoryBytesPerGpu").asDouble());
    }
    assertThat(peaks.get("maxtext:minimal_flash")).isLessThan(peaks.get("none"))
        .isGreaterThan(peaks.get("maxtext:full"));
    ObjectNode root = (ObjectNode) JSON.readTree(plan.toFile());
    ((ObjectNode) root.get("stages").get(0)).put("recompute", "maxtext:minimal_offloaded");
    Path bad = dir.resolve("bad.json");
    JSON.writeValue(bad.toFile(), root);
    String before = Files.readString(bad);
    CliRun r = CliRun.of("simulate", "--plan", bad.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().strip()).doesNotContain("\n").contains("recompute");
    assertThat(Files.readString(bad)).isEqualTo(before);
  }

  /**
   * plan --recompute holds every stage to the mode instead of searching none, selective and
   * full; without it the search is what it was. For a framework (--for) a MaxText policy other
   * than full is infeasible (exit 3), full is planned; a mixture-of-experts model is refused.
   */
  @Test
  void planUsesTheGivenPolicy() throws Exception {
    io.meshplan.plan.RuntimeSpace any = io.meshplan.plan.RuntimeSpace.ANY;
    assertThat(any.searchedRecompute()).isEqualTo(io.meshplan.model.Recompute.SEARCHED);
    assertThat(any.withRecompute(io.meshplan.model.Recompute.MAXTEXT_MINIMAL).searchedRecompute())
        .containsExactly(io.meshplan.model.Recompute.MAXTEXT_MINIMAL);
    List<String> base = List.of("--model", "llama3-8b", "--layers", "4", "--seq", "4096",
        "--cluster", "1x8:h100-80gb", "--global-batch", "16", "--json");
    for (String[] extra : List.of(new String[] {"--megatron-grid"}, new String[] {},
        new String[] {"--for", "megatron"})) {
      String mode = extra.length == 2 ? "maxtext:full" : "maxtext:minimal_flash";
      List<String> a = new ArrayList<>(List.of("plan", "--recompute", mode));
      a.addAll(List.of(extra));
      CliRun r = run(base, a.toArray(String[]::new));
      assertThat(r.code()).as(a + r.err()).isZero();
      JsonNode stages = JSON.readTree(r.out()).get("stages");
      assertThat(stages.size()).isPositive();
      for (JsonNode st : stages) {
        assertThat(st.get("recompute").asText()).as(a.toString()).isEqualTo(mode);
      }
    }
    CliRun megatron = run(base, "plan", "--recompute", "maxtext:minimal", "--for", "megatron");
    assertThat(megatron.code()).isEqualTo(3);
    assertThat(megatron.err().strip()).doesNotContain("\n").contains("maxtext:minimal");
    CliRun moe = CliRun.of("plan", "--model", "mixtral-8x7b", "--layers", "2", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--recompute", "maxtext:minimal");
    assertThat(moe.code()).isEqualTo(2);
    assertThat(moe.err().strip()).doesNotContain("\n").contains("dense decoder models only");
  }
}
