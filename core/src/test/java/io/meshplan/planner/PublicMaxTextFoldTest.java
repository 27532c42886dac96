package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.model.Recompute;
import io.meshplan.sim.SimulationResult;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * MaxText's Llama 2 7B row on one A3 VM ({@code folds/maxtext_h100.csv}) is stated as the
 * commit's {@code 1vm.sh} ran it, and counted as MaxText counted it in 2024.
 */
class PublicMaxTextFoldTest {
  private static PublicRun row() {
    List<PublicRun> rows = PublicFolds.of(List.of("maxtext"));
    assertThat(rows).hasSize(1);
    return rows.get(0);
  }

  @Test
  void theRowIsStatedAsItsScriptRanIt() {
    PublicRun r = row();
    assertThat(r.set()).isEqualTo("jax");
    assertThat(r.cluster().gpuCount()).isEqualTo(8);
    assertThat(r.cluster().gpu().name()).isEqualTo("h100-80gb");
    // ici_fsdp_parallelism=8: ZeRO-3 over 8; per_device_batch_size=4: one micro-batch of 4.
    assertThat(r.config().dataParallel()).isEqualTo(8);
    assertThat(r.config().tensorParallel()).isEqualTo(1);
    assertThat(r.config().pipelineParallel()).isEqualTo(1);
    assertThat(r.config().zeroStage()).isEqualTo(3);
    assertThat(r.config().microBatchSize()).isEqualTo(4);
    assertThat(r.config().globalBatchSize()).isEqualTo(32);
    assertThat(r.config().recompute()).isEqualTo(Recompute.MAXTEXT_MINIMAL_FLASH);
    assertThat(r.kernel()).contains(AttentionKernel.CUDNN);
    assertThat(r.model().seq()).isEqualTo(4096);
    assertThat(r.figure()).isEqualTo(PublicRun.Figure.MAXTEXT_TFLOPS);
    assertThat(r.measured()).isEqualTo(492.0);
  }

  /**
   * MaxText's count at efb6d9e4a: 6 N per token for N = 6,738,415,616 parameters (Llama 2 7B with
   * its embedding and output), 40,430,493,696, plus causal attention's 6 L H Q s = 6 x 32 x 32 x
   * 128 x 4,096 = 3,221,225,472: 43,651,719,168 FLOPs per token, times the tokens per second per
   * GPU.
   */
  @Test
  void itsFigureIsMaxTextsCount() {
    PublicRun r = row();
    assertThat(r.model().parameterCount()).isEqualTo(6_738_415_616L);
    SimulationResult s = r.simulate(Optional.empty());
    double perGpu = s.tokensPerSecond() / 8;
    assertThat(r.predicted(s)).isCloseTo(43_651_719_168.0 * perGpu / 1e12, within(1e-9));
  }
}
