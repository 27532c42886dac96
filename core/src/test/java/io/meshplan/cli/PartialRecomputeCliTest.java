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
 * {@code --recompute-num-layers N}: full recomputation of the first N layers of each stage,
 * the rest keeping their activations (Megatron-LM's {@code --recompute-method block}).
 */
class PartialRecomputeCliTest {
  @TempDir Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Llama 3 8B (32 blocks) on one stage of 8 H200s (it fits without recomputation). */
  private static final List<String> RUN = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "1x8:h200-141gb", "--seq", "4096", "--tp", "1", "--pp", "1", "--dp", "8",
      "--micro-batch", "1", "--global-batch", "8", "--distributed-optimizer", "--prices",
      "kernel", "--json");

  private static JsonNode run(String... more) throws Exception {
    List<String> a = new ArrayList<>(RUN);
    a.addAll(List.of(more));
    CliRun r = CliRun.of(a.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  private static double at(JsonNode n, String group, String field) {
    return n.path(group).path(field).asDouble();
  }

  /**
   * The blocks are alike and the embedding and head do not depend on recomputation, so each
   * block recomputed adds one block's share of the difference between full recomputation and
   * none: with 8 of 32 blocks, a quarter of the extra compute time and of the recomputation, and
   * a quarter of the activations full recomputation frees; 16 blocks twice that; 32 (every block
   * of the stage) the same as full recomputation; 40, more than the stage has, is refused (it
   * used to be priced as 32 without a word, and written to Megatron-LM as 40).
   */
  @Test
  void eachRecomputedBlockAddsOneBlocksShare() throws Exception {
    JsonNode none = run("--recompute", "none");
    JsonNode full = run("--recompute", "full");
    JsonNode eight = run("--recompute", "full", "--recompute-num-layers", "8");
    JsonNode sixteen = run("--recompute", "full", "--recompute-num-layers", "16");
    JsonNode all = run("--recompute", "full", "--recompute-num-layers", "32");
    double r = at(full, "breakdown", "recompute");
    assertThat(r).isPositive();
    assertThat(at(eight, "breakdown", "recompute")).isCloseTo(r / 4, within(r * 1e-9));
    assertThat(at(sixteen, "breakdown", "recompute")).isCloseTo(r / 2, within(r * 1e-9));
    double c0 = at(none, "breakdown", "compute");
    double c1 = at(full, "breakdown", "compute");
    assertThat(at(eight, "breakdown", "compute")).isCloseTo(c0 + (c1 - c0) / 4,
        within(c1 * 1e-9));
    double a0 = at(none, "memory", "activations");
    double a1 = at(full, "memory", "activations");
    assertThat(a1).isLessThan(a0);
    assertThat(at(eight, "memory", "activations")).isCloseTo(a0 - (a0 - a1) / 4,
        within(a0 * 1e-9));
    assertThat(at(sixteen, "memory", "activations")).isCloseTo(a0 - (a0 - a1) / 2,
        within(a0 * 1e-9));
    assertThat(all.path("iterationSeconds").asDouble())
        .isEqualTo(full.path("iterationSeconds").asDouble());
    assertThat(at(all, "memory", "activations")).isEqualTo(a1);
    List<String> forty = new ArrayList<>(RUN);
    forty.addAll(List.of("--recompute", "full", "--recompute-num-layers", "40"));
    CliRun.of(forty.toArray(String[]::new)).refusedInOneLine(2,
        "--recompute-num-layers 40 is more than the 32 layers of a model chunk");
  }

  /** Per stage: with PP 2 each stage of 16 blocks recomputes its own first 4. */
  @Test
  void theCountIsPerStage() throws Exception {
    List<String> a = new ArrayList<>(RUN);
    a.set(a.indexOf("--pp") + 1, "2");
    a.set(a.indexOf("--dp") + 1, "4");
    CliRun full = CliRun.of(a, "--recompute", "full");
    CliRun four = CliRun.of(a, "--recompute", "full", "--recompute-num-layers", "4");
    double r = JSON.readTree(full.out()).path("breakdown").path("recompute").asDouble();
    assertThat(JSON.readTree(four.out()).path("breakdown").path("recompute").asDouble())
        .isCloseTo(r / 4, within(r * 1e-9));
  }

  @Test
  void itNeedsFullRecomputationAndACount() {
    List<String> base = RUN.subList(0, RUN.indexOf("--json"));
    CliRun.of(base, "--recompute", "selective", "--recompute-num-layers", "4")
        .refusedInOneLine(2, "--recompute-num-layers recomputes the first layers of each stage "
            + "in full: it needs --recompute full, and the mode is selective");
    CliRun.of(base, "--recompute-num-layers", "4")
        .refusedInOneLine(2, "it needs --recompute full, and the mode is none");
    CliRun.of(base, "--recompute", "full", "--recompute-num-layers", "0")
        .refusedInOneLine(2, "--recompute-num-layers must be at least 1, got 0");
  }

  /**
   * Megatron-LM's export writes the block method (Megatron-LM's arguments.py: {@code
   * --recompute-method} choices {@code uniform} and {@code block}); torchtitan's cannot, and
   * names the nearest input, which recomputes every layer.
   */
  @Test
  void megatronWritesTheBlockMethodAndTorchtitanRefusesIt() throws Exception {
    List<String> export = List.of("export", "--model", "llama3-8b", "--cluster",
        "1x8:h100-80gb", "--seq", "4096", "--tp", "1", "--pp", "2", "--dp", "4",
        "--micro-batch", "1", "--global-batch", "32", "--distributed-optimizer", "--recompute",
        "full", "--recompute-num-layers", "3");
    Path m = dir.resolve("m.sh");
    CliRun mm = CliRun.of(export, "--to", "megatron", "--out", m.toString());
    assertThat(mm.code()).as(mm.err()).isZero();
    assertThat(Files.readString(m)).contains("--recompute-granularity full\n",
        "--recompute-method block\n", "--recompute-num-layers 3\n");
    Path t = dir.resolve("t.py");
    CliRun tt = CliRun.of(export, "--to", "torchtitan", "--out", t.toString());
    assertThat(tt.code()).isEqualTo(3);
    assertThat(tt.err()).contains("writes no recomputation of the first 3 layers of each stage "
        + "alone (--recompute-num-layers); export --to megatron writes it");
    assertThat(tt.nearestExport()).contains("--recompute full")
        .doesNotContain("--recompute-num-layers");
    assertThat(t).doesNotExist();
  }
}
