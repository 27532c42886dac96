package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.plan.StagePlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code export --to alpa}: the program's {@code ManualStageOption} against the checks Alpa
 * makes of one (Alpa at b8078a9, {@code alpa/pipeline_parallel/stage_construction.py}: {@code
 * cluster_layers_and_slice_mesh}, {@code get_sliced_virtual_submeshes}), restated here apart
 * from {@link AlpaStages}: as many stages as submeshes, logical shapes and option dicts; layer ids
 * 0, 1, 2, ... in order, covering the marked layers; each logical shape multiplying to its
 * submesh's GPUs; the submeshes covering the cluster, placed largest first, (1, m) inside a node
 * or (n, M) on whole nodes. And what Alpa cannot run, refused in one sentence per feature.
 */
class AlpaExportTest {
  private static final Pattern LIST = Pattern.compile("(?m)^([A-Z_]+) = \\[\\n((?:    .*\\n)*)\\]");
  private static final Pattern INTS = Pattern.compile("-?\\d+");

  @TempDir Path dir;

  /** A small LLaMA-style model (fp16, for V100s; bf16 elsewhere). */
  private static ModelSpec model(int layers, DType dtype) {
    return new ModelSpec("tiny-llama", ModelSpec.Family.LLAMA, layers, 1024, 16, 8, 2816, 32000,
        1024, 1, dtype);
  }

  /** A stage on {@code n x m} GPUs at {@code firstDevice}, as the planner writes one. */
  private static StagePlan stage(int first, int last, int n, int m, int firstDevice, int dp,
      int tp, Recompute r, boolean sp, int zero, boolean megatron, int cp) {
    return new StagePlan(first, last, n, m, firstDevice, dp, tp, r, sp, zero, megatron, 0.01,
        0.02, 1e9, List.of(), Optional.empty(), 1, 1, cp, false);
  }

  private static PipelinePlan plan(ModelSpec m, ClusterSpec c, List<StagePlan> stages,
      int microbatchSequences, int virtual, Attention a, Overlaps o) {
    // Four microbatches of the given sequences make the global batch.
    return new PipelinePlan(new PlanSource.Preset(m, a, o), c.toShortString(),
        4 * microbatchSequences, microbatchSequences, 4, virtual, stages,
        new PipelinePlan.Prediction(1.25, 1000, 50, 0.3, 2e10));
  }

  /**
   * Two stages of 4 GPUs on 2 x 4 V100s: blocks 0-2 on a 2 x 2 logical mesh, block 3 on 4 x 1.
   * Alpa places equal sizes later stage first, so stage 1 takes GPUs 0-3 and stage 0 GPUs 4-7.
   */
  private static PipelinePlan twoStages() {
    ClusterSpec c = ClusterSpec.parse("2x4:v100-32gb");
    return plan(model(4, DType.F16), c, List.of(
        stage(0, 2, 1, 4, 0, 2, 2, Recompute.FULL, false, 1, false, 1),
        stage(3, 3, 1, 4, 4, 4, 1, Recompute.SELECTIVE, false, 0, false, 1)), 4, 1,
        Attention.UNFUSED, Overlaps.DEFAULTS);
  }

  @Test
  void aTwoStagePlanIsWrittenStageByStage() throws Exception {
    PipelinePlan p = twoStages();
    ClusterSpec c = ClusterSpec.parse("2x4:v100-32gb");
    ExportResult r = new Exporter().export(ExportTarget.ALPA, p, c);
    assertThat(r).isInstanceOf(ExportResult.PlanExported.class);
    String text = ((ExportResult.PlanExported) r).text();
    assertThat(text).contains("FORWARD_STAGE_LAYER_IDS = [\n    [0, 1, 2],\n    [3],\n]\n",
        "SUBMESH_PHYSICAL_SHAPES = [\n    [1, 4],\n    [1, 4],\n]\n",
        "SUBMESH_LOGICAL_SHAPES = [\n    [2, 2],\n    [4, 1],\n]\n",
        "{\"force_batch_dim_to_mesh_dim\": 0, \"prefer_reduce_scatter\": True},\n"
            + "    {\"force_batch_dim_to_mesh_dim\": 0, \"prefer_reduce_scatter\": False},\n",
        "STAGE_RECOMPUTE = [\n    \"full\",\n    \"selective\",\n]\n",
        "NUM_MICRO_BATCHES = 4\n", "GLOBAL_BATCH = 16\n", "PRECISION = \"fp16\"\n",
        "#   stage 0: blocks 0-2 on GPUs 4-7 (1x4)", "#   stage 1: blocks 3-3 on GPUs 0-3 (1x4)",
        "alpa.init(cluster=\"ray\", num_nodes=NUM_NODES, num_devices_per_node=GPUS_PER_NODE)",
        "layer_option=\"manual\"", "alpa.mark_pipeline_boundary()");
    pythonChecks(text);
  }

