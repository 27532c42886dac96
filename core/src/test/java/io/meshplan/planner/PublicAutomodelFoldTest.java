package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.graph.DType;
import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.OptimizerState;
import io.meshplan.model.Recompute;
import io.meshplan.sim.SimulationResult;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * NeMo AutoModel's H100 rows ({@code folds/automodel_h100.csv}) form their own fold, {@code
 * automodel}, stated as their recipes ran: FSDP2 as ZeRO-3 over the whole data-parallel group
 * (no hybrid sharding: dp_replicate_size 1), each row's attention kernel, LoRA adapters on every
 * projection, gradients reduced in fp32 and PyTorch's unfused cross-entropy. Its four
 * mixture-of-experts rows keep bf16 optimizer state ({@link OptimizerState#BF16}: torch.optim.Adam
 * on a bf16 model, no master copy) and, so stated, fit in 80 GB.
 */
class PublicAutomodelFoldTest {
  private static List<PublicRun> rows() {
    return PublicFolds.all().stream().filter(r -> r.fold().equals("automodel")).toList();
  }

  @Test
  void everyRowIsBf16ShardedOverTheWholeGroupWithFp32ReductionAndUnfusedLoss() {
    List<PublicRun> rows = rows();
    assertThat(rows).extracting(PublicRun::name).containsExactly("llama3.1-70b", "llama3.1-8b",
        "llama3.1-70b", "llama3.1-70b", "qwen3-30b-a3b", "gpt-oss-20b",
        "nemotron-3-nano-30b-a3b", "deepseek-v3", "nemotron-3-super-120b-a12b");
    assertThat(PublicFolds.NAMES).contains("automodel");
    assertThat(PublicFolds.of(List.of("automodel"))).hasSize(9);
    for (PublicRun r : rows) {
      assertThat(r.dtype()).isEqualTo(DType.BF16);
      // FSDP2 without a pipeline: ZeRO-3; under DeepSeek-V3's pipeline, gathered and reduced
      // once a step: ZeRO-1.
      assertThat(r.config().zeroStage()).isEqualTo(r.config().pipelineParallel() > 1 ? 1 : 3);
      assertThat(r.config().shardGroup()).isZero();
      assertThat(r.overlaps().bf16GradReduce()).isFalse();
      assertThat(r.overlaps().lossFusion()).isFalse();
      assertThat(r.cluster().gpu().name()).startsWith("h100");
    }
  }

  @Test
  void theDenseRowsRunFlashAttention2() {
    List<PublicRun> rows = rows().subList(0, 4);
    assertThat(rows).extracting(PublicRun::kernel).containsOnly(
        Optional.of(AttentionKernel.FLASH2));
    assertThat(rows).noneMatch(r -> r.model().arch().moe().routed());
    assertThat(rows).allMatch(r -> r.model().optimizerState() == OptimizerState.FP32);
    PublicRun pre = rows.get(0);
    SimulationResult s = pre.simulate(Optional.empty());
    // 128 x 8,192 = 1,048,576 tokens a step at 866.77 tokens/s on each of 64 GPUs:
    // 1,048,576 / 55,473.28 = 18.902 s.
    assertThat(pre.measuredSeconds(s)).isBetween(18.90, 18.91);
    assertThat(pre.config().recompute()).isEqualTo(Recompute.FULL);
  }

  /**
   * The five mixture-of-experts rows as their recipes ran: bf16 optimizer state, DeepEP, full
   * recomputation, EP 8 over 8 GPUs (DeepSeek-V3: EP 64, PP 4 in 32 stages of its layout, no
   * multi-token prediction; Nemotron 3 Super: EP 64 over 64, its latent experts, no prediction
   * module), each attention kernel; and each fits in 80 GB, which with fp32 master weights and
   * moments Qwen3 does not.
   */
  @Test
  void theExpertRowsKeepBf16StateAndFit() {
    List<PublicRun> rows = rows().subList(4, 9);
    assertThat(rows).extracting(PublicRun::kernel).containsExactly(
        Optional.of(AttentionKernel.CUDNN), Optional.of(AttentionKernel.TRITON),
        Optional.of(AttentionKernel.FLASH2), Optional.of(AttentionKernel.CUDNN),
        Optional.of(AttentionKernel.FLASH2));
    // Tokens per second per GPU of the table, and the local batches: 512 / (8 x 4) = 16
    // accumulation steps, 256 / (8 x 2) = 16, 512 / (8 x 4) = 16, 512 / 64 = 8 microbatches,
    // 512 / (64 x 2) = 4.
    assertThat(rows).extracting(PublicRun::measured).containsExactly(12040.0, 13058.0, 16789.0,
        1002.0, 4497.0);
    assertThat(rows).extracting(r -> r.config().microBatchSize()).containsExactly(4, 2, 4, 1, 2);
    PublicRun sup = rows.get(4);
    assertThat(sup.model().arch().mtpDepth()).isZero();
    assertThat(sup.model().arch().moe().latent()).isEqualTo(1024);
    // 123,611,012,096 less the prediction module's 2,942,324,736.
    assertThat(sup.model().parameterCount()).isEqualTo(120_668_687_360L);
    for (PublicRun r : rows) {
      assertThat(r.model().optimizerState()).as(r.name()).isEqualTo(OptimizerState.BF16);
      assertThat(r.model().arch().moe().routed()).as(r.name()).isTrue();
      assertThat(r.set()).isEqualTo("moe");
      assertThat(r.overlaps().dispatcher()).isEqualTo(ExpertDispatcher.DEEPEP);
      assertThat(r.config().recompute()).isEqualTo(Recompute.FULL);
      assertThat(r.config().expertParallel()).isEqualTo(r.cluster().gpuCount() == 8 ? 8 : 64);
      assertThat(r.simulate(Optional.empty()).peakMemoryBytesPerGpu()).as(r.name())
          .isLessThan(80e9);
    }
    PublicRun ds = rows.get(3);
    assertThat(ds.cluster().gpuCount()).isEqualTo(256);
    assertThat(ds.config().pipelineParallel()).isEqualTo(4);
    assertThat(ds.config().virtualStages()).isEqualTo(8);
    assertThat(ds.config().dataParallel()).isEqualTo(64);
    assertThat(ds.model().arch().mtpDepth()).isZero();
    PublicRun qwen = rows.get(0);
    PublicRun fp32 = new PublicRun(qwen.fold(), qwen.set(), qwen.name(),
        qwen.model().withOptimizerState(OptimizerState.FP32), qwen.cluster(), qwen.config(),
        qwen.dtype(), qwen.attention(), qwen.kernel(), qwen.overlaps(), qwen.measured(),
        qwen.figure());
    assertThat(fp32.simulate(Optional.empty()).peakMemoryBytesPerGpu()).isGreaterThan(
        qwen.cluster().gpu().hbmBytes());
  }

  @Test
  void theContextParallelRowAllGathersKeysAndValues() {
    PublicRun r = rows().get(0);
    assertThat(r.config().contextParallel()).isEqualTo(2);
    assertThat(r.config().cpAllGather()).isTrue();
    assertThat(r.config().dataParallel()).isEqualTo(32);
    assertThat(r.model().seq()).isEqualTo(8192);
    assertThat(r.simulate(Optional.empty()).peakMemoryBytesPerGpu())
        .isLessThan(r.cluster().gpu().hbmBytes());
  }

  @Test
  void theLoraRowsTrainRank16AdaptersOnEveryProjection() {
    List<PublicRun> rows = rows().subList(1, 4);
    // Llama 3.1 8B (32 layers, hidden 4,096, 8 KV heads of 128, MLP 14,336), r (in + out) per
    // projection: q and o 16 x 8,192 = 131,072 each, k and v 16 x 5,120 = 81,920 each, gate,
    // up and down 16 x 18,432 = 294,912 each; 1,310,720 a layer, x 32 = 41,943,040.
    assertThat(rows.get(0).model().trainableParameterCount()).isEqualTo(41_943_040L);
    // Llama 3.1 70B (80 layers, hidden 8,192, 8 KV heads of 128, MLP 28,672): q and o
    // 16 x 16,384 = 262,144, k and v 16 x 9,216 = 147,456, gate, up and down 16 x 36,864 =
    // 589,824; 2,588,672 a layer, x 80 = 207,093,760.
    assertThat(rows.get(1).model().trainableParameterCount()).isEqualTo(207_093_760L);
    assertThat(rows.get(0).cluster().gpuCount()).isEqualTo(1);
    assertThat(rows.get(0).config().recompute()).isEqualTo(Recompute.NONE);
    for (PublicRun r : rows.subList(1, 3)) {
      assertThat(r.config().tensorParallel()).isEqualTo(2);
      assertThat(r.config().sequenceParallel()).isTrue();
      assertThat(r.overlaps().tensorComm()).isTrue();
      assertThat(r.config().recompute()).isEqualTo(Recompute.FULL);
    }
    assertThat(rows.get(1).config().dataParallel()).isEqualTo(4);
    assertThat(rows.get(2).config().dataParallel()).isEqualTo(8);
    for (PublicRun r : rows) {
      assertThat(r.model().lora().on()).isTrue();
      assertThat(r.model().lora().rank()).isEqualTo(16);
      assertThat(r.simulate(Optional.empty()).peakMemoryBytesPerGpu())
          .isLessThan(r.cluster().gpu().hbmBytes());
    }
  }
}
