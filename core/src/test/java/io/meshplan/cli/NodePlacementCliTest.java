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
 * Every stage sits inside one node or on whole nodes, as it is priced (issue #36, section 2): the
 * planner places the submeshes so, its plans re-simulate to the figures they print, and a plan
 * file or a Megatron-LM configuration whose stage would cross a node is refused in one line.
 */
class NodePlacementCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;

  /**
   * The issue's plan: llama3-70b on 4 x 8 H100, every stage keeping its activations (as the
   * issue's plan did; with recomputation searched the planner now recomputes the first blocks of
   * some stages on nine stages of 2 and 4 GPUs, 1.7% faster, which places trivially), at the
   * issue's 4,096 tokens. (While NVLink was priced at its datasheet rate and Megatron-LM's layouts
   * as Megatron-LM runs them, these stage shapes came at 2,048 tokens instead; at the rate NCCL
   * reaches they come at 4,096 again.)
   */
  private static Path issuePlan;

  @BeforeAll
  static void planTheIssuesExample() {
    issuePlan = dir.resolve("llama3-70b-4x8.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-70b", "--seq", "4096", "--cluster",
        "4x8:h100-80gb:ib-ndr400", "--prices", "kernel", "--recompute", "none", "--out",
        issuePlan.toString());
    assertThat(p.code()).as(p.err()).isZero();
  }

  /**
   * No submesh of fewer than M GPUs spans two nodes, a whole-node submesh starts on a node
   * boundary, and {@code simulate --plan} of the saved plan gives the iteration it states.
   */
  private static void assertPlacedAsPriced(Path plan) throws Exception {
    JsonNode root = JSON.readTree(plan.toFile());
    int m = Integer.parseInt(root.get("cluster").asText().split("[x:]")[1]);
    for (JsonNode s : root.get("stages")) {
      int n = s.get("submesh").get(0).asInt();
      int g = s.get("submesh").get(1).asInt();
      int first = s.get("firstDevice").asInt();
      String where = plan.getFileName() + " stage " + s;
      if (g < m) {
        assertThat(n).as(where).isEqualTo(1);
        assertThat(first / m).as(where).isEqualTo((first + g - 1) / m);
      } else {
        assertThat(g).as(where).isEqualTo(m);
        assertThat(first % m).as(where).isZero();
      }
    }
    CliRun sim = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(JSON.readTree(sim.out()).get("iterationSeconds").asDouble())
        .isEqualTo(root.get("iterationSeconds").asDouble());
  }

  /**
   * The issue's plan, priced with Megatron-LM's layouts as Megatron-LM runs them, has stages of
   * 4, 8, 8, 4, 4 and 4 GPUs. In pipeline order stage 1 would take devices 4-11, half of node 0
   * and half of node 1; placed largest first, stages 1 and 2 take nodes 0 and 1 (0-7, 8-15) and
   * the 4-GPU stages share nodes 2 and 3 (16-19, 20-23, 24-27, 28-31).
   */
  @Test
  void theIssuesPlanKeepsEveryStageInsideNodes() throws Exception {
    JsonNode root = JSON.readTree(issuePlan.toFile());
    StringBuilder shapes = new StringBuilder();
    for (JsonNode s : root.get("stages")) {
      shapes.append(s.get("submesh")).append('@').append(s.get("firstDevice")).append(' ');
    }
    assertThat(shapes.toString().trim()).isEqualTo(
        "[1,4]@16 [1,8]@0 [1,8]@8 [1,4]@20 [1,4]@24 [1,4]@28");
    assertPlacedAsPriced(issuePlan);
  }

  /**
   * The same plan edited back to the crossing placement, in pipeline order (stage 0 on 0-3,
   * stage 1 on 4-11, stage 2 on 12-19), is refused by {@code simulate --plan} and {@code export
   * --plan} in one line, exit 2.
   */
  @Test
  void aHandEditedStageAcrossNodesIsRefused() throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(issuePlan.toFile());
    ((ObjectNode) root.get("stages").get(0)).put("firstDevice", 0);
    ((ObjectNode) root.get("stages").get(1)).put("firstDevice", 4);
    ((ObjectNode) root.get("stages").get(2)).put("firstDevice", 12);
    Path edited = dir.resolve("crossing.json");
    Files.writeString(edited, JSON.writeValueAsString(root));
    String why = "stages[1].firstDevice: 4 puts the stage's 1x8 submesh on devices 4-11,"
        + " across nodes 0 to 1 of 4x8:h100-80gb:ib-ndr400";
    CliRun.of("simulate", "--plan", edited.toString())
        .refusedInOneLine(ExitCodes.BAD_INPUT, why);
    CliRun.of("export", "--plan", edited.toString(), "--to", "megatron")
        .refusedInOneLine(ExitCodes.BAD_INPUT, why);
    // A 4-GPU stage moved to devices 6-9 crosses too (and comes first in the check).
    ((ObjectNode) root.get("stages").get(0)).put("firstDevice", 6);
    Files.writeString(edited, JSON.writeValueAsString(root));
    CliRun.of("simulate", "--plan", edited.toString())
        .refusedInOneLine(ExitCodes.BAD_INPUT,
        "stages[0].firstDevice: 6 puts the stage's 1x4 submesh on devices 6-9, across nodes"
            + " 0 to 1");
  }

  /**
   * Plans on nodes of 6 and 4 GPUs, and a Megatron-LM grid plan on 3 x 8 (whose 6-GPU stages
   * once crossed nodes 0 and 1), keep every stage inside nodes and re-simulate to their figures.
   */
  @Test
  void plansOnOtherNodeSizesKeepStagesInsideNodes() throws Exception {
    String[][] runs = {
        {"--cluster", "3x6:a100-80gb", "--global-batch", "64"},
        {"--cluster", "3x4:h100-80gb", "--global-batch", "64"},
        {"--cluster", "3x8:h100-80gb", "--global-batch", "24", "--megatron-grid"}};
    int k = 0;
    for (String[] run : runs) {
      Path out = dir.resolve("plan" + k++ + ".json");
      String[] args = new String[run.length + 7];
      System.arraycopy(new String[] {"plan", "--model", "llama2-7b", "--layers", "6", "--out",
          out.toString()}, 0, args, 0, 7);
      System.arraycopy(run, 0, args, 7, run.length);
      CliRun p = CliRun.of(args);
      assertThat(p.code()).as(p.err()).isZero();
      assertPlacedAsPriced(out);
    }
  }

  /**
   * Megatron-LM gives pipeline stage k the ranks k*g to (k+1)*g - 1 of g = TP x CP x DP: with
   * g = 4 on nodes of 6, stage 1 takes devices 4-7, across nodes 0 and 1; with g = 12 on nodes
   * of 8, stage 0 takes devices 0-11. Both are refused in one line.
   */
  @Test
  void megatronStagesAcrossNodesAreRefused() {
    CliRun.of("simulate", "--model", "llama2-7b", "--layers", "6", "--cluster", "2x6:a100-80gb",
        "--tp", "2", "--pp", "3", "--dp", "2", "--micro-batch", "1", "--global-batch", "8")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "pipeline stage 1's 4 GPUs (tensor x context x"
            + " data-parallel size) take devices 4-7, across nodes 0 to 1 of 2x6:a100-80gb");
    CliRun.of("simulate", "--model", "llama2-7b", "--cluster", "3x8:h100-80gb", "--tp", "4",
        "--pp", "2", "--dp", "3", "--micro-batch", "1", "--global-batch", "24")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "pipeline stage 0's 12 GPUs");
  }
}
