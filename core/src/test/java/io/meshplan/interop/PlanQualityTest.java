package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import org.junit.jupiter.api.Test;

/**
 * The planner's search space contains every Megatron-LM configuration, so its plan must be at
 * least as fast, in the same simulator, as the best configuration of an exhaustive grid (tensor,
 * pipeline and data-parallel sizes, micro batch, recomputation, sequence parallelism, distributed
 * optimizer), within 2%. The benchmark repeats this on the large clusters.
 */
class PlanQualityTest {
  private static void check(ModelSpec m, String cluster, int globalBatch) {
    PlanRequest req = Requests.of(Requests.training(m, globalBatch, DType.BF16), cluster,
        globalBatch, false);
    IlpLayerCostModel layers = Requests.layers(req);
    PlanResult r = new InterOpPlanner(layers, p -> { }).plan(req);
    assertThat(r).isInstanceOf(PlanResult.Planned.class);
    double plan = ((PlanResult.Planned) r).plan().prediction().iterationSeconds();
    double grid = new MegatronGrid(layers).best(req).orElseThrow().evaluated().simulation()
        .iterationSeconds();
    assertThat(plan).as("plan %s s, best Megatron configuration %s s", plan, grid)
        .isLessThanOrEqualTo(grid * 1.02);
  }

  @Test
  void eightLayerLlamaOnTwoNodes() {
    ModelSpec base = Presets.get("llama2-7b");
    check(new ModelSpec("llama2-7b-8l", base.family(), 8, base.hidden(), base.heads(),
        base.kvHeads(), base.ffn(), base.vocab(), 1024, 1, DType.BF16, base.arch()),
        "2x8:h100-80gb:ib-ndr400", 64);
  }

  @Test
  void smallGptOnFourNodesOfFour() {
    ModelSpec base = Presets.get("gpt-1.7b");
    check(new ModelSpec("gpt-12l", base.family(), 12, base.hidden(), base.heads(),
        base.kvHeads(), base.ffn(), base.vocab(), 2048, 1, DType.BF16, base.arch()),
        "4x4:a100-40gb:ib-hdr200", 128);
  }
}
