package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.graph.DType;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ContextExchange;
import io.meshplan.util.InputException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * torchtitan's published runs ({@code folds/heldout_torchtitan.csv}) and other submitters' MLPerf
 * runs of NVIDIA's implementation on Hopper ({@code folds/heldout_mlperf.csv}) are held out of
 * every fold: no fit sees them, {@code --folds} cannot name torchtitan, and each is stated as its
 * page, config and logs ran it.
 */
class PublicHeldOutTest {
  private static final List<PublicRun> HELD = PublicFolds.heldOut();
  private static final List<PublicRun> RUNS = HELD.subList(0, 12);
  private static final List<PublicRun> MLPERF = HELD.subList(12, HELD.size());

  @Test
  void theyAreInNoFold() {
    assertThat(RUNS).allSatisfy(r -> assertThat(r.fold()).isEqualTo("torchtitan"));
    assertThat(MLPERF).hasSize(24).allSatisfy(r -> assertThat(r.set()).startsWith("mlp"));
    assertThat(PublicFolds.NAMES).doesNotContain("torchtitan");
    assertThat(PublicFolds.all()).noneMatch(r -> r.fold().equals("torchtitan")
        || r.set().startsWith("mlph") || r.set().startsWith("mlpb"));
    assertThatThrownBy(() -> PublicFolds.of(List.of("torchtitan")))
        .isInstanceOf(InputException.class).hasMessageContaining("is not a public fold");
    // No held-out run is a fold's run under another name: no fold has a run of the same
    // figure on the same cluster and layout.
    for (PublicRun h : HELD) {
      assertThat(PublicFolds.all()).noneMatch(r -> r.measured() == h.measured()
          && r.cluster().equals(h.cluster()) && r.config().equals(h.config()));
    }
  }

  @Test
  void theMlperfRowsAreStatedAsTheirLogsPrintThem() {
    // Cisco's H100 rows: TP 4 with sequence parallelism and its overlap, CP 2 over the ring,
    // one sequence a replica; the H200 one-node rows: TP 1, CP 2, DP 4, two micro-batches; the
    // two-node H200 row: TP 2 with sequence parallelism, no overlap.
    int[][] layouts = {{4, 2, 8, 64}, {4, 2, 16, 128}, {1, 2, 4, 8}, {1, 2, 4, 8}, {2, 1, 8, 16}};
    for (int i = 0; i < layouts.length; i++) {
      PublicRun r = MLPERF.get(i);
      assertThat(r.config().tensorParallel()).isEqualTo(layouts[i][0]);
      assertThat(r.config().contextParallel()).isEqualTo(layouts[i][1]);
      assertThat(r.config().dataParallel()).isEqualTo(layouts[i][2]);
      assertThat(r.cluster().gpuCount()).isEqualTo(layouts[i][3]);
      assertThat(r.config().cpExchange()).isEqualTo(ContextExchange.P2P);
      assertThat(r.model().lora().rank()).isEqualTo(16);
      assertThat(r.model().lora().fp8Base()).isTrue();
      assertThat(r.kernel()).contains(AttentionKernel.CUDNN);
    }
    assertThat(MLPERF.get(0).overlaps().tensorComm()).isTrue();
    assertThat(MLPERF.get(4).overlaps().tensorComm()).isFalse();
    assertThat(MLPERF.get(4).config().sequenceParallel()).isTrue();
    assertThat(MLPERF.get(2).model().fp8ActivationInput()).isTrue();
    assertThat(MLPERF.get(0).model().fp8ActivationInput()).isFalse();
  }

  @Test
  void theEightGpuRowsAreStatedAsTable1RanThem() {
    // Table 1: FSDP over 8 GPUs (ZeRO-3), local batch 2 (one micro-batch of 2, global 16),
    // per-op selective checkpointing, SDPA's FlashAttention-2 kernel, 500 W H100s; bf16 at 6,667
    // and Float8 at 8,532 tokens/s per GPU.
    PublicRun bf16 = RUNS.get(0);
    PublicRun fp8 = RUNS.get(1);
    for (PublicRun r : List.of(bf16, fp8)) {
      assertThat(r.cluster().toShortString()).isEqualTo("1x8:h100-96gb-hbm2e:ib-ndr400");
      assertThat(r.config().zeroStage()).isEqualTo(3);
      assertThat(r.config().dataParallel()).isEqualTo(8);
      assertThat(r.config().microBatchSize()).isEqualTo(2);
      assertThat(r.config().globalBatchSize()).isEqualTo(16);
      assertThat(r.config().recompute()).isEqualTo(Recompute.OP);
      assertThat(r.kernel()).contains(AttentionKernel.FLASH2);
      // The loss was not compiled at 9dec370: an fp32 loss, not the fused one.
      assertThat(r.overlaps().lossFusion()).isFalse();
    }
    assertThat(bf16.dtype()).isEqualTo(DType.BF16);
    assertThat(bf16.measured()).isEqualTo(6667.0);
    assertThat(io.meshplan.model.Fp8Training.on(fp8.dtype())).isTrue();
    assertThat(fp8.model().fp8Scaling()).isEqualTo(io.meshplan.model.Fp8Scaling.TENSORWISE);
    assertThat(fp8.measured()).isEqualTo(8532.0);
  }

