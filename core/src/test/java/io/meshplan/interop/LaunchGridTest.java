package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.RuntimeSpace;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * {@link LaunchGrid}: the splits it searches, and that each runtime gets the fastest
 * configuration its check accepts, as simulating every configuration would find (the bound only
 * skips what cannot win).
 */
class LaunchGridTest {
  /** A runtime that launches the configurations a predicate accepts, and says so otherwise. */
  private record Check(String label, Predicate<ParallelConfig> accepts, String why)
      implements LaunchCheck {
    @Override
    public RuntimeSpace space() {
      return RuntimeSpace.ANY;
    }

    @Override
    public Optional<String> missing(ModelSpec model, Attention attention, Overlaps overlaps) {
      return Optional.empty();
    }

    @Override
    public Optional<String> missing(ModelSpec model, ParallelConfig config, Attention attention,
        Overlaps overlaps) {
      return accepts.test(config) ? Optional.empty() : Optional.of(why);
    }

    @Override
    public Optional<String> missing(PipelinePlan plan) {
      return Optional.empty();
    }
  }

  @Test
  void unevenSplitsGiveTheFirstStageTheSmallerHalfOfWhatTheMiddleLeaves() {
    // 40 layers on 25 stages: 23 middle stages of 1 leave 17, split 8 + 9; a middle share of 2
    // would leave 40 - 46 < 0.
    assertThat(LaunchGrid.stageSplits(40, 25)).containsExactly(new int[] {8, 9});
    // 40 on 4: the even split only (a middle share of 10 leaves 10 + 10).
    assertThat(LaunchGrid.stageSplits(40, 4)).containsExactly(new int[] {0, 0});
    // 41 on 4: middle 10 leaves 21 = 10 + 11; middle 11 leaves 19 = 9 + 10.
    assertThat(LaunchGrid.stageSplits(41, 4)).containsExactly(new int[] {10, 11},
        new int[] {9, 10});
    // 7 on 2: only the first stage is stated; the last takes the rest.
    assertThat(LaunchGrid.stageSplits(7, 2)).containsExactly(new int[] {3, 0});
  }

  @Test
  void aLayoutSpreadsTheExtraLayersOverTheChunksAfterTheFirst() {
    // 40 on 25: 1 each and 15 extra, on chunks 1 to 15 (evenChunks).
    String layout = LaunchGrid.layout(40, 25, 0).orElseThrow().text();
    assertThat(layout).startsWith("Et|tt|").endsWith("|t|tL");
    assertThat(layout.split("\\|")).hasSize(25);
    assertThat(layout.chars().filter(c -> c == 't').count()).isEqualTo(40);
    // 10 on 4 is 2, 3, 3, 2: uneven first and last stages state it, so no layout.
    assertThat(LaunchGrid.layout(10, 4, 0)).isEmpty();
    // 9 on 4 is 2, 3, 2, 2; multi-token prediction modules sit before the loss in the last chunk.
    assertThat(LaunchGrid.layout(9, 4, 1).orElseThrow().text()).isEqualTo("Ett|ttt|tt|ttmL");
    // Three stages have one middle stage: uneven first and last stages state every split.
    assertThat(LaunchGrid.layout(7, 3, 0)).isEmpty();
    assertThat(LaunchGrid.layout(40, 4, 0)).isEmpty();
  }

