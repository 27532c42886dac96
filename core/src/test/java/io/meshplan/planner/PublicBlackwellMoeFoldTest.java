package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.Architecture;
import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.Fp8Scaling;
import io.meshplan.plan.PipelineLayout;
import io.meshplan.sim.SimulationResult;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Megatron-Bridge's mixture-of-experts rows on GB200 and GB300 ({@code
 * folds/moe_mxfp8_blackwell.csv}) are stated as their recipes ran: MXFP8, Hybrid-EP, the
 * exchange overlapped except Nemotron 3 Nano's and Super's, DeepSeek-V3's 16-chunk layout, Super's
 * latent experts and repeated prediction depths, Lightning's prediction module on Nano's layers;
 * so stated each fits in its GPU's memory, as the runs did.
 */
class PublicBlackwellMoeFoldTest {
  private static List<PublicRun> rows() {
    return PublicFolds.all().stream().filter(r -> r.set().equals("bwmoe")).toList();
  }

  @Test
  void theRowsAreStatedAsTheirRecipesRan() {
    List<PublicRun> rows = rows();
    assertThat(rows).hasSize(12).allSatisfy(r -> {
      assertThat(r.fold()).isEqualTo("nemo");
      assertThat(r.cluster().gpu().architecture()).isEqualTo(Architecture.BLACKWELL);
      assertThat(r.model().fp8Scaling()).isEqualTo(Fp8Scaling.MXFP8);
      assertThat(r.overlaps().dispatcher()).isEqualTo(ExpertDispatcher.HYBRIDEP);
      // TP 1 but Nemotron 3 Super's on GB200 (TP 2 with sequence parallelism).
      boolean superOnGb200 = r.name().equals("nemotron-3-super-120b-a12b")
          && r.cluster().gpu().name().equals("gb200");
      assertThat(r.config().tensorParallel()).isEqualTo(superOnGb200 ? 2 : 1);
      assertThat(r.config().sequenceParallel()).isEqualTo(superOnGb200);
      // GPUs = TP x PP x DP at CP 1.
      assertThat(r.config().tensorParallel() * r.config().pipelineParallel()
          * r.config().dataParallel()).isEqualTo(r.cluster().gpuCount());
      assertThat(r.overlaps().moeComm()).isEqualTo(!r.name().startsWith("nemotron-3-"));
    });
    // Nemotron 3 Super: its experts in the latent width of 1,024 and two prediction depths on
    // the released module's one set of weights (mtp_num_layers 2, mtp_use_repeated_layer).
    List<PublicRun> sup = rows.stream()
        .filter(r -> r.name().equals("nemotron-3-super-120b-a12b")).toList();
    assertThat(sup).hasSize(2).allSatisfy(r -> {
      assertThat(r.model().arch().moe().latent()).isEqualTo(1024);
      assertThat(r.model().arch().mtpDepth()).isEqualTo(2);
      assertThat(r.model().arch().mtpShared()).isTrue();
      assertThat(r.model().parameterCount()).isEqualTo(123_611_012_096L);
    });
    // Nemotron 3.5 Lightning's recipe: Nano's layers (no module in the preset) with a module of
    // an attention and an expert layer at 2 depths on one set of weights, micro-batch 2.
    List<PublicRun> nano = rows.stream()
        .filter(r -> r.name().equals("nemotron-3-nano-30b-a3b")).toList();
    assertThat(nano).hasSize(2);
    assertThat(nano).filteredOn(r -> r.cluster().gpu().name().equals("gb300")).singleElement()
        .satisfies(r -> assertThat(r.model().arch().mtpDepth()).isZero());
    assertThat(nano).filteredOn(r -> r.cluster().gpu().name().equals("gb200")).singleElement()
        .satisfies(r -> {
          assertThat(r.model().arch().mtpDepth()).isEqualTo(2);
          assertThat(r.model().arch().mtpShared()).isTrue();
          assertThat(r.model().arch().hybrid().mtp()).isEqualTo("*E");
          assertThat(r.config().microBatchSize()).isEqualTo(2);
        });
    // DeepSeek-V3's "Et*4|(t*4|)*14tmL": 16 chunks holding 4 + 14 x 4 + 1 = 61 blocks, over PP
    // 2 x VP 8 on GB300 and PP 4 x VP 4 on GB200.
    List<PublicRun> dsv3 = rows.stream().filter(r -> r.name().equals("deepseek-v3")).toList();
    assertThat(dsv3).hasSize(2).allSatisfy(r -> {
      PipelineLayout l = (PipelineLayout) r.config().split();
      assertThat(l.chunks()).hasSize(16);
      assertThat(String.join("", l.chunks()).chars().filter(c -> c == 't').count())
          .isEqualTo(61);
      assertThat(r.config().pipelineParallel() * r.config().virtualStages()).isEqualTo(16);
    });
  }

  /**
   * Each fits, as it ran. Qwen3-30B-A3B on 8 GB200s: 512 x 4,096 = 2,097,152 tokens a step at
   * 39,936 tokens/s on each of 8 GPUs, 2,097,152 / 319,488 = 6.564 s.
   */
  @Test
  void eachRowFitsItsGpu() {
    int pinned = 0;
    for (PublicRun r : rows()) {
      SimulationResult s = r.simulate(Optional.empty());
      assertThat(s.peakMemoryBytesPerGpu()).as(r.name() + " on " + r.cluster().toShortString())
          .isLessThan(r.cluster().gpu().hbmBytes());
      if (r.name().equals("qwen3-30b-a3b") && r.cluster().gpu().name().equals("gb200")) {
        assertThat(r.measuredSeconds(s)).isCloseTo(6.564, org.assertj.core.data.Offset.offset(
            0.001));
        pinned++;
      }
    }
    assertThat(pinned).isEqualTo(1);
  }
}