  /**
   * A stage recomputing only its first block of three (the plan's {@code recomputeLayers}): the
   * program wraps that block alone in {@code remat}, each block's own mode listed.
   */
  @Test
  void aStageRecomputingItsFirstBlocksListsEachBlocksMode() throws Exception {
    ClusterSpec c = ClusterSpec.parse("2x4:v100-32gb");
    StagePlan first = stage(0, 2, 1, 4, 0, 2, 2, Recompute.FULL, false, 1, false, 1);
    StagePlan partial = new StagePlan(0, 2, 1, 4, 0, 2, 2, Recompute.FULL, false, 1, false,
        0.01, 0.02, 1e9, List.of(), Optional.empty(), 1, 1, 1,
        io.meshplan.plan.ContextExchange.P2P, 0, 1);
    assertThat(first.recomputeLayers()).isZero();
    PipelinePlan p = plan(model(4, DType.F16), c, List.of(partial,
        stage(3, 3, 1, 4, 4, 4, 1, Recompute.SELECTIVE, false, 0, false, 1)), 4, 1,
        Attention.UNFUSED, Overlaps.DEFAULTS);
    ExportResult r = new Exporter().export(ExportTarget.ALPA, p, c);
    String text = ((ExportResult.PlanExported) r).text();
    assertThat(text).contains("STAGE_RECOMPUTE = [\n    \"full\",\n    \"selective\",\n]\n",
        "LAYER_RECOMPUTE = [\n    \"full\",\n    \"none\",\n    \"none\",\n"
            + "    \"selective\",\n]\n",
        "#   stage 0: blocks 0-2 on GPUs 4-7 (1x4), logical mesh 2x2, recompute full (the first 1"
            + " blocks), ZeRO-1");
    pythonChecks(text);
  }

  @Test
  void seededRandomPlansGiveStageOptionsAlpaAccepts() throws Exception {
    Random rnd = new Random(36);
    for (int k = 0; k < 60; k++) {
      int perNode = new int[] {2, 4, 8}[rnd.nextInt(3)];
      int nodes = 1 + rnd.nextInt(6);
      ClusterSpec c = ClusterSpec.parse(nodes + "x" + perNode
          + (perNode == 4 ? ":v100-32gb" : ":a100-80gb"));
      List<int[]> meshes = randomSubmeshes(rnd, nodes, perNode);
      int layers = meshes.size() + rnd.nextInt(12);
      ModelSpec m = model(layers, perNode == 4 ? DType.F16 : DType.BF16);
      List<StagePlan> stages = randomStages(rnd, meshes, layers, perNode);
      int sequences = 1;
      for (StagePlan s : stages) {
        sequences = lcm(sequences, s.dataParallel());
      }
      PipelinePlan p = plan(m, c, stages, sequences, 1, Attention.UNFUSED, Overlaps.DEFAULTS);
      AlpaPipeshard w = new AlpaPipeshard();
      assertThat(w.missing(p, c)).as("case " + k).isEmpty();
      String text = w.write(p, c);
      checkStageOption(text, layers, nodes, perNode, "case " + k);
      if (k < 3) {
        pythonChecks(text);
      }
    }
  }

  private static int lcm(int a, int b) {
    return a / java.math.BigInteger.valueOf(a).gcd(java.math.BigInteger.valueOf(b)).intValue()
        * b;
  }

