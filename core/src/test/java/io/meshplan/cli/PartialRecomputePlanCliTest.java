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
 * A plan that recomputes only the first blocks of its stages (Megatron-LM's {@code
 * --recompute-method block --recompute-num-layers}): planned, saved, simulated again and
 * exported; and plan files whose count is not one Megatron-LM could run are refused in one line.
 */
class PartialRecomputePlanCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;

  private static Path plan;
  private static CliRun planned;

  /**
   * LLaMA2-7B at 4,096 tokens on 8 A100s with 18 GiB each, for Megatron-LM: two stages of 16
   * blocks at TP 4 keeping every activation need 18.38 GiB on the first (the plan at 20 GiB),
   * recomputing all 16 blocks fits, and the fewest that fit are the first 3 of each stage.
   */
  @BeforeAll
  static void planIt() {
    plan = dir.resolve("plan.json");
    planned = CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-40gb", "--seq",
        "4096", "--global-batch", "32", "--memory", "18GiB", "--schedule", "1f1b", "--for",
        "megatron", "--quiet", "--out", plan.toString());
    assertThat(planned.code()).as(planned.err()).isZero();
  }

  @Test
  void thePlanRecomputesTheFirstBlocksAndExportsThemToMegatron() throws Exception {
    assertThat(planned.out()).contains(" full 3/16 ",
        " full K/N: the first K of the stage's N layers recomputed, the rest keeping their "
            + "activations)");
    JsonNode root = JSON.readTree(plan.toFile());
    JsonNode s0 = root.get("stages").get(0);
    assertThat(s0.get("recompute").asText()).isEqualTo("full");
    assertThat(s0.get("recomputeLayers").asInt()).isEqualTo(3);
    CliRun sim = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(JSON.readTree(sim.out()).get("iterationSeconds").asDouble())
        .isEqualTo(root.get("iterationSeconds").asDouble());
    Path args = dir.resolve("megatron.sh");
    CliRun x = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron", "--out",
        args.toString());
    assertThat(x.code()).as(x.err()).isZero();
    assertThat(Files.readString(args)).contains("--recompute-granularity full",
        "--recompute-method block", "--recompute-num-layers 3");
  }

  /** A count Megatron-LM could not run is refused naming the field; nothing is simulated. */
  @Test
  void aCountThatIsNotPartialFullRecomputationIsRefusedInOneLine() throws Exception {
    String[][] edits = {
        {"16", "full", "stages[0].recomputeLayers: 16 must be fewer than the stage's 16 blocks"},
        {"0", "full", "stages[0].recomputeLayers: must be 1 or more, got 0"},
        {"\"five\"", "full", "stages[0].recomputeLayers: must be a 32-bit integer, got \"five\""},
        {"5", "none", "stages[0].recomputeLayers: 5 recomputed blocks need recompute \"full\", "
            + "got \"none\""}};
    for (String[] e : edits) {
      ObjectNode root = (ObjectNode) JSON.readTree(plan.toFile());
      ObjectNode s0 = (ObjectNode) root.get("stages").get(0);
      s0.set("recomputeLayers", JSON.readTree(e[0]));
      s0.put("recompute", e[1]);
      Path edited = dir.resolve("edited.json");
      Files.writeString(edited, JSON.writeValueAsString(root));
      CliRun.of("simulate", "--plan", edited.toString())
          .refusedInOneLine(ExitCodes.BAD_INPUT, e[2]);
      CliRun.of("export", "--plan", edited.toString(), "--to", "megatron")
          .refusedInOneLine(ExitCodes.BAD_INPUT, e[2]);
    }
  }
}
