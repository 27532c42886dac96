package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutated copies of a real saved plan (LLaMA2-70B on 128x8 H100: 17 stages, 15 of them 8x8 with 8
 * replicas, so microBatch 2 of a 16-sequence microbatch, and stages 8 and 16 4x8; stage 1 on
 * devices 64 to 127, stage 16 on 992 to 1023; 1,024 GPUs in all) are
 * refused by {@code simulate --plan} and {@code export --plan} in one line, exit 2, naming the
 * first violation by its JSON path; the plan itself is accepted.
 */
class PlanFileValidationCliTest {
  private static final Path PLAN =
      Path.of("core/src/test/resources/plans/llama2-70b-128x8-h100-80gb-ib-ndr400.json");
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @TempDir Path dir;

  /** One mutation and the path the refusal must name. */
  private record Case(String name, Consumer<ObjectNode> mutate, String path) {}

  private static ObjectNode stage(ObjectNode root, int k) {
    return (ObjectNode) root.get("stages").get(k);
  }

  private static Case stageField(int k, String field, Object value, String why) {
    return new Case("stages[" + k + "]." + field + " = " + value + " (" + why + ")", r -> {
      ObjectNode s = stage(r, k);
      put(s, field, value);
    }, "stages[" + k + "]." + field + ": ");
  }

  private static void put(ObjectNode o, String field, Object value) {
    if (value instanceof Integer i) {
      o.put(field, i);
    } else if (value instanceof Double d) {
      o.put(field, d);
    } else if (value instanceof String s) {
      o.put(field, s);
    } else {
      int[] p = (int[]) value;
      ArrayNode a = o.putArray(field);
      for (int x : p) {
        a.add(x);
      }
    }
  }

  private static List<Case> cases() {
    List<Case> c = new ArrayList<>();
    // Devices: stage 1 starts at 64; the cluster has 1,024 GPUs, devices 0 to 1023.
    c.add(stageField(1, "firstDevice", Integer.MAX_VALUE, "2^31-1 + 64 GPUs would wrap an int"));
    c.add(stageField(16, "firstDevice", 2000, "beyond device 1023"));
    c.add(stageField(1, "firstDevice", 0, "overlaps stage 0's devices 0..63"));
    c.add(stageField(1, "firstDevice", -1, "negative"));
    c.add(stageField(1, "firstDevice", 64.5, "not an integer"));
    c.add(stageField(1, "submesh", new int[] {1, 64}, "64 GPUs in a row on 8-GPU nodes"));
    // Per-stage micro batch: 16 sequences over 8 replicas is 2 each.
    for (Object v : new Object[] {0, -2, 2.5, "2", 4}) {
      c.add(stageField(1, "microBatch", v, "16 sequences over 8 replicas give 2"));
    }
    c.add(stageField(2, "recompute", "sometimes", "unknown recomputation"));
    c.add(stageField(0, "layouts", "magic", "unknown layouts"));
    c.add(stageField(3, "zeroStage", 4, "ZeRO has stages 0 to 3"));
    c.add(stageField(3, "zeroStage", "1", "a string"));
    // Layers: stage 1 covers 5..9, stage 2 10..14; 80 layers in all.
    c.add(stageField(2, "layers", new int[] {11, 14}, "a gap after layer 9"));
    c.add(stageField(2, "layers", new int[] {9, 14}, "layer 9 twice"));
    c.add(new Case("the last stage stops at layer 78", r -> {
      ArrayNode l = (ArrayNode) stage(r, 16).get("layers");
      l.set(1, l.get(1).intValue() - 1);
    }, "stages[16].layers: "));
    c.add(stageField(1, "logicalMesh", new int[] {4, 8}, "32 of the submesh's 64 GPUs"));
    c.add(stageField(1, "logicalMesh", new int[] {32, 2}, "16 sequences over 32 replicas"));
    // The top level.
    c.add(new Case("schedule zigzag", r -> r.put("schedule", "zigzag"), "schedule: "));
    // Named by the plan's own field, not as a --cluster the user never gave.
    c.add(new Case("cluster 8", r -> r.put("cluster", "8"), "cluster '8': "));
    // Every field the prices depend on is required: without it the plan was priced unfused.
    c.add(new Case("no attention", r -> r.remove("attention"), "field 'attention' is missing"));
    c.add(new Case("interleaved schedule with one virtual stage",
        r -> r.put("schedule", "interleaved-1f1b"), "schedule: "));
    c.add(new Case("virtualStages 2.5", r -> r.put("virtualStages", 2.5), "virtualStages: "));
    c.add(new Case("64 x 16 is 1,024, not 1,000", r -> r.put("globalBatch", 1000),
        "microbatches: "));
    c.add(new Case("globalBatch as a string", r -> r.put("globalBatch", "1024"), "globalBatch: "));
    c.add(new Case("microbatches 0", r -> r.put("microbatches", 0), "microbatches: "));
    c.add(new Case("gpus 1000 against 15 x 64 + 2 x 32 = 1,024", r -> r.put("gpus", 1000), "gpus: "));
    c.add(new Case("no stages", r -> r.putArray("stages"), "stages: "));
    c.add(new Case("family gpt5", r -> ((ObjectNode) r.get("model")).put("family", "gpt5"),
        "model.family: "));
    c.add(new Case("attention fast", r -> r.put("attention", "fast"), "attention: "));
    c.add(new Case("lossFusion as a string", r -> {
      ObjectNode o = r.putObject("overlaps");
      for (String f : List.of("gradReduce", "paramGather", "tensorComm", "gradAccumFusion")) {
        o.put(f, false);
      }
      o.put("fsdpPrefetch", true);
      o.put("lossFusion", "yes");
    }, "overlaps: "));
    // 129 nodes: the stages leave the 8 GPUs of the last node unused.
    c.add(new Case("a cluster larger than the stages",
        r -> r.put("cluster", "129x8:h100-80gb:ib-ndr400"), "gpus: "));
    return c;
  }

