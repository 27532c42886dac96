package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.SimulationResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Full recomputation of the first blocks of a stage only (Megatron-Core's {@code
 * --recompute-method block --recompute-num-layers}), as the planner searches it: the stage DP's
 * options, the interleaved candidates and the plan files that carry it.
 */
class PartialRecomputeTest {

  /** A small GPT-style model of {@code layers} blocks (hidden 256, 8 heads) at {@code seq}. */
  private static ModelSpec tiny(int layers, int seq, int globalBatch) {
    ModelSpec base = Presets.get("gpt");
    return new ModelSpec("gpt-tiny-" + layers, base.family(), layers, 256, 8, 8, 1024, 2048,
        seq, globalBatch, DType.BF16, base.arch());
  }

  /** A request whose GPUs hold between {@code lo} and {@code lo + span} bytes. */
  private static PlanRequest tight(Random rnd, ModelSpec m, String cluster, int gb, double lo,
      double span) {
    return Requests.of(m, cluster, gb, false).withMemoryPerGpu(lo + span * rnd.nextDouble());
  }

  /** A stage with another recomputation: {@code mode} on its first {@code r} blocks. */
  private static StagePlan recomputing(StagePlan s, Recompute mode, int r) {
    return new StagePlan(s.firstLayer(), s.lastLayer(), s.submeshNodes(), s.submeshGpus(),
        s.firstDevice(), s.dataParallel(), s.tensorParallel(), mode, s.sequenceParallel(),
        s.zeroStage(), s.megatronLayouts(), s.forwardSeconds(), s.backwardSeconds(),
        s.peakMemoryBytes(), s.tensors(), s.commBytesPerGpu(), s.expertParallel(),
        s.expertTensorParallel(), s.contextParallel(), s.cpExchange(), s.shardGroup(), r);
  }

  private static PipelinePlan withStage(PipelinePlan p, int k, StagePlan s) {
    List<StagePlan> stages = new ArrayList<>(p.stages());
    stages.set(k, s);
    return new PipelinePlan(p.source(), p.cluster(), p.globalBatchSize(),
        p.microbatchSequences(), p.microbatches(), p.virtualStages(), stages, p.prediction());
  }

  /**
   * On 30 seeded random small models and clusters whose GPUs hold too little for every stage to
   * keep its activations, the 1F1B plan recomputes the first blocks of some stages; each such
   * stage recomputes the fewest that fit: with one block fewer recomputed (or none recomputed,
   * from one), the re-simulated stage needs more memory than the GPU has. Each plan fits, and its
   * JSON re-simulates to the iteration it states.
   */
  @Test
  void theStageDpRecomputesTheFewestFirstBlocksThatFit() {
    Random rnd = new Random(31);
    String[] clusters = {"1x4:a100-80gb:ib-hdr200", "2x4:a100-80gb:ib-hdr200",
        "1x8:h100-80gb:ib-ndr400"};
    int[] layerCounts = {8, 12, 16};
    int partial = 0;
    for (int k = 0; k < 30; k++) {
      int gb = 32;
      ModelSpec m = tiny(layerCounts[rnd.nextInt(layerCounts.length)], 256, gb);
      PlanRequest req = tight(rnd, m, clusters[rnd.nextInt(clusters.length)], gb, 40e6, 60e6)
          .withInterleaving(false);
      IlpLayerCostModel layers = Requests.layers(req);
      PlanResult r = new InterOpPlanner(layers, p -> { }).plan(req);
      if (!(r instanceof PlanResult.Planned planned)) {
        continue;
      }
      PipelinePlan plan = planned.plan();
      String where = "case " + k + ": " + m.name() + " on " + req.cluster().toShortString()
          + " with " + req.memoryPerGpu() + " B per GPU";
      assertThat(plan.prediction().peakMemoryBytesPerGpu()).as(where)
          .isLessThanOrEqualTo(req.memoryPerGpu());
      PlanSimulator sim = new PlanSimulator(layers);
      PipelinePlan back = PlanJson.read("round trip", PlanJson.write(plan));
      assertThat(sim.simulate(req, back).iterationSeconds()).as(where)
          .isEqualTo(plan.prediction().iterationSeconds());
      for (int i = 0; i < plan.stages().size(); i++) {
        StagePlan s = plan.stages().get(i);
        if (s.recomputeLayers() == 0) {
          continue;
        }
        partial++;
        assertThat(s.recompute()).as(where).isEqualTo(Recompute.FULL);
        assertThat(s.recomputeLayers()).as(where).isBetween(1, s.layerCount() - 1);
        StagePlan fewer = s.recomputeLayers() == 1 ? recomputing(s, Recompute.NONE, 0)
            : recomputing(s, Recompute.FULL, s.recomputeLayers() - 1);
        SimulationResult again = sim.simulate(req, withStage(plan, i, fewer));
        assertThat(again.stages().get(i).memory().totalBytes()).as(where + ", stage " + i)
            .isGreaterThan(req.memoryPerGpu());
      }
    }
    // The memory range makes some stages recompute part of their blocks.
    assertThat(partial).isGreaterThan(3);
  }

  /**
   * On 12 seeded random cases of a 32-block model at 1,024 tokens with 1.3 to 3 GB per GPU (where
   * keeping every activation of the interleaved pipelines does not always fit), the interleaved
   * search, which skips the rest of a family of candidates (the same pipeline recomputing more
   * first blocks of each chunk) once one fits, returns the plan of simulating every candidate,
   * and some of those plans recompute the first blocks of each chunk (some microbatch sizes fit
   * no interleaved pipeline).
   */
  @Test
  void interleavedCandidatesRecomputingFirstBlocksMatchSimulatingThemAll() {
    Random rnd = new Random(77);
    String[] clusters = {"2x4:a100-80gb:ib-hdr200", "4x2:h100-80gb:ib-ndr400"};
    int partial = 0;
    int found = 0;
    for (int k = 0; k < 12; k++) {
      int gb = 32;
      ModelSpec m = tiny(32, 1024, gb);
      PlanRequest req = tight(rnd, m, clusters[rnd.nextInt(clusters.length)], gb, 1.3e9, 1.7e9);
      Requests.Interleaved search = Requests.Interleaved.of(req, rnd);
      int g = search.microbatch();
      Optional<PlanSimulator.Evaluated> ref = search.interleaver()
          .best(Double.POSITIVE_INFINITY, true);
      Optional<PlanSimulator.Evaluated> got = search.interleaver()
          .best(Double.POSITIVE_INFINITY, false);
      String where = "case " + k + " on " + req.cluster().toShortString() + ", microbatch " + g;
      assertThat(got.map(e -> PlanJson.write(e.plan()))).as(where)
          .isEqualTo(ref.map(e -> PlanJson.write(e.plan())));
      if (got.isPresent()) {
        found++;
        if (got.get().plan().recomputeLayers() > 0) {
          partial++;
        }
      }
    }
    assertThat(found).isGreaterThan(6);
    assertThat(partial).isGreaterThan(0);
  }
}