  /**
   * On 3 hosts of 4 GPUs (12), pipelines of 3 give stages of 4 GPUs, one per host, but pipelines
   * of 2 give stages of 6 that would straddle hosts 1 and 2: no configuration offers them
   * (UniformPipeline#checkNodes refuses them when stated, and a plan file cannot hold them). The
   * same on racks of 72: 576 GPUs in pipelines of 6 would give stages of 96.
   */
  @Test
  void noConfigurationStraddlesANode() {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 6, 512, 8, 8,
        1376, 1024, 256, 1, DType.BF16), 24, DType.BF16);
    PlanRequest req = Requests.of(m, "3x4:a100-80gb", 24, false);
    List<ParallelConfig> all = LaunchGrid.configurations(req);
    assertThat(all).isNotEmpty();
    assertThat(all).noneMatch(c -> c.pipelineParallel() == 2 && c.tensorParallel() == 1);
    assertThat(all).anyMatch(c -> c.pipelineParallel() == 3);
    for (ParallelConfig c : all) {
      int stage = 12 / c.pipelineParallel();
      assertThat(stage % 4 == 0 || 4 % stage == 0).as(c.toString()).isTrue();
    }
  }

  /**
   * Hybrid sharding is searched where the state would be sharded over more than a node: on 4
   * nodes of 4 GPUs, one node's replicas form a shard group, 4 of them at tensor size 1 (so with
   * 8 or 16 replicas per stage) and 2 at tensor size 2, each beside the same configuration
   * sharded over all; never without ZeRO-3, and every group divides its data-parallel size.
   */
  @Test
  void hybridShardingIsSearchedInsideANode() {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 8, 512, 8, 8,
        1376, 1024, 256, 1, DType.BF16), 32, DType.BF16);
    PlanRequest req = Requests.of(m, "4x4:a100-80gb", 32, false);
    List<ParallelConfig> all = LaunchGrid.configurations(req);
    List<ParallelConfig> hybrid = all.stream().filter(c -> c.shardGroup() > 0).toList();
    assertThat(hybrid).isNotEmpty();
    for (ParallelConfig c : hybrid) {
      assertThat(c.zeroStage()).isEqualTo(3);
      assertThat(c.shardGroup()).isEqualTo(4 / c.tensorParallel());
      assertThat(c.dataParallel() % c.shardGroup()).isZero();
      assertThat(c.dataParallel()).isGreaterThan(c.shardGroup());
      assertThat(all).contains(c.withShardGroup(0));
    }
    assertThat(hybrid).anyMatch(c -> c.tensorParallel() == 1 && c.dataParallel() == 16)
        .anyMatch(c -> c.tensorParallel() == 2 && c.shardGroup() == 2);
  }

  @Test
  void eachRuntimeGetsTheFastestConfigurationItAcceptsAsSimulatingAllWouldFind() {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 6, 512, 8, 8,
        1376, 1024, 256, 1, DType.BF16), 16, DType.BF16);
    PlanRequest req = Requests.of(m, "2x4:a100-80gb", 16, false);
    IlpLayerCostModel layers = Requests.layers(req);
    List<LaunchCheck> runtimes = List.of(new Check("all", c -> true, ""),
        new Check("no-sp", c -> !c.sequenceParallel(), "no sequence parallelism"),
        new Check("pp2", c -> c.pipelineParallel() == 2, "pipelines of 2 only"),
        new Check("none", c -> false, "launches nothing"));
    List<LaunchGrid.Found> found = new LaunchGrid(layers).search(req, runtimes);
    PlanSimulator sim = new PlanSimulator(layers);
    for (int i = 0; i < 3; i++) {
      LaunchCheck rt = runtimes.get(i);
      double best = Requests.fastestFitting(req, sim, LaunchGrid.configurations(req),
          c -> rt.missing(m, c, req.attention(), req.overlaps()).isEmpty());
      assertThat(best).as(runtimes.get(i).label()).isFinite();
      PlanSimulator.Evaluated e = found.get(i).best().orElseThrow();
      assertThat(e.simulation().iterationSeconds()).as(runtimes.get(i).label())
          .isEqualTo(best);
      assertThat(runtimes.get(i).missing(m, e.plan().asParallelConfig().orElseThrow(),
          req.attention(), req.overlaps())).as(runtimes.get(i).label()).isEmpty();
    }
    assertThat(found.get(3).best()).isEmpty();
    assertThat(found.get(3).whyNone()).isEqualTo("launches nothing");
  }

  /**
   * With GPUs too small for some configurations to keep every activation, on 10 memory sizes
   * between 160 and 300 MB (seeded): each runtime still gets the fastest configuration it accepts,
   * now also among those recomputing the first 1 to N - 1 blocks of each chunk, as simulating
   * every one of them would find; the grid finds the fewest that fit by bisection and skips a
   * configuration whose twin keeping every activation fits. Some sizes are won by a partial
   * count, which only the runtime that takes it gets.
   */
  @Test
  void recomputingTheFirstBlocksIsFoundAsSimulatingEveryCountWould() {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 8, 512, 8, 8,
        1376, 1024, 512, 1, DType.BF16), 16, DType.BF16);
    java.util.Random rnd = new java.util.Random(5);
    int partial = 0;
    for (int k = 0; k < 10; k++) {
      PlanRequest req = Requests.of(m, "2x4:a100-80gb", 16, false)
          .withMemoryPerGpu(160e6 + 140e6 * rnd.nextDouble());
      IlpLayerCostModel layers = Requests.layers(req);
      List<LaunchCheck> runtimes = List.of(new Check("all", c -> true, ""),
          new Check("whole", c -> c.recomputeLayers() == 0, "no partial recomputation"));
      List<LaunchGrid.Found> found = new LaunchGrid(layers).search(req, runtimes);
      PlanSimulator sim = new PlanSimulator(layers);
      List<ParallelConfig> every = Requests.withEveryRecomputeCount(
          LaunchGrid.configurations(req), m.layers());
      for (int i = 0; i < runtimes.size(); i++) {
        LaunchCheck rt = runtimes.get(i);
        double best = Requests.fastestFitting(req, sim, every,
            c -> rt.missing(m, c, req.attention(), req.overlaps()).isEmpty());
        String where = runtimes.get(i).label() + " with " + req.memoryPerGpu() + " B";
        Optional<PlanSimulator.Evaluated> e = found.get(i).best();
        assertThat(e.isPresent()).as(where).isEqualTo(Double.isFinite(best));
        if (e.isEmpty()) {
          continue;
        }
        assertThat(e.get().simulation().iterationSeconds()).as(where).isEqualTo(best);
        int r = e.get().plan().asParallelConfig().orElseThrow().recomputeLayers();
        if (i == 0 && r > 0) {
          partial++;
        }
        if (i == 1) {
          assertThat(r).as(where).isZero();
        }
      }
    }
    assertThat(partial).isGreaterThan(0);
  }
}