  /** Alpa's assertions, restated apart from {@link AlpaStages}, on the program's literals. */
  private static void checkStageOption(String text, int layers, int nodes, int perNode,
      String as) {
    List<List<Integer>> ids = lists(text, "FORWARD_STAGE_LAYER_IDS");
    List<List<Integer>> physical = lists(text, "SUBMESH_PHYSICAL_SHAPES");
    List<List<Integer>> logical = lists(text, "SUBMESH_LOGICAL_SHAPES");
    List<List<Integer>> options = lists(text, "SUBMESH_AUTOSHARDING_OPTION_DICTS");
    assertThat(List.of(physical.size(), logical.size(), options.size())).as(as)
        .containsOnly(ids.size());
    int next = 0;
    for (List<Integer> stage : ids) {
      for (int id : stage) {
        assertThat(id).as(as).isEqualTo(next++);
      }
    }
    assertThat(next).as(as).isEqualTo(layers);
    long devices = 0;
    for (int i = 0; i < ids.size(); i++) {
      int n = physical.get(i).get(0);
      int g = physical.get(i).get(1);
      assertThat(logical.get(i).get(0) * logical.get(i).get(1)).as(as).isEqualTo(n * g);
      // (1, m) with m a power of two below a node, or (n, M): whole nodes.
      assertThat(g == perNode || n == 1 && Integer.bitCount(g) == 1 && g < perNode).as(as)
          .isTrue();
      devices += (long) n * g;
    }
    assertThat(devices).as(as).isEqualTo((long) nodes * perNode);
    // Largest first, later stage first among equals: each fits where the last one left off.
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < physical.size(); i++) {
      order.add(i);
    }
    order.sort((a, b) -> {
      int sa = physical.get(a).get(0) * physical.get(a).get(1);
      int sb = physical.get(b).get(0) * physical.get(b).get(1);
      return sa != sb ? Integer.compare(sb, sa) : Integer.compare(b, a);
    });
    int used = 0;
    for (int i : order) {
      int n = physical.get(i).get(0);
      int g = physical.get(i).get(1);
      if (g == perNode) {
        assertThat(used % perNode).as(as + ": whole nodes start a node").isZero();
      } else {
        assertThat(used % perNode + g).as(as + ": a part stays in its node")
            .isLessThanOrEqualTo(perNode);
      }
      used += n * g;
    }
  }

  /** The integers of each entry of a list literal, one entry per line. */
  private static List<List<Integer>> lists(String text, String name) {
    Matcher lm = LIST.matcher(text);
    while (lm.find()) {
      if (lm.group(1).equals(name)) {
        List<List<Integer>> out = new ArrayList<>();
        for (String line : lm.group(2).split("\n")) {
          List<Integer> ints = new ArrayList<>();
          Matcher im = INTS.matcher(line);
          while (im.find()) {
            ints.add(Integer.parseInt(im.group()));
          }
          out.add(ints);
        }
        return out;
      }
    }
    throw new AssertionError("no list " + name);
  }

  /** Submesh shapes that tile {@code nodes x perNode}: whole-node runs and node splits. */
  private static List<int[]> randomSubmeshes(Random rnd, int nodes, int perNode) {
    List<int[]> out = new ArrayList<>();
    int left = nodes;
    while (left > 0) {
      if (rnd.nextBoolean()) {
        int n = 1 + rnd.nextInt(left);
        out.add(new int[] {n, perNode});
        left -= n;
      } else {
        splitNode(rnd, perNode, out);
        left--;
      }
    }
    java.util.Collections.shuffle(out, rnd);
    return out;
  }

  /** A node split into halves, each again at random: powers of two that sum to a node. */
  private static void splitNode(Random rnd, int size, List<int[]> out) {
    if (size == 1 || rnd.nextInt(3) == 0) {
      out.add(new int[] {1, size});
      return;
    }
    splitNode(rnd, size / 2, out);
    splitNode(rnd, size / 2, out);
  }

  /** Stages on the meshes in order, layers split at random, each its own setting. */
  private static List<StagePlan> randomStages(Random rnd, List<int[]> meshes, int layers,
      int perNode) {
    int[] counts = new int[meshes.size()];
    java.util.Arrays.fill(counts, 1);
    for (int extra = layers - meshes.size(); extra > 0; extra--) {
      counts[rnd.nextInt(counts.length)]++;
    }
    List<StagePlan> out = new ArrayList<>();
    int first = 0;
    int device = 0;
    Recompute[] modes = {Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL};
    for (int i = 0; i < meshes.size(); i++) {
      int[] sh = meshes.get(i);
      int gpus = sh[0] * sh[1];
      int tp = 1 << rnd.nextInt(Integer.numberOfTrailingZeros(Math.min(gpus, perNode)) + 1);
      out.add(stage(first, first + counts[i] - 1, sh[0], sh[1], device, gpus / tp, tp,
          modes[rnd.nextInt(3)], false, gpus / tp > 1 ? rnd.nextInt(2) : 0, false, 1));
      first += counts[i];
      device += gpus;
    }
    return out;
  }

  @Test
  void theRestatedSlicingRefusesWhatAlpaRefuses() {
    // Six GPUs a node: Alpa places 4 then 4, and the second 4 does not fit the 2 left.
    List<AlpaStages.Stage> sixes = List.of(
        new AlpaStages.Stage(0, 0, 1, 4, 4, 1, Recompute.NONE, 0),
        new AlpaStages.Stage(1, 1, 1, 4, 4, 1, Recompute.NONE, 0),
        new AlpaStages.Stage(2, 2, 1, 2, 2, 1, Recompute.NONE, 0),
        new AlpaStages.Stage(3, 3, 1, 2, 2, 1, Recompute.NONE, 0));
    assertThat(AlpaStages.check(sixes, 4, 2, 6)).get().asString()
        .contains("largest first", "stage 0's 1x4 submesh does not fit what is left of one node");
    // Layer ids must run on: stage 1 starting at 2 skips layer 1.
    List<AlpaStages.Stage> gap = List.of(
        new AlpaStages.Stage(0, 0, 1, 4, 4, 1, Recompute.NONE, 0),
        new AlpaStages.Stage(2, 3, 1, 4, 4, 1, Recompute.NONE, 0));
    assertThat(AlpaStages.check(gap, 4, 2, 4)).get().asString()
        .contains("stage 1 starts at layer 2, not 1");
    // A 3 x 1 logical mesh on 4 GPUs.
    List<AlpaStages.Stage> logical = List.of(
        new AlpaStages.Stage(0, 3, 1, 4, 3, 1, Recompute.NONE, 0));
    assertThat(AlpaStages.check(logical, 4, 1, 4)).get().asString()
        .contains("logical mesh 3x1 does not multiply to its submesh's 4 GPUs");
    // 4 GPUs of an 8-GPU cluster.
    List<AlpaStages.Stage> half = List.of(
        new AlpaStages.Stage(0, 3, 1, 4, 4, 1, Recompute.NONE, 0));
    assertThat(AlpaStages.check(half, 4, 2, 4)).get().asString()
        .contains("the submeshes hold 4 GPUs, the cluster 8");
    // Layers 0-2 of a 4-layer model.
    assertThat(AlpaStages.check(List.of(new AlpaStages.Stage(0, 2, 2, 4, 8, 1, Recompute.NONE,
        0)), 4, 2, 4)).get().asString().contains("hold 3 layers of the 4 marked");
  }

  @Test
  void whatAlpaCannotRunIsRefusedInOneSentenceByFeature() {
    ClusterSpec c = ClusterSpec.parse("2x4:v100-32gb");
    ModelSpec m = model(4, DType.F16);
    AlpaPipeshard w = new AlpaPipeshard();
    record Case(StagePlan second, String says) {}
    List<Case> cases = List.of(
        new Case(stage(3, 3, 1, 4, 4, 2, 2, Recompute.NONE, true, 0, false, 1),
            "splits norms and residuals by sequence"),
        new Case(stage(3, 3, 1, 4, 4, 2, 2, Recompute.NONE, false, 0, true, 1),
            "fixes Megatron-LM's column/row split"),
        new Case(stage(3, 3, 1, 4, 4, 4, 1, Recompute.NONE, false, 2, false, 1),
            "ZeRO-2's reduce-scatter every microbatch"),
        new Case(stage(3, 3, 1, 4, 4, 4, 1, Recompute.NONE, false, 3, false, 1),
            "force_zero_stage_3"),
        new Case(stage(3, 3, 1, 4, 4, 2, 1, Recompute.NONE, false, 0, false, 2),
            "no context parallelism"),
        new Case(stage(3, 3, 1, 4, 4, 4, 1, Recompute.OP, false, 0, false, 1),
            "per-op policy"));
    StagePlan first = stage(0, 2, 1, 4, 0, 4, 1, Recompute.NONE, false, 0, false, 1);
    for (Case k : cases) {
      PipelinePlan p = plan(m, c, List.of(first, k.second()), 4, 1, Attention.UNFUSED,
          Overlaps.DEFAULTS);
      assertThat(w.missing(p, c)).as(k.says()).get().asString().contains("stage 1", k.says());
    }
    List<StagePlan> two = List.of(first, stage(3, 3, 1, 4, 4, 4, 1, Recompute.NONE, false, 0,
        false, 1));
    assertThat(w.missing(plan(m, c, two, 4, 1, Attention.FLASH, Overlaps.DEFAULTS), c)).get()
        .asString().contains("no fused (FlashAttention) kernel");
    assertThat(w.missing(plan(m, c, two, 4, 1, Attention.UNFUSED,
        Overlaps.DEFAULTS.withGradReduce(true)), c)).get().asString()
        .contains("reduces gradients after the last microbatch", "--overlap-grad-reduce");
    assertThat(w.missing(plan(m, c, List.of(
        stage(0, 0, 1, 4, 0, 4, 1, Recompute.NONE, false, 0, false, 1),
        stage(1, 1, 1, 4, 4, 4, 1, Recompute.NONE, false, 0, false, 1),
        stage(2, 2, 1, 4, 0, 4, 1, Recompute.NONE, false, 0, false, 1),
        stage(3, 3, 1, 4, 4, 4, 1, Recompute.NONE, false, 0, false, 1)), 4, 2,
        Attention.UNFUSED, Overlaps.DEFAULTS), c)).get().asString()
        .contains("no interleaved schedule");
    ModelSpec mixtral = Presets.get("mixtral-8x7b");
    assertThat(AlpaPipeshard.missingJob(mixtral, Attention.UNFUSED, Overlaps.DEFAULTS)).get()
        .asString().contains("a mixture of 8 experts");
    ModelSpec fp8 = Presets.get("llama3-8b").withTraining(1, io.meshplan.model.Fp8Training.RECIPE);
    assertThat(AlpaPipeshard.missingJob(fp8, Attention.UNFUSED, Overlaps.DEFAULTS)).get()
        .asString().contains("no FP8 training");
  }

  @Test
  void aConfigurationFromFlagsIsWrittenAsEqualStagesAndItsNearestDropsWhatAlpaLacks() {
    ClusterSpec c = ClusterSpec.parse("2x8:a100-80gb");
    ModelSpec m = model(8, DType.BF16);
    // tp 2 x pp 2 x dp 4: two stages of 8 GPUs, each a whole node on a 4 x 2 logical mesh.
    ParallelConfig cfg = new ParallelConfig(2, 2, 4, 1, 2, 64, Recompute.FULL, false, 1);
    ExportResult r = new Exporter().export(ExportTarget.ALPA,
        new ExportInput(m, c, cfg, Attention.UNFUSED));
    String text = ((ExportResult.Exported) r).text();
    assertThat(lists(text, "SUBMESH_PHYSICAL_SHAPES")).containsExactly(List.of(1, 8),
        List.of(1, 8));
    assertThat(lists(text, "SUBMESH_LOGICAL_SHAPES")).containsExactly(List.of(4, 2),
        List.of(4, 2));
    assertThat(lists(text, "FORWARD_STAGE_LAYER_IDS")).containsExactly(List.of(0, 1, 2, 3),
        List.of(4, 5, 6, 7));
    // 64 sequences over micro batch 2 x dp 4 are 8 microbatches.
    assertThat(text).contains("NUM_MICRO_BATCHES = 8\n");
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) new Exporter().export(
        ExportTarget.ALPA, new ExportInput(m, c, new ParallelConfig(2, 2, 4, 1, 2, 64,
            Recompute.FULL, true, 3), Attention.FLASH));
    assertThat(n.missing()).contains("no fused (FlashAttention) kernel");
    assertThat(n.nearest().orElseThrow().config()).isEqualTo(cfg);
    assertThat(n.nearest().orElseThrow().attention()).isEqualTo(Attention.UNFUSED);
  }

  /**
   * Python loads the program against signature stand-ins of Alpa at b8078a9 and checks Alpa's
   * assertions ({@code src/test/resources/alpa/check_program.py}), where a python3 is on the PATH.
   */
  private void pythonChecks(String text) throws Exception {
    Path program = dir.resolve("meshplan_alpa.py");
    Files.writeString(program, text);
    Path res = Path.of(AlpaExportTest.class.getResource("/alpa").toURI());
    ProcessBuilder pb = new ProcessBuilder("python3", "-B", res.resolve("check_program.py")
        .toString(), program.toString()).redirectErrorStream(true);
    pb.environment().put("PYTHONPATH", res.resolve("stubs").toString());
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      Assumptions.abort("no python3 to load the program: " + e.getMessage());
      return;
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).isEqualTo("ok\n");
  }
}