  @Test
  void theLongSequenceRowsAllGatherKeysAndValues() {
    // Table 2: 65,536, 131,072 and 262,144 tokens over CP 2, 4 and 8 of the 8 GPUs, one sequence
    // a data-parallel rank, full checkpointing.
    int[][] rows = {{5, 65_536, 2, 4}, {6, 131_072, 4, 2}, {7, 262_144, 8, 1}};
    for (int[] x : rows) {
      PublicRun r = RUNS.get(x[0]);
      assertThat(r.model().seq()).isEqualTo(x[1]);
      assertThat(r.config().contextParallel()).isEqualTo(x[2]);
      assertThat(r.config().dataParallel()).isEqualTo(x[3]);
      assertThat(r.config().globalBatchSize()).isEqualTo(x[3]);
      assertThat(r.config().cpExchange()).isEqualTo(ContextExchange.ALL_GATHER);
      assertThat(r.config().recompute()).isEqualTo(Recompute.FULL);
    }
  }

  @Test
  void theH200RowsGatherFp8WeightsAndCompileTheLoss() {
    // Trainy's 32 and 64 H200s at e7c0cae: Float8 with the FSDP all-gather in FP8, the loss
    // compiled (components/loss.py at e7c0cae).
    for (PublicRun r : RUNS.subList(10, 12)) {
      assertThat(r.cluster().gpu().name()).isEqualTo("h200-141gb");
      assertThat(r.model().lora().fp8Base()).isTrue();
      assertThat(r.overlaps().lossFusion()).isTrue();
      assertThat(r.config().microBatchSize()).isEqualTo(2);
    }
    assertThat(RUNS.get(10).cluster().gpuCount()).isEqualTo(32);
    assertThat(RUNS.get(11).cluster().gpuCount()).isEqualTo(64);
  }

  @Test
  void theBlackwellRowsAreStatedAsTheirConfigsRanThem() {
    // University of Florida's one-node LoRA config keeps the SwiGLU input in FP8 (FP8_ACT=1); its
    // CP 8 config does not.
    PublicRun n1 = MLPERF.stream().filter(r -> r.set().equals("mlpbl")).findFirst().orElseThrow();
    assertThat(n1.cluster().gpuCount()).isEqualTo(8);
    assertThat(n1.model().fp8ActivationInput()).isTrue();
    PublicRun cp8 = MLPERF.stream().filter(r -> r.set().equals("mlpbl")
        && r.config().contextParallel() == 8).findFirst().orElseThrow();
    assertThat(cp8.model().fp8ActivationInput()).isFalse();
    assertThat(cp8.config().cpExchange()).isEqualTo(ContextExchange.ALL_TO_ALL);
    // Llama 3.1 405B on 32 B200 nodes: TP 4, PP 8 with 8 virtual stages, CP 2, DP 4, 144
    // microbatches of one sequence: global batch 576.
    PublicRun b405 = MLPERF.stream().filter(r -> r.name().equals("llama3.1-405b")).findFirst()
        .orElseThrow();
    assertThat(b405.config().tensorParallel()).isEqualTo(4);
    assertThat(b405.config().pipelineParallel()).isEqualTo(8);
    assertThat(b405.config().virtualStages()).isEqualTo(8);
    assertThat(b405.config().contextParallel()).isEqualTo(2);
    assertThat(b405.config().dataParallel()).isEqualTo(4);
    assertThat(b405.config().globalBatchSize()).isEqualTo(576);
    assertThat(b405.cluster().gpuCount()).isEqualTo(256);
  }

  @Test
  void everyRowFitsInItsGpusMemory() {
    // The pages report 61.8-84.5 GiB reserved on the 96 GB H100s and 47-48 GiB on the H200s;
    // each row is a configuration that ran, so meshplan's estimate must fit.
    for (PublicRun r : HELD) {
      double peak = r.simulate(Optional.empty()).peakMemoryBytesPerGpu();
      assertThat(peak).as(r.set() + " " + r.cluster()).isLessThanOrEqualTo(
          r.cluster().gpu().hbmBytes());
    }
  }
}
