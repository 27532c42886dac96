package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.Fp8Scaling;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.RecomputeModule;
import io.meshplan.sim.SimulationResult;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Megatron-Bridge's Nemotron 3 Nano row ({@code folds/hybrid_h100.csv}) is stated as its recipe
 * ran in the 26.06 container: FP8 with current scaling, EP 8, the MoE layer, norms, attention
 * core and experts' activation recomputed, Hybrid-EP's dispatcher; so stated it fits in an H100's
 * memory, as the run did.
 */
class PublicHybridFoldTest {
  @Test
  void theNanoRowRunsAsItsRecipeRanAndFits() {
    List<PublicRun> rows = PublicFolds.all().stream().filter(r -> r.set().equals("hyb")
        && r.fold().equals("nemo"))
        .toList();
    assertThat(rows).hasSize(1);
    PublicRun r = rows.get(0);
    assertThat(r.fold()).isEqualTo("nemo");
    assertThat(r.model().arch().hybrid().on()).isTrue();
    assertThat(Fp8Training.on(r.dtype())).isTrue();
    assertThat(r.model().fp8Scaling()).isEqualTo(Fp8Scaling.TENSORWISE);
    assertThat(r.config().expertParallel()).isEqualTo(8);
    assertThat(r.config().dataParallel()).isEqualTo(16);
    assertThat(r.config().recomputeModules()).isEqualTo(EnumSet.of(RecomputeModule.MOE,
        RecomputeModule.LAYERNORM, RecomputeModule.CORE_ATTN, RecomputeModule.MOE_ACT));
    assertThat(r.overlaps().dispatcher()).isEqualTo(ExpertDispatcher.HYBRIDEP);
    SimulationResult s = r.simulate(Optional.empty());
    // 1,024 x 8,192 = 8,388,608 tokens per step at 14,719 tokens/s on each of 16 GPUs:
    // 8,388,608 / 235,504 = 35.62 s.
    assertThat(r.measuredSeconds(s)).isBetween(35.0, 36.0);
    assertThat(s.peakMemoryBytesPerGpu()).isLessThan(r.cluster().gpu().hbmBytes());
  }
}
