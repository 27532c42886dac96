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
 * The plan search tries each context exchange (the ring, the all-gather, Ulysses' all-to-alls)
 * wherever it splits sequences, and keeps the fastest: the plan it returns is at least as fast as
 * the same plan re-simulated with either other exchange, and a target that has only one of them
 * (torchtitan: the all-gather) now gets a context-parallel plan at all.
 */
class ContextExchangeSearchCliTest {
  @TempDir Path dir;

  private static final List<String> PLAN = List.of("plan", "--model", "llama3-8b", "--cluster",
      "2x8:h100-80gb", "--seq", "65536", "--global-batch", "16");

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Reference check: Llama 3 8B at 65,536 tokens on 16 H100s for Megatron-LM splits each
   * sequence; the plan file re-simulated with the other exchanges (the file's cpCommType
   * changed, everything else kept) is never faster than the exchange the search kept.
   */
  @Test
  void theKeptExchangeIsTheFastest() throws Exception {
    Path plan = dir.resolve("m.json");
    CliRun p = CliRun.of(PLAN, "--for", "megatron", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String text = Files.readString(plan);
    JsonNode stage = JSON.readTree(text).path("stages").get(0);
    assertThat(stage.path("contextParallel").asInt()).isGreaterThan(1);
    String kept = stage.path("cpCommType").asText();
    double best = iteration(plan);
    for (String other : List.of("p2p", "all_gather", "a2a")) {
      if (other.equals(kept)) {
        continue;
      }
      Path changed = dir.resolve(other + ".json");
      Files.writeString(changed, text.replace("\"cpCommType\" : \"" + kept + "\"",
          "\"cpCommType\" : \"" + other + "\""));
      CliRun s = CliRun.of("simulate", "--plan", changed.toString(), "--json");
      if (s.code() == 2) {
        continue;
      }
      assertThat(s.code()).as(s.err()).isIn(0, 3);
      assertThat(JSON.readTree(s.out()).path("iterationSeconds").asDouble()).as(other)
          .isGreaterThanOrEqualTo(best * (1 - 1e-9));
    }
  }

  /**
   * torchtitan all-gathers keys and values and has no ring: the search used to try the ring
   * alone and so never split sequences for it; it now plans the all-gather, and the plan exports.
   */
  @Test
  void torchtitanGetsItsAllGather() throws Exception {
    Path plan = dir.resolve("t.json");
    CliRun p = CliRun.of(PLAN, "--for", "torchtitan", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode stage = JSON.readTree(Files.readString(plan)).path("stages").get(0);
    assertThat(stage.path("contextParallel").asInt()).isGreaterThan(1);
    assertThat(stage.path("cpCommType").asText()).isEqualTo("all_gather");
    Path out = dir.resolve("t.py");
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan", "--out",
        out.toString());
    assertThat(e.code()).as(e.err()).isZero();
    assertThat(Files.readString(out)).contains("context_parallel_degree");
  }

  private static double iteration(Path plan) throws Exception {
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isIn(0, 3);
    return JSON.readTree(s.out()).path("iterationSeconds").asDouble();
  }
}
