package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.graph.DType;
import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.Recompute;
import io.meshplan.sim.SimulationResult;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * NeMo AutoModel's H100 rows ({@code folds/automodel_h100.csv}) form their own fold, {@code
 * automodel}, stated as their recipes ran: FSDP2 as ZeRO-3 over the whole data-parallel group
 * (no hybrid sharding: dp_replicate_size 1), DeepEP for the experts, each row's attention
 * kernel, LoRA adapters on every projection, gradients reduced in fp32 and PyTorch's unfused
 * cross-entropy.
 */
class PublicAutomodelFoldTest {
  private static List<PublicRun> rows() {
    return PublicFolds.all().stream().filter(r -> r.fold().equals("automodel")).toList();
  }

  @Test
  void everyRowIsBf16Zero3OverTheWholeGroupWithFp32ReductionAndUnfusedLoss() {
    List<PublicRun> rows = rows();
    assertThat(rows).extracting(PublicRun::name).containsExactly("qwen3-30b-a3b", "gpt-oss-20b",
        "nemotron-3-nano-30b-a3b", "llama3.1-70b", "llama3.1-8b", "llama3.1-70b",
        "llama3.1-70b", "deepseek-v3");
    assertThat(PublicFolds.NAMES).contains("automodel");
    assertThat(PublicFolds.of(List.of("automodel"))).hasSize(8);
    for (PublicRun r : rows) {
      assertThat(r.dtype()).isEqualTo(DType.BF16);
      // FSDP2 without a pipeline: ZeRO-3; under one, gathered once a step (see the last test).
      assertThat(r.config().zeroStage()).isEqualTo(r.config().pipelineParallel() > 1 ? 1 : 3);
      assertThat(r.config().shardGroup()).isZero();
      assertThat(r.overlaps().bf16GradReduce()).isFalse();
      assertThat(r.overlaps().lossFusion()).isFalse();
      assertThat(r.cluster().gpu().name()).startsWith("h100");
    }
  }

  @Test
  void theExpertRowsDispatchWithDeepEpAndRunTheirRecipesAttention() {
    List<PublicRun> rows = rows();
    assertThat(rows).extracting(PublicRun::kernel).containsExactly(
        Optional.of(AttentionKernel.CUDNN), Optional.of(AttentionKernel.TRITON),
        Optional.of(AttentionKernel.FLASH2), Optional.of(AttentionKernel.FLASH2),
        Optional.of(AttentionKernel.FLASH2), Optional.of(AttentionKernel.FLASH2),
        Optional.of(AttentionKernel.FLASH2), Optional.of(AttentionKernel.CUDNN));
    assertThat(rows.get(7).overlaps().dispatcher()).isEqualTo(ExpertDispatcher.DEEPEP);
    for (PublicRun r : rows.subList(0, 3)) {
      assertThat(r.overlaps().dispatcher()).isEqualTo(ExpertDispatcher.DEEPEP);
      assertThat(r.config().expertParallel()).isEqualTo(8);
      assertThat(r.config().dataParallel()).isEqualTo(8);
      assertThat(r.config().recompute()).isEqualTo(Recompute.FULL);
    }
    PublicRun qwen = rows.get(0);
    SimulationResult s = qwen.simulate(Optional.empty());
    // 512 x 4,096 = 2,097,152 tokens a step at 12,040 tokens/s on each of 8 GPUs:
    // 2,097,152 / 96,320 = 21.773 s.
    assertThat(qwen.measuredSeconds(s)).isBetween(21.77, 21.78);
    // The run kept bf16 weights and Adam moments (no fp32 master); meshplan holds fp32 master
    // weights and moments, so its estimate exceeds the H100's 80 GB (the data file says so).
    assertThat(s.peakMemoryBytesPerGpu()).isGreaterThan(qwen.cluster().gpu().hbmBytes());
  }

  @Test
  void theContextParallelRowAllGathersKeysAndValues() {
    PublicRun r = rows().get(3);
    assertThat(r.config().contextParallel()).isEqualTo(2);
    assertThat(r.config().cpAllGather()).isTrue();
    assertThat(r.config().dataParallel()).isEqualTo(32);
    assertThat(r.model().seq()).isEqualTo(8192);
    assertThat(r.simulate(Optional.empty()).peakMemoryBytesPerGpu())
        .isLessThan(r.cluster().gpu().hbmBytes());
  }

  @Test
  void theLoraRowsTrainRank16AdaptersOnEveryProjection() {
    List<PublicRun> rows = rows().subList(4, 7);
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

  @Test
  void deepSeekRunsAutoPipelinesSplitWithoutPredictionModuleGatheringOnceAStep() {
    PublicRun r = rows().get(7);
    // AutoModel's DeepseekV3ForCausalLM has no multi-token-prediction module: the preset's
    // count less the module's, the model card's 671B.
    assertThat(r.model().arch().mtpDepth()).isZero();
    assertThat(r.model().parameterCount()).isEqualTo(671_026_404_352L);
    assertThat(r.model().parameterCount()).isLessThan(
        io.meshplan.model.Presets.get("deepseek-v3").parameterCount());
    // ceil(61 / 2) + 1 = 32 stages over PP 4: 8 virtual stages a rank.
    assertThat(r.config().pipelineParallel()).isEqualTo(4);
    assertThat(r.config().virtualStages()).isEqualTo(8);
    assertThat(r.config().dataParallel()).isEqualTo(64);
    assertThat(r.config().expertParallel()).isEqualTo(64);
    // torch's pipeline stage gathers weights and reduce-scatters gradients once a step.
    assertThat(r.config().zeroStage()).isEqualTo(1);
    SimulationResult s = r.simulate(Optional.empty());
    // 512 x 4,096 = 2,097,152 tokens at 1,002 tokens/s on each of 256 GPUs: 8.176 s.
    assertThat(r.measuredSeconds(s)).isBetween(8.17, 8.18);
  }
}
