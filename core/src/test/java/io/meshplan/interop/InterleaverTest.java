package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The interleaved candidates of the planner ({@link Interleaver}): the chunk split, the bounded
 * search against simulating every candidate, and the planner's choice against its 1F1B plan.
 */
class InterleaverTest {

  /** A small GPT-style model of {@code layers} blocks (hidden 256, 8 heads, sequence 256). */
  private static ModelSpec tiny(int layers, int globalBatch) {
    ModelSpec base = Presets.get("gpt");
    return new ModelSpec("gpt-tiny-" + layers, base.family(), layers, 256, 8, 8, 1024, 2048,
        256, globalBatch, DType.BF16, base.arch());
  }

  @Test
  void chunksSplitTheLayersEvenlyWithTheExtraBlocksAwayFromTheEnds() {
    // 126 = 112 * 1 + 14: chunks 1..14 get a second block; chunk 0 (embedding) and 111 (head)
    // keep one.
    int[] c = UniformPipeline.evenChunks(126, 112);
    assertThat(c).hasSize(112);
    for (int k = 0; k < 112; k++) {
      assertThat(c[k]).as("chunk " + k).isEqualTo(k >= 1 && k <= 14 ? 2 : 1);
    }
    // 10 = 4 * 2 + 2: chunks 1 and 2 get 3.
    assertThat(UniformPipeline.evenChunks(10, 4)).containsExactly(2, 3, 3, 2);
    // 9 = 3 * 3: all equal.
    assertThat(UniformPipeline.evenChunks(9, 3)).containsExactly(3, 3, 3);
    // 7 = 4 * 1 + 3: every chunk but the first gets 2.
    assertThat(UniformPipeline.evenChunks(7, 4)).containsExactly(1, 2, 2, 2);
    assertThatThrownBy(() -> UniformPipeline.evenChunks(8, 9))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * On 24 seeded random small models, clusters, batches and microbatch sizes (a third of them with
   * little memory per GPU), the search that drops candidates whose model state cannot fit and
   * simulates the others in order of their time bound, stopping once the bound passes the best,
   * returns exactly the plan (as JSON) of simulating every candidate, both with nothing to beat and
   * with a random iteration time to beat; and it simulates fewer candidates on most cases.
   */
  @Test
  void boundedSearchReturnsThePlanOfSimulatingEveryCandidate() {
    Random rnd = new Random(2024);
    String[] clusters = {"2x4:a100-80gb:ib-hdr200", "4x4:a100-80gb:ib-hdr200",
        "4x2:h100-80gb:ib-ndr400", "8x2:a100-40gb:ib-hdr200", "2x8:h100-80gb:ib-ndr400"};
    int[] layerCounts = {8, 12, 16};
    int[] batches = {16, 32, 64};
    int found = 0;
    int fewer = 0;
    int dropped = 0;
    for (int k = 0; k < 24; k++) {
      int gb = batches[rnd.nextInt(batches.length)];
      ModelSpec m = tiny(layerCounts[rnd.nextInt(layerCounts.length)], gb);
      PlanRequest full = Requests.of(m, clusters[rnd.nextInt(clusters.length)], gb, false);
      // Every third case gets 20 to 120 MB per GPU, so that memory rules candidates out.
      PlanRequest req = k % 3 != 0 ? full : new PlanRequest(m, full.cluster(), gb, 0,
          (20 + 100 * rnd.nextDouble()) * 1e6, full.pricing(), full.weightBytes(),
          false);
      Requests.Interleaved search = Requests.Interleaved.of(req, rnd);
      int g = search.microbatch();
      Interleaver all = search.interleaver();
      Optional<PlanSimulator.Evaluated> ref = all.best(Double.POSITIVE_INFINITY, true);
      Interleaver bounded = search.interleaver();
      Optional<PlanSimulator.Evaluated> got = bounded.best(Double.POSITIVE_INFINITY, false);
      dropped += bounded.droppedForMemory();
      String where = "case " + k + ": " + m.name() + " on " + req.cluster().toShortString()
          + ", batch " + gb + ", microbatch " + g;
      assertThat(got.isPresent()).as(where).isEqualTo(ref.isPresent());
      if (ref.isEmpty()) {
        continue;
      }
      found++;
      assertThat(PlanJson.write(got.get().plan())).as(where)
          .isEqualTo(PlanJson.write(ref.get().plan()));
      assertThat(got.get().plan().virtualStages()).as(where).isGreaterThan(1);
      if (bounded.simulations() < all.simulations()) {
        fewer++;
      }
      // With an iteration to beat: the same answer as simulating everything under that rule.
      double beat = ref.get().simulation().iterationSeconds() * (0.9 + 0.2 * rnd.nextDouble());
      Optional<PlanSimulator.Evaluated> refBeat = search.interleaver().best(beat, true);
      Optional<PlanSimulator.Evaluated> gotBeat = search.interleaver().best(beat, false);
      assertThat(gotBeat.map(e -> PlanJson.write(e.plan()))).as(where + ", beat " + beat)
          .isEqualTo(refBeat.map(e -> PlanJson.write(e.plan())));
      refBeat.ifPresent(e -> assertThat(e.simulation().iterationSeconds()).isLessThan(beat));
    }
    assertThat(found).isGreaterThan(12);
    assertThat(fewer).isGreaterThan(found / 2);
    // The model-state filter ruled candidates out, and the reference simulated them unfiltered.
    assertThat(dropped).isGreaterThan(0);
  }

  /**
   * LLaMA2-7B cut to 16 blocks on 4 nodes of 8 H100s with 32 sequences of 1,024 tokens: the 1F1B
   * plan has many stages for few microbatches, so the interleaved schedule is faster (the command
   * line gives 0.081 s interleaved against 0.093 s with {@code --schedule 1f1b}). The planner's plan
   * is interleaved, faster than its 1F1B-only plan, re-simulates to the same iteration from its
   * JSON, and uses every GPU once.
   */
  @Test
  void plannerChoosesTheInterleavedScheduleWhenItIsFaster() {
    ModelSpec base = Presets.get("llama2-7b");
    ModelSpec m = Requests.training(new ModelSpec("llama2-7b-16l", base.family(), 16,
        base.hidden(), base.heads(), base.kvHeads(), base.ffn(), base.vocab(), 1024, 1,
        DType.BF16, base.arch()), 32, DType.BF16);
    PlanRequest req = Requests.of(m, "4x8:h100-80gb:ib-ndr400", 32, false);
    IlpLayerCostModel layers = Requests.layers(req);
    PlanResult.Planned any = (PlanResult.Planned) new InterOpPlanner(layers, p -> { })
        .plan(req);
    PlanResult.Planned oneF1B = (PlanResult.Planned) new InterOpPlanner(layers, p -> { })
        .plan(req.withInterleaving(false));
    PipelinePlan plan = any.plan();
    assertThat(oneF1B.plan().virtualStages()).isEqualTo(1);
    assertThat(plan.virtualStages()).isGreaterThan(1);
    assertThat(plan.prediction().iterationSeconds())
        .isLessThan(oneF1B.plan().prediction().iterationSeconds());
    assertThat(plan.gpus()).isEqualTo(32);
    assertThat(plan.stages()).hasSize(plan.pipelineStages() * plan.virtualStages());
    PipelinePlan back = PlanJson.read("round trip", PlanJson.write(plan));
    assertThat(PlanJson.write(back)).isEqualTo(PlanJson.write(plan));
    double again = new PlanSimulator(layers).simulate(req, back).iterationSeconds();
    assertThat(again).isEqualTo(plan.prediction().iterationSeconds());
  }
}
