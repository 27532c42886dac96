package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.RuntimeSpace;
import io.meshplan.plan.StagePlan;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A runtime's space as the search takes it: the layer settings and ZeRO stages a stage may take,
 * the submesh shapes, and the plan of the whole-cluster search within it.
 */
class RuntimeSpaceSearchTest {
  /** Alpa's space as its writer states it: no sequence parallelism, ILP layouts, ZeRO 0 or 1. */
  private static final RuntimeSpace OWN_STAGES = new RuntimeSpace(false,
      EnumSet.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL), false, true, false,
      Set.of(0, 1), false, false, false, EnumSet.of(Attention.UNFUSED), true);

  private static final ModelSpec TINY = Requests.training(new ModelSpec("tiny",
      ModelSpec.Family.LLAMA, 6, 512, 8, 8, 1376, 1024, 256, 1, DType.BF16), 16, DType.BF16);

  @Test
  void theSpaceKeepsOnlyTheSettingsAndZeroStagesItHolds() {
    PlanRequest any = Requests.of(TINY, "2x4:a100-80gb", 16, false);
    PlanRequest own = any.withRuntime(OWN_STAGES);
    // 4 x 2 GPUs sharing microbatches of 8: 12 settings (3 modes x SP off/on x ILP/Megatron)
    // in any space, the 3 modes with neither SP nor Megatron's layouts in this one.
    assertThat(SearchRules.stageSettings(any, 4, 2, 8)).hasSize(12);
    assertThat(SearchRules.stageSettings(own, 4, 2, 8)).hasSize(3)
        .noneMatch(LayerSetting::sequenceParallel).noneMatch(LayerSetting::megatron);
    assertThat(SearchRules.zeroStages(any, 4)).containsExactly(0, 1, 3);
    assertThat(SearchRules.zeroStages(own, 4)).containsExactly(0, 1);
    assertThat(own.interleave()).isFalse();
  }

  @Test
  void partNodeSubmeshesNeedPowerOfTwoNodesWhereTheRuntimePacksThem() {
    PlanRequest six = Requests.of(TINY, "2x6:a100-80gb", 12, false);
    // Alpa's shapes on 6-GPU nodes: (1,1), (1,2), (1,4), (1,6), (2,6).
    assertThat(SearchSpace.of(six).shapes()).extracting(SubmeshShape::devices)
        .containsExactly(1, 2, 4, 6, 12);
    assertThat(SearchSpace.of(six.withRuntime(OWN_STAGES)).shapes())
        .extracting(SubmeshShape::devices).containsExactly(6, 12);
    PlanRequest eight = Requests.of(TINY, "2x8:a100-80gb", 16, false);
    assertThat(SearchSpace.of(eight.withRuntime(OWN_STAGES)).shapes())
        .extracting(SubmeshShape::devices).containsExactly(1, 2, 4, 8, 16);
  }

  @Test
  void theRefusedFeatureComesInTheOrderOfTheSpacesFields() {
    // OP recompute is named before sequence parallelism; ZeRO after the layer setting.
    assertThat(OWN_STAGES.refused(2, Recompute.OP, true, true, 2, 2))
        .contains(RuntimeSpace.Feature.RECOMPUTE);
    assertThat(OWN_STAGES.refused(2, Recompute.FULL, true, true, 1, 1))
        .contains(RuntimeSpace.Feature.SEQUENCE_PARALLEL);
    assertThat(OWN_STAGES.refused(2, Recompute.FULL, false, true, 1, 1))
        .contains(RuntimeSpace.Feature.MEGATRON_LAYOUTS);
    // A single GPU's layouts are no choice: Megatron's at tp 1 is no refusal.
    assertThat(OWN_STAGES.refused(1, Recompute.FULL, false, true, 1, 1)).isEmpty();
    assertThat(OWN_STAGES.refused(1, Recompute.FULL, false, false, 2, 1))
        .contains(RuntimeSpace.Feature.CONTEXT_PARALLEL);
    StagePlan zero2 = new StagePlan(0, 0, 1, 4, 0, 4, 1, Recompute.NONE, false, 2, false, 0.1,
        0.1, 1e9, java.util.List.of());
    assertThat(OWN_STAGES.refused(zero2)).contains(RuntimeSpace.Feature.ZERO_STAGE);
    assertThat(RuntimeSpace.ANY.refused(zero2)).isEmpty();
  }

  @Test
  void theWholeClusterSearchWithinTheSpacePlansOnlyWhatItHolds() {
    PlanRequest req = Requests.of(TINY, "2x4:a100-80gb", 16, false).withRuntime(OWN_STAGES);
    PlanResult r = new InterOpPlanner(Requests.layers(req), pct -> { }).plan(req);
    PlanResult.Planned p = (PlanResult.Planned) r;
    assertThat(p.plan().virtualStages()).isEqualTo(1);
    for (StagePlan s : p.plan().stages()) {
      assertThat(OWN_STAGES.refused(s)).as(s.toString()).isEmpty();
    }
  }
}
