package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.dp.ArrayStageCostTable;
import io.meshplan.interop.dp.StageDp;
import io.meshplan.interop.dp.StageDpProblem;
import io.meshplan.interop.dp.StageDpResult;
import io.meshplan.interop.dp.StageOption;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Requests that their arithmetic rules out are answered before any layer is priced ({@link
 * RequestBounds}): the planner is given layer prices that fail the test when asked for one.
 */
class RequestBoundsTest {

  /** Layer prices that must never be asked for. */
  private static final LayerCostModel NEVER = new LayerCostModel() {
    @Override
    public LayerCost cost(Kind kind, LayerSetting setting) {
      throw new AssertionError("a layer was priced: " + kind + " " + setting);
    }
  };

  private static PlanResult plan(ModelSpec m, String cluster, int globalBatch) {
    PlanRequest req = Requests.of(m.withWorkload(m.seq(), globalBatch), cluster, globalBatch,
        false);
    try (LocalExecutor one = new LocalExecutor(1)) {
      return new InterOpPlanner(NEVER, p -> { }, one).plan(req);
    }
  }

  /**
   * The request: opt-125m on 131,072 x 8 H100 with a global batch of 1,024. Its 12
   * layers make at most 12 stages; a stage's data-parallel replicas each take at least one of at
   * most 1,024 sequences, and its tensor-parallel size divides both the 8 GPUs of a node and the
   * 12 heads, at most 4: a stage has at most 4 x 1,024 = 4,096 GPUs, 12 of them 49,152, far from
   * 1,048,576. No layer is priced.
   */
  @Test
  void aClusterNoPipelineCoversIsAnsweredBeforeAnyLayerIsPriced() {
    PlanResult r = plan(Presets.get("opt-125m"), "131072x8:h100-80gb", 1024);
    assertThat(r).isInstanceOf(PlanResult.Infeasible.class);
    assertThat(((PlanResult.Infeasible) r).message()).isEqualTo("no pipeline of opt-125m covers"
        + " all 1048576 GPUs of 131072x8:h100-80gb:ib-ndr400 for a global batch of 1024: its 12"
        + " layers make at most 12 stages, and a stage takes at most 4096 GPUs (tensor-parallel"
        + " size 4 x one sequence per data-parallel replica), 49152 GPUs in all; use at most"
        + " 6144 nodes, or a larger global batch");
  }

  /**
   * GPT-1T's 1,008,038,758,400 parameters take at least 16 bytes each of weights, gradients and
   * Adam state, 1.61e13 bytes: 2.02e12 bytes (1.83 TiB) per GPU on 8 GPUs of 40 GB. No layer is
   * priced.
   */
  @Test
  void modelStateBeyondAllGpusIsAnsweredBeforeAnyLayerIsPriced() {
    PlanResult r = plan(Presets.get("gpt-1t"), "1x8:a100-40gb", 1024);
    assertThat(r).isInstanceOf(PlanResult.Infeasible.class);
    PlanResult.Infeasible inf = (PlanResult.Infeasible) r;
    // Beside it, one layer input of a 2,048-token sequence, 2048 x 25600 x 2 bytes over TP 8.
    assertThat(inf.neededBytesPerGpu()).isEqualTo(16.0 * 1_008_038_758_400L / 8
        + 2048.0 * 25600 * 2 / 8);
    assertThat(inf.message()).contains("its 1008038758400 parameters take at least 16 bytes"
        + " each, so even spread over all 8 GPUs they need 1.83TiB per GPU");
  }

