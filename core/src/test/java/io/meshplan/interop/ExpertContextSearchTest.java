package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Architecture;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.plan.StagePlan;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The planner's choice of expert and context parallelism against an exhaustive search: on small
 * random mixture-of-experts models, and on a long-sequence model, the plan is at least as fast
 * (in the same simulator, within 2%) as the best point of the Megatron-LM grid, which enumerates
 * every tensor, pipeline, data, expert, expert-tensor and context-parallel size with every micro
 * batch, recomputation, sequence-parallel and optimizer setting ({@link MegatronGrid}).
 */
class ExpertContextSearchTest {
  private static PlanResult.Planned planAndCompare(ModelSpec m, String cluster, int batch) {
    PlanRequest req = Requests.of(m, cluster, batch, false);
    IlpLayerCostModel layers = Requests.layers(req);
    PlanResult r = new InterOpPlanner(layers, p -> { }).plan(req);
    assertThat(r).isInstanceOf(PlanResult.Planned.class);
    PlanResult.Planned planned = (PlanResult.Planned) r;
    double plan = planned.plan().prediction().iterationSeconds();
    MegatronGrid.Point best = new MegatronGrid(layers).best(req).orElseThrow();
    double grid = best.evaluated().simulation().iterationSeconds();
    assertThat(plan).as("%s: plan %s s, best grid point %s (%s s)", m.name(), plan,
        best.config(), grid).isLessThanOrEqualTo(grid * 1.02);
    return planned;
  }

  /** Seeded random models: 2 or 4 layers, h 256 or 512, 4 or 8 experts, top-1 or top-2. */
  @Test
  void expertLayoutsOfRandomModels() {
    Random rnd = new Random(24);
    int usedExperts = 0;
    for (int i = 0; i < 3; i++) {
      int layers = 2 << rnd.nextInt(2);
      int h = 256 << rnd.nextInt(2);
      int experts = 4 << rnd.nextInt(2);
      int k = 1 + rnd.nextInt(2);
      MoeShape moe = new MoeShape(experts, k, 2 * h, 0, false);
      ModelSpec m = new ModelSpec("moe-" + i, ModelSpec.Family.LLAMA, layers, h, 8, 8, 2 * h,
          4096, 2048, 64, DType.BF16, Architecture.llama().withMoe(moe));
      PlanResult.Planned p = planAndCompare(m, "2x4:h100-80gb:ib-ndr400", 64);
      for (StagePlan s : p.plan().stages()) {
        assertThat(experts % s.expertParallel()).isZero();
        usedExperts += s.expertParallel() > 1 ? 1 : 0;
      }
    }
    // Expert parallelism pays on at least one of them (its state and GEMMs shrink).
    assertThat(usedExperts).isPositive();
  }

  /** A 2-layer model at 65,536 tokens on one node: context parallelism is in the space. */
  @Test
  void contextParallelismAtLongSequences() {
    ModelSpec m = new ModelSpec("long", ModelSpec.Family.LLAMA, 2, 512, 8, 8, 1024, 4096,
        65_536, 8, DType.BF16, Architecture.llama());
    planAndCompare(m, "1x8:h100-80gb:ib-ndr400", 8);
  }
}
