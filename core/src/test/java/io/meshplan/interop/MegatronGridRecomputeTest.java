package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link MegatronGrid} with partial full recomputation ({@code --recompute-num-layers}): the grid's
 * best against simulating every configuration with every count of recomputed first blocks.
 */
class MegatronGridRecomputeTest {

  /**
   * On 8 seeded memory sizes between 160 and 300 MB per GPU (where some configurations cannot
   * keep every activation), the grid's best iteration is the least over every configuration of
   * the grid and, under full recomputation, every count of first blocks 1 to N - 1 of each chunk
   * that fits; some sizes are won by a count, and the least memory any point needs is never above
   * the least of those simulated.
   */
  @Test
  void theGridFindsTheFewestRecomputedBlocksAsSimulatingEveryCountWould() {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 8, 512, 8, 8,
        1376, 1024, 512, 1, DType.BF16), 16, DType.BF16);
    Random rnd = new Random(11);
    int partial = 0;
    for (int k = 0; k < 8; k++) {
      PlanRequest req = Requests.of(m, "2x4:a100-80gb", 16, false)
          .withMemoryPerGpu(160e6 + 140e6 * rnd.nextDouble());
      IlpLayerCostModel layers = Requests.layers(req);
      MegatronGrid.Search got = new MegatronGrid(layers).search(req);
      PlanSimulator sim = new PlanSimulator(layers);
      double best = Requests.fastestFitting(req, sim,
          Requests.withEveryRecomputeCount(MegatronGrid.configurations(req), m.layers()),
          c -> true);
      String where = req.memoryPerGpu() + " B per GPU";
      assertThat(got.best().isPresent()).as(where).isEqualTo(Double.isFinite(best));
      if (got.best().isEmpty()) {
        continue;
      }
      assertThat(got.best().get().evaluated().simulation().iterationSeconds()).as(where)
          .isEqualTo(best);
      if (got.best().get().config().recomputeLayers() > 0) {
        partial++;
      }
    }
    assertThat(partial).isGreaterThan(0);
  }
}
