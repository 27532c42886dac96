package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code plan --fallbacks} and {@code replan}: the fallbacks are whole plans of the cluster
 * minus 1 and 2 nodes, planned for the same framework as the main plan ({@code --for}), replan picks the fastest that fits the nodes left without planning, and
 * the plan it writes simulates to the iteration time it states and exports.
 */
class ReplanCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir static Path dir;
  private static Path planFile;

  @BeforeAll
  static void planWithFallbacks() {
    planFile = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "8", "--cluster",
        "4x8:a100-80gb", "--global-batch", "64", "--for", "megatron", "--fallbacks", "2",
        "--out", planFile.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("fallback, 1 node lost: 3x8:a100-80gb")
        .contains("fallback, 2 nodes lost: 2x8:a100-80gb");
  }

  @Test
  void theFallbacksAreWholePlansOfTheSmallerClusters() throws Exception {
    JsonNode root = JSON.readTree(Files.readString(planFile));
    assertThat(root.path("fallbacks")).hasSize(2);
    for (JsonNode f : root.get("fallbacks")) {
      int lost = f.get("lostNodes").asInt();
      assertThat(f.at("/plan/cluster").asText()).startsWith((4 - lost) + "x8:a100-80gb");
      assertThat(f.at("/plan/prices/source").asText()).isEqualTo("public");
    }
  }

  @Test
  void replanPicksTheFastestFallbackThatFitsAndItSimulatesAsStated() throws Exception {
    Path out = dir.resolve("one.json");
    CliRun r = CliRun.of("replan", "--plan", planFile.toString(), "--lost-nodes", "1", "--out",
        out.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode root = JSON.readTree(Files.readString(planFile));
    double best = Double.MAX_VALUE;
    for (JsonNode f : root.get("fallbacks")) {
      best = Math.min(best, f.at("/plan/iterationSeconds").asDouble());
    }
    JsonNode chosen = JSON.readTree(Files.readString(out));
    assertThat(chosen.get("iterationSeconds").asDouble()).isEqualTo(best);
    CliRun sim = CliRun.of("simulate", "--plan", out.toString(), "--json");
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(JSON.readTree(sim.out()).get("iterationSeconds").asDouble()).isEqualTo(best);
    CliRun ex = CliRun.of("export", "--to", "megatron", "--plan", out.toString(), "--out", "-");
    assertThat(ex.code()).as(ex.err()).isZero();
    // Two lost nodes leave only the 2-node fallback.
    JsonNode two = JSON.readTree(CliRun.of("replan", "--plan", planFile.toString(),
        "--lost-nodes", "2", "--json").out());
    assertThat(two.get("cluster").asText()).startsWith("2x8:a100-80gb");
  }

  @Test
  void aLossPastTheStoredFallbacksIsPlannedNow() throws Exception {
    // Three of four nodes lost: no stored fallback (1 and 2 lost) fits on one node, so the main
    // plan's job (for Megatron-LM) is planned on 1x8 and written as a plan file.
    Path out = dir.resolve("three.json");
    CliRun r = CliRun.of("replan", "--plan", planFile.toString(), "--lost-nodes", "3", "--out",
        out.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("run the plan made now (no stored fallback fits: 2 stored) for "
        + "1x8:a100-80gb");
    JsonNode p = JSON.readTree(Files.readString(out));
    assertThat(p.get("cluster").asText()).startsWith("1x8:a100-80gb");
    assertThat(p.at("/prices/source").asText()).isEqualTo("public");
    CliRun ex = CliRun.of("export", "--to", "megatron", "--plan", out.toString(), "--out", "-");
    assertThat(ex.code()).as(ex.err()).isZero();
  }

  @Test
  void badRequestsAreRefusedInOneLine() throws Exception {
    for (String m : new String[] {"0", "4", "-1"}) {
      CliRun.of("replan", "--plan", planFile.toString(), "--lost-nodes", m)
          .refusedInOneLine(2, "--lost-nodes " + m + ": the plan's cluster");
    }
    Path plain = dir.resolve("plain.json");
    assertThat(CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "2x8:a100-80gb", "--global-batch", "16", "--out", plain.toString()).code()).isZero();
    CliRun.of("replan", "--plan", plain.toString(), "--lost-nodes", "1", "--memory", "1GiB")
        .refusedInOneLine(2, "Unknown option");
    for (String k : new String[] {"0", "17", "2"}) {
      CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster", "2x8:a100-80gb",
          "--global-batch", "16", "--fallbacks", k).refusedInOneLine(2, "--fallbacks");
    }
    CliRun.of("replan", "--plan", planFile.toString(), "--lost-nodes", "1", "--out",
        planFile.toString()).refusedInOneLine(2, "--out");
    // A one-node plan has no loss to plan for: said so, not "lose 1 to 0".
    Path one = dir.resolve("single-node.json");
    assertThat(CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "8", "--out", one.toString()).code()).isZero();
    CliRun.of("replan", "--plan", one.toString(), "--lost-nodes", "1").refusedInOneLine(2,
        "the plan's cluster 1x8:a100-80gb:ib-hdr200 has 1 node, so no node can be lost");
  }

  /** The plan file with one edit of its JSON. */
  private static Path edited(String name, java.util.function.Consumer<ObjectNode> edit)
      throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(planFile.toFile());
    edit.accept(root);
    Path p = dir.resolve(name);
    Files.writeString(p, JSON.writeValueAsString(root));
    return p;
  }

  private static ObjectNode fallback(ObjectNode root, int k) {
    return (ObjectNode) root.get("fallbacks").get(k);
  }

  /**
   * replan prints figures it does not simulate again, so the ones it reads must be ones a
   * simulation gives: an iteration of 1 us to 1e6 s, and a main plan whose stages tile its
   * cluster; a fallback loses 1 to nodes - 1 nodes and trains the main plan's global batch; the
   * throughput printed is the job's tokens over the iteration, not a stored figure.
   */
  @Test
  void theFiguresItPrintsAreOnesASimulationGives() throws Exception {
    String[][] bad = {{"main0", "iterationSeconds 0.0 is not 1.0E-6 to 1000000.0 s"},
        {"tiny", "iterationSeconds 1.0E-300 is not"}, {"fb0", "fallbacks[lostNodes=1].plan: "
            + "iterationSeconds 0.0 is not"}, {"cluster", "the stages use 32 GPUs, but "
            + "8x8:a100-80gb:ib-hdr200 has 64"}, {"lost", "a fallback's lostNodes 5 is not 1 to 3"},
        {"batch", "fallbacks[lostNodes=1].plan: a global batch of 128, where the main plan's is "
            + "64"}, {"mfu", "mfu 50.0 is above 4.0"},
        // A fallback for another job (sequence, precision), for a cluster other than the one
        // left, twice for one loss, or a 'fallbacks' that is not a list was taken as given.
        {"seq", "fallbacks[lostNodes=1].plan: trains llama2-7b at sequence 2048 in bf16 with"},
        {"dtype", "fallbacks[lostNodes=1].plan: trains llama2-7b at sequence 1024 in f32"},
        {"left", "the fallback for lostNodes 1 names the cluster \"3x8:h100-80gb:ib-ndr400\", "
            + "but the main plan's cluster less 1 node is 3x8:a100-80gb:ib-hdr200"},
        {"twice", "two fallbacks for lostNodes 1"},
        {"object", "field 'fallbacks' must be a list of fallbacks"}};
    java.util.Map<String, java.util.function.Consumer<ObjectNode>> edits =
        new java.util.HashMap<>();
    edits.put("main0", r -> r.put("iterationSeconds", 0.0));
    edits.put("tiny", r -> r.put("iterationSeconds", 1e-300));
    edits.put("fb0", r -> ((ObjectNode) fallback(r, 0).get("plan"))
        .put("iterationSeconds", 0.0));
    edits.put("cluster", r -> r.put("cluster", "8x8:a100-80gb:ib-hdr200"));
    edits.put("lost", r -> fallback(r, 0).put("lostNodes", 5));
    edits.put("batch", r -> ((ObjectNode) fallback(r, 0).get("plan")).put("globalBatch", 128)
        .put("microbatches", 2 * fallback(r, 0).get("plan").get("microbatches").asInt()));
    edits.put("mfu", r -> ((ObjectNode) fallback(r, 0).get("plan")).put("mfu", 50.0));
    edits.put("seq", r -> ((ObjectNode) fallback(r, 0).get("plan").get("model"))
        .put("seq", 2048));
    edits.put("dtype", r -> ((ObjectNode) fallback(r, 0).get("plan").get("model"))
        .put("dtype", "f32"));
    edits.put("left", r -> fallback(r, 0).put("cluster", "3x8:h100-80gb:ib-ndr400"));
    edits.put("twice", r -> fallback(r, 1).put("lostNodes", 1));
    edits.put("object", r -> r.putObject("fallbacks"));
    for (String[] b : bad) {
      CliRun.of("replan", "--plan", edited(b[0] + ".json", edits.get(b[0])).toString(),
          "--lost-nodes", "1").refusedInOneLine(2, b[1]);
    }
    // A stored throughput of 1e308 is not printed: the job's tokens over its iteration are.
    Path fast = edited("tps.json", r -> ((ObjectNode) fallback(r, 0).get("plan"))
        .put("tokensPerSecond", 1e308));
    CliRun r = CliRun.of("replan", "--plan", fast.toString(), "--lost-nodes", "1");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode f = JSON.readTree(planFile.toFile()).get("fallbacks").get(0).get("plan");
    // 64 sequences of the model's tokens over the fallback's iteration.
    long tps = Math.round(64.0 * f.get("model").get("seq").asInt()
        / f.get("iterationSeconds").asDouble());
    assertThat(r.out()).contains(" " + tps + " tokens/s").doesNotContain("E+308")
        .doesNotContain("00000000000000000000");
  }
}
