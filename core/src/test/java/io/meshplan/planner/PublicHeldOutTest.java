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
 * torchtitan's published runs ({@code folds/heldout_torchtitan.csv}) are held out of every fold:
 * no fit sees them, {@code --folds} cannot name them, and each is stated as its page and config
 * ran it.
 */
class PublicHeldOutTest {
  private static final List<PublicRun> RUNS = PublicFolds.heldOut();

  @Test
  void theyAreInNoFold() {
    assertThat(RUNS).hasSize(12).allSatisfy(r -> assertThat(r.fold()).isEqualTo("torchtitan"));
    assertThat(PublicFolds.NAMES).doesNotContain("torchtitan");
    assertThat(PublicFolds.all()).noneMatch(r -> r.fold().equals("torchtitan"));
    assertThatThrownBy(() -> PublicFolds.of(List.of("torchtitan")))
        .isInstanceOf(InputException.class).hasMessageContaining("is not a public fold");
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
  void everyRowFitsInItsGpusMemory() {
    // The pages report 61.8-84.5 GiB reserved on the 96 GB H100s and 47-48 GiB on the H200s;
    // each row is a configuration that ran, so meshplan's estimate must fit.
    for (PublicRun r : RUNS) {
      double peak = r.simulate(Optional.empty()).peakMemoryBytesPerGpu();
      assertThat(peak).as(r.set() + " " + r.cluster()).isLessThanOrEqualTo(
          r.cluster().gpu().hbmBytes());
    }
  }
}
