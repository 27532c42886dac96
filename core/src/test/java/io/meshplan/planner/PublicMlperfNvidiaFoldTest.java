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
 * MLPerf Training v5.1's Llama 2 70B LoRA rows in NVIDIA's implementation on B200, B300 and H200
 * nodes ({@code folds/mlperf_nvidia_llama2_70b_lora.csv}) are stated as their submissions ran
 * them, and each fits its GPUs' memory as it ran.
 */
class PublicMlperfNvidiaFoldTest {
  private static List<PublicRun> rows() {
    List<PublicRun> rows = PublicFolds.of(List.of("mlperf-nvidia")).stream()
        .filter(r -> r.set().equals("mlpnv")).toList();
    assertThat(rows).hasSize(8);
    return rows;
  }

  /**
   * Every row: FP8 with delayed scaling, the base stored in FP8, cuDNN's FP8 attention, the SwiGLU
   * inputs in FP8, no recomputation, the distributed optimizer, LoRA rank 16 / alpha 32 on
   * linear_qkv and linear_proj, 8,192 tokens, micro-batch 1.
   */
  @Test
  void everyRowIsStatedAsItsConfigRanIt() {
    for (PublicRun r : rows()) {
      assertThat(r.fold()).isEqualTo("mlperf-nvidia");
      assertThat(io.meshplan.model.Fp8Training.on(r.dtype())).isTrue();
      assertThat(r.model().fp8Scaling()).isEqualTo(io.meshplan.model.Fp8Scaling.DELAYED);
      assertThat(r.model().lora().fp8Base()).isTrue();
      assertThat(r.model().lora().rank()).isEqualTo(16);
      assertThat(r.model().lora().alpha()).isEqualTo(32.0);
      assertThat(r.model().lora().targets()).isEqualTo("q_proj,k_proj,v_proj,o_proj");
      assertThat(r.model().fp8ActivationInput()).isEqualTo(r.config().contextParallel() == 1);
      assertThat(r.model().seq()).isEqualTo(8192);
      assertThat(r.kernel()).contains(AttentionKernel.CUDNN_FP8);
      assertThat(r.config().recompute()).isEqualTo(Recompute.NONE);
      assertThat(r.config().zeroStage()).isEqualTo(1);
      assertThat(r.config().microBatchSize()).isEqualTo(1);
      assertThat(r.config().pipelineParallel()).isEqualTo(1);
      assertThat(r.figure()).isEqualTo(PublicRun.Figure.TOKENS_PER_GPU);
    }
  }

  /**
   * The measured rates: 27,360 samples in 4,418.257 s (B200) and 4,306.948 s (B300), 29,440 in
   * 2,561.856 s (two B200 nodes), 27,360 in 10,762.812 s (H200), times 8,192 tokens over the GPUs.
   * The H200 row runs TP 2 without sequence parallelism (SP=0), DP 4, two micro-batches a step.
   */
  @Test
  void theRowsAndTheirRates() {
    List<PublicRun> rows = rows();
    assertThat(rows.get(0).cluster().toShortString()).isEqualTo("1x8:b200:ib-ndr400");
    assertThat(rows.get(0).measured()).isCloseTo(27360 / 4418.257 * 8192 / 8, within(0.1));
    assertThat(rows.get(1).cluster().gpu().name()).isEqualTo("b300");
    assertThat(rows.get(1).measured()).isCloseTo(27360 / 4306.948 * 8192 / 8, within(0.1));
    PublicRun two = rows.get(2);
    assertThat(two.cluster().gpuCount()).isEqualTo(16);
    assertThat(two.config().dataParallel()).isEqualTo(16);
    assertThat(two.config().globalBatchSize()).isEqualTo(16);
    assertThat(two.measured()).isCloseTo(29440 / 2561.856 * 8192 / 16, within(0.1));
    PublicRun h200 = rows.get(3);
    assertThat(h200.cluster().gpu().name()).isEqualTo("h200-141gb");
    assertThat(h200.config().tensorParallel()).isEqualTo(2);
    assertThat(h200.config().sequenceParallel()).isFalse();
    assertThat(h200.config().dataParallel()).isEqualTo(4);
    assertThat(h200.config().globalBatchSize()).isEqualTo(8);
    assertThat(h200.measured()).isCloseTo(27360 / 10762.812 * 8192 / 8, within(0.1));
  }

  /**
   * NVIDIA's own rows on GB200 and GB300 NVL72 racks (config_GB{200,300}_18x4x1xtp1pp1cp8.sh and
   * _128x4x1xtp1pp1cp8.sh): CP 8 with the implementation's default exchange, Ulysses'
   * all-to-alls (CP_COMM_TYPE a2a), DP 9 on one rack and 64 on eight racks of 64 GPUs, global
   * batch 9 and 64, the SwiGLU inputs in bf16 (no FP8_ACT). The rates: 27,720 samples in
   * 612.011 s (GB200, 72 GPUs), 28,080 in 534.880 s (GB300), 32,000 in 102.608 s and 88.933 s
   * (512 GPUs), times 8,192 tokens over the GPUs.
   */
  @Test
  void nvidiasRackRowsSplitEachSequenceByAllToAlls() {
    List<PublicRun> rows = rows().subList(4, 8);
    double[] rates = {27720 / 612.011 * 8192 / 72, 28080 / 534.880 * 8192 / 72,
        32000 / 102.608 * 8192 / 512, 32000 / 88.933 * 8192 / 512};
    String[] clusters = {"1xnvl72:gb200:ib-ndr400", "1xnvl72:gb300:ib-xdr800",
        "8xnvl64:gb200:ib-ndr400", "8xnvl64:gb300:ib-xdr800"};
    for (int i = 0; i < 4; i++) {
      PublicRun r = rows.get(i);
      assertThat(r.cluster().toShortString()).isEqualTo(clusters[i]);
      assertThat(r.config().contextParallel()).isEqualTo(8);
      assertThat(r.config().cpExchange()).isEqualTo(io.meshplan.plan.ContextExchange.ALL_TO_ALL);
      assertThat(r.config().dataParallel()).isEqualTo(i < 2 ? 9 : 64);
      assertThat(r.config().globalBatchSize()).isEqualTo(i < 2 ? 9 : 64);
      assertThat(r.model().fp8ActivationInput()).isFalse();
      assertThat(r.measured()).isCloseTo(rates[i], within(0.1));
    }
  }

  /**
   * Each fits as it ran: on a B200 (171 GiB usable) the run needs its SwiGLU inputs in FP8
   * (145.6 GiB at its peak with the distributed optimizer's shard of the adapters' state; 35.0
   * GiB more with them in bf16).
   */
  @Test
  void eachFitsAsItRan() {
    for (PublicRun r : rows()) {
      SimulationResult s = r.simulate(Optional.empty());
      assertThat(s.peakMemoryBytesPerGpu()).as(r.cluster().toShortString())
          .isLessThan(r.cluster().gpu().hbmBytes());
    }
    PublicRun b200 = rows().get(0);
    SimulationResult s = b200.simulate(Optional.empty());
    assertThat(s.peakMemoryBytesPerGpu() / (double) (1L << 30)).isCloseTo(145.6, within(0.1));
    assertThat(b200.predicted(s)).isCloseTo(s.tokensPerSecond() / 8, within(1e-9));
  }
}