  /**
   * LLaMA-3 70B with sequences of 2^24 tokens (ModelSpec's longest) on 2 GPUs: a stage keeps at
   * least one layer input of one sequence, 2^24 x 8,192 x 2 bytes, split at most 2 ways (tensor
   * and context parallelism on the cluster's 2 GPUs): 2^37 bytes, 128 GiB per GPU, above the 80
   * GB of an H100. Context parallelism could split it further on more GPUs. No layer is priced.
   */
  @Test
  void aSequenceWhoseLayerInputAloneExceedsTheMemoryIsAnsweredAtOnce() {
    ModelSpec m = Presets.get("llama3-70b").withSequence(1 << 24);
    PlanRequest req = new PlanRequest(m, io.meshplan.cluster.ClusterSpec.parse(
        "1x2:h100-80gb"), 1024, 0, 80e9, io.meshplan.planner.Pricing.catalog(), 2,
        io.meshplan.model.Overlaps.NONE, true, io.meshplan.model.Attention.FLASH);
    PlanResult r;
    try (LocalExecutor one = new LocalExecutor(1)) {
      r = new InterOpPlanner(NEVER, p -> { }, one).plan(req);
    }
    assertThat(((PlanResult.Infeasible) r).message()).contains("one sequence's input to a layer"
        + " takes 128GiB per GPU even split over 2 GPUs by tensor and context parallelism",
        "train a shorter sequence, or use more GPUs");
  }

  /**
   * The cover test drops exactly the microbatch sizes whose stage DP has no partition at any
   * memory: 300 seeded small requests (1 to 6 layers of LLaMA2-7B, 1 to 4 nodes of 1, 2, 4 or 8
   * GPUs, global batches of 1 to 64), each size compared with a stage DP over a table that has an
   * option wherever {@link MicrobatchSearch} would have one (a submesh with some logical mesh
   * whose replicas share the microbatch) and unlimited memory.
   */
  @Test
  void coverAgreesWithTheStageDpOnSeededRequests() {
    int[] perNode = {1, 2, 4, 8};
    int dropped = 0;
    int kept = 0;
    for (int seed = 0; seed < 300; seed++) {
      Random rnd = new Random(seed);
      int layers = 1 + rnd.nextInt(6);
      int nodes = 1 + rnd.nextInt(4);
      int m = perNode[rnd.nextInt(perNode.length)];
      int gb = 1 + rnd.nextInt(64);
      ModelSpec model = Presets.get("llama2-7b").withLayers(layers);
      PlanRequest req = Requests.of(model.withWorkload(model.seq(), gb), nodes + "x" + m
          + ":a100-80gb", gb, false);
      SearchSpace space = SearchSpace.of(req);
      List<Integer> sizes;
      try {
        sizes = SearchRules.microbatchSizes(req, space.shapes());
      } catch (io.meshplan.util.InputException e) {
        continue;
      }
      List<Integer> cover = RequestBounds.coverable(req, space, sizes);
      for (int g : sizes) {
        boolean dp = stageDpFinds(req, space, g);
        assertThat(cover.contains(g)).as("seed " + seed + ", microbatch " + g).isEqualTo(dp);
        if (dp) {
          kept++;
        } else {
          dropped++;
        }
      }
    }
    assertThat(kept).isGreaterThan(100);
    assertThat(dropped).isGreaterThan(20);
  }

  private static boolean stageDpFinds(PlanRequest req, SearchSpace space, int g) {
    List<SubmeshShape> shapes = space.shapes();
    int layers = req.model().layers();
    ArrayStageCostTable.Builder b = ArrayStageCostTable.builder(layers, shapes.size());
    for (int j = 0; j < shapes.size(); j++) {
      boolean usable = false;
      for (int t : SearchRules.tensorDegrees(req, shapes.get(j).devices())) {
        usable |= !SearchRules.stageSettings(req, shapes.get(j).devices() / t, t, g).isEmpty();
      }
      for (int k = 0; usable && k < layers; k++) {
        for (int i = k; i < layers; i++) {
          b.add(k, i, j, new StageOption(1, 0, 0, 0));
        }
      }
    }
    StageDpProblem p = new StageDpProblem(shapes, req.cluster().nodes(),
        req.cluster().gpusPerNode(), b.build(), 1, req.globalBatch() / g);
    return new StageDp(p).solve() instanceof StageDpResult.Feasible;
  }
}
