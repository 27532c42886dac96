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
 * MLPerf Training v5.1's Llama 2 70B LoRA rows on MI300X and MI325X nodes ({@code
 * folds/mlperf_llama2_70b_lora.csv}) are stated as their submissions ran them.
 */
class PublicMlperfFoldTest {
  private static List<PublicRun> rows() {
    List<PublicRun> rows = PublicFolds.of(List.of("mlperf"));
    assertThat(rows).hasSize(4);
    return rows;
  }

  private static PublicRun row() {
    return rows().get(0);
  }

  /**
   * The MI300X rows and the two-node rows recompute the first 21 of the 80 layers (ACG=full,
   * ACM=block, ACL=21); the two-node rows split each sequence over 2 GPUs (CP=2), so 16 GPUs
   * hold 8 replicas: 3.9271 and 4.7098 samples/s x 8,192 / 16 = 2,010.7 and 2,411.4 tokens/s per
   * GPU; AMD's MI300X node 2.1084 x 8,192 / 8 = 2,159.0.
   */
  @Test
  void theOtherRowsRecomputeTheirFirst21Layers() {
    List<PublicRun> rows = rows();
    assertThat(rows.get(0).config().recomputeLayers()).isZero();
    for (PublicRun r : rows.subList(1, 4)) {
      assertThat(r.config().recompute()).isEqualTo(Recompute.FULL);
      assertThat(r.config().recomputeLayers()).isEqualTo(21);
      assertThat(r.config().dataParallel()).isEqualTo(8);
      assertThat(r.model().lora().fp8Base()).isTrue();
    }
    assertThat(rows.get(1).cluster().toShortString()).isEqualTo("1x8:mi300x:roce-400");
    assertThat(rows.get(1).config().contextParallel()).isEqualTo(1);
    assertThat(rows.get(1).measured()).isCloseTo(2.1084 * 8192 / 8, within(0.1));
    assertThat(rows.get(2).cluster().toShortString()).isEqualTo("2x8:mi300x:roce-400");
    assertThat(rows.get(2).config().contextParallel()).isEqualTo(2);
    assertThat(rows.get(2).measured()).isCloseTo(3.9271 * 8192 / 16, within(0.1));
    assertThat(rows.get(3).cluster().toShortString()).isEqualTo("2x8:mi325x:roce-400");
    assertThat(rows.get(3).measured()).isCloseTo(4.7098 * 8192 / 16, within(0.1));
    for (PublicRun r : rows) {
      SimulationResult s = r.simulate(Optional.empty());
      assertThat(s.peakMemoryBytesPerGpu()).as(r.cluster().toShortString())
          .isLessThan(r.cluster().gpu().hbmBytes());
    }
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