  /** Every mutation is refused by both commands, naming its path; the file is not touched. */
  @TestFactory
  Stream<DynamicTest> everyInconsistencyIsNamedByItsPath() throws Exception {
    String original = Files.readString(PLAN);
    // The real plan has 17 stages, all 1F1B on 8x8 submeshes.
    assertThat(MAPPER.readTree(original).get("stages")).hasSize(17);
    List<Case> all = cases();
    return Stream.iterate(0, i -> i < all.size(), i -> i + 1).map(i -> DynamicTest.dynamicTest(
        all.get(i).name(), () -> {
          Case c = all.get(i);
          ObjectNode root = (ObjectNode) MAPPER.readTree(original);
          c.mutate().accept(root);
          Path f = dir.resolve("plan" + i + ".json");
          String text = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root);
          Files.writeString(f, text);
          String prefix = "meshplan: error: " + f + ": " + c.path();
          CliRun sim = CliRun.of("simulate", "--plan", f.toString());
          sim.refusedInOneLine(ExitCodes.BAD_INPUT, prefix);
          assertThat(sim.err()).startsWith(prefix);
          CliRun ex = CliRun.of("export", "--to", "megatron", "--plan", f.toString());
          ex.refusedInOneLine(ExitCodes.BAD_INPUT, prefix);
          assertThat(Files.readString(f)).isEqualTo(text);
        }));
  }

  /** The plan as saved is accepted: it simulates, and fits (25 GiB of 76 GiB). */
  @Test
  void theSavedPlanIsAccepted() {
    CliRun sim = CliRun.of("simulate", "--plan", PLAN.toString());
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(sim.out()).contains("fits: stage ");
  }

  /** The plan's stages on a smaller cluster given by --cluster: a stage lies off it. */
  @Test
  void aSmallerClusterPutsAStageOffIt() {
    // 64x8 has devices 0 to 511; stage 8 (4x8, 32 GPUs) starts at 8 x 64 = 512.
    CliRun sim = CliRun.of("simulate", "--plan", PLAN.toString(), "--cluster",
        "64x8:h100-80gb:ib-ndr400");
    sim.refusedInOneLine(ExitCodes.BAD_INPUT, PLAN + ": stages[8].firstDevice: 512, so the"
        + " stage's 32 GPUs end at device 543, beyond the last device 511 of 64x8:h100-80gb");
  }
}
