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
 * MLPerf Training v5.1's Llama 2 70B LoRA row on an MI325X node ({@code
 * folds/mlperf_llama2_70b_lora.csv}) is stated as AMD's submission ran it.
 */
class PublicMlperfFoldTest {
  private static PublicRun row() {
    List<PublicRun> rows = PublicFolds.of(List.of("mlperf"));
    assertThat(rows).hasSize(1);
    return rows.get(0);
  }

  @Test
  void theRowIsStatedAsTheSubmissionRanIt() {
    PublicRun r = row();
    assertThat(r.fold()).isEqualTo("mlperf");
    assertThat(r.cluster().gpuCount()).isEqualTo(8);
    assertThat(r.cluster().gpu().name()).isEqualTo("mi325x");
    // config_MI325X_1x8x1.sh: TP 1, PP 1, CP 1, MBS 1; the logs' global batch 8; no ACG.
    assertThat(r.config().tensorParallel()).isEqualTo(1);
    assertThat(r.config().pipelineParallel()).isEqualTo(1);
    assertThat(r.config().dataParallel()).isEqualTo(8);
    assertThat(r.config().microBatchSize()).isEqualTo(1);
    assertThat(r.config().globalBatchSize()).isEqualTo(8);
    assertThat(r.config().recompute()).isEqualTo(Recompute.NONE);
    assertThat(r.config().zeroStage()).isZero();
    assertThat(io.meshplan.model.Fp8Training.on(r.dtype())).isTrue();
    assertThat(r.model().fp8Scaling()).isEqualTo(io.meshplan.model.Fp8Scaling.DELAYED);
    assertThat(r.model().seq()).isEqualTo(8192);
    assertThat(r.model().lora().rank()).isEqualTo(16);
    assertThat(r.model().lora().alpha()).isEqualTo(32.0);
    assertThat(r.model().lora().targets()).isEqualTo("q_proj,k_proj,v_proj,o_proj");
    assertThat(r.model().lora().fp8Base()).isTrue();
    assertThat(r.kernel()).contains(AttentionKernel.FLASH2);
    assertThat(r.figure()).isEqualTo(PublicRun.Figure.TOKENS_PER_GPU);
    // 2.8366 samples/s x 8,192 tokens / 8 GPUs.
    assertThat(r.measured()).isCloseTo(2.8366 * 8192 / 8, within(0.1));
  }

  /**
   * It fits, as it ran (with its base in FP8: 64.85 GiB of weights, not 128.60), and its
   * prediction is the simulation's tokens per second per GPU.
   */
  @Test
  void itFitsAndIsPredictedPerGpu() {
    PublicRun r = row();
    SimulationResult s = r.simulate(Optional.empty());
    // 181.2 GiB at its peak, of the MI325X's 256 GiB.
    assertThat(s.peakMemoryBytesPerGpu()).isLessThan(r.cluster().gpu().hbmBytes())
        .isGreaterThan(180.0 * (1L << 30));
    assertThat(r.predicted(s)).isCloseTo(s.tokensPerSecond() / 8, within(1e-9));
  }
}
