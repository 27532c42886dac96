package io.meshplan.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/** Megatron-Core's uneven first and last pipeline stages in {@link ParallelConfig#check}. */
class ParallelConfigTest {
  /** tp 1 x pp x dp 1 on pp GPUs, 4 x pp microbatches of one sequence. */
  private static ParallelConfig pipeline(int pp, int vpp, int first, int last) {
    return new ParallelConfig(1, pp, 1, vpp, 1, 4 * pp, Recompute.NONE, false, 0, first, last);
  }

  private static void refused(ParallelConfig c, int layers, String message) {
    assertThatThrownBy(() -> c.check(c.gpus(), layers, 8, 8)).isInstanceOf(InputException.class)
        .hasMessageContaining(message);
  }

  @Test
  void bloomsSeventyLayersOnTwelveStages() {
    // 70 - 5 - 5 = 60 layers over the 10 middle stages: 6 each.
    ParallelConfig c = pipeline(12, 1, 5, 5);
    c.check(12, 70, 8, 8);
    assertThat(c.chunkLayers(70)).containsExactly(5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5);
    // Llama 3 405B's 126 layers on 16 stages, 7 on the first and last: (126 - 7 - 7) / 14 = 8.
    ParallelConfig llama = pipeline(16, 1, 7, 7);
    llama.check(16, 126, 8, 8);
    assertThat(llama.chunkLayers(126)).startsWith(7, 8).endsWith(8, 7).hasSize(16);
  }

  @Test
  void oneStatedStageLeavesTheRestToTheOthers() {
    // First 2 of 14: (14 - 2) / 3 = 4 on each of the other three stages, the last included.
    ParallelConfig first = pipeline(4, 1, 2, 0);
    first.check(4, 14, 8, 8);
    assertThat(first.chunkLayers(14)).containsExactly(2, 4, 4, 4);
    ParallelConfig last = pipeline(4, 1, 0, 2);
    last.check(4, 14, 8, 8);
    assertThat(last.chunkLayers(14)).containsExactly(4, 4, 4, 2);
  }

  @Test
  void virtualStagesSplitEveryStageIntoEqualChunks() {
    // pp 4 x vpp 2 on 30 layers, first 6 and last 4: middle (30 - 10) / 2 = 10 per stage.
    // Chunk k runs on stage k mod 4 with a half of its stage: 3, 5, 5, 2 then again.
    ParallelConfig c = pipeline(4, 2, 6, 4);
    c.check(4, 30, 8, 8);
    assertThat(c.chunkLayers(30)).containsExactly(3, 5, 5, 2, 3, 5, 5, 2);
  }

  @Test
  void twoStagesMustHoldAllLayersBetweenThem() {
    pipeline(2, 1, 30, 40).check(2, 70, 8, 8);
    refused(pipeline(2, 1, 30, 30), 70,
        "first-stage layers 30 + last-stage layers 30 must add up to the model's 70 layers");
    // With only the first stated on two stages, the last takes the remaining 40.
    assertThat(pipeline(2, 1, 30, 0).chunkLayers(70)).containsExactly(30, 40);
  }

  @Test
  void refusesWhatMegatronCoreRefuses() {
    refused(pipeline(12, 1, 71, 0), 70, "first-stage layers 71 exceed the model's 70 layers");
    refused(pipeline(12, 1, 40, 40), 70,
        "first-stage layers 40 + last-stage layers 40 exceed the model's 70 layers");
    // 70 - 6 - 5 = 59 over 10 stages.
    refused(pipeline(12, 1, 6, 5), 70, "the 59 layers left after first-stage layers 6 + "
        + "last-stage layers 5 are not divisible by the other 10 pipeline stages");
    refused(pipeline(12, 1, 35, 35), 70, "leave no layers for the other 10 pipeline stages");
    // Megatron-Core: "number of layers at first stage ... must be divisible by virtual pipeline
    // parallel degree".
    refused(pipeline(4, 2, 5, 5), 30, "first-stage layers 5 are not divisible by virtual stages 2");
    refused(pipeline(4, 2, 6, 5), 30, "last-stage layers 5 are not divisible by virtual stages 2");
    // Middle 30 - 4 - 4 = 22 over 2 stages = 11 each, not a multiple of 2 chunks.
    refused(pipeline(4, 2, 4, 4), 30, "the 22 layers left after first-stage layers 4 + last-stage"
        + " layers 4 are not divisible by the other 2 pipeline stages x virtual stages 2");
    refused(pipeline(1, 1, 70, 0), 70, "need pipeline-parallel size of at least 2, got 1");
    assertThatThrownBy(() -> pipeline(4, 1, -1, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("first-stage layers must be positive");
  }

  @Test
  void withoutStatedStagesTheLayersMustDivide() {
    refused(pipeline(12, 1, 0, 0), 70, "unless first-stage layers or last-stage layers are given");
    assertThat(pipeline(4, 1, 0, 0).unevenStages()).isFalse();
    assertThat(pipeline(4, 1, 0, 0).withStageLayers(2, 0).unevenStages()).isTrue();
    // The old constructors keep the even split.
    assertThat(new ParallelConfig(1, 4, 1, 1, 1, 16, Recompute.NONE, false, 1))
        .isEqualTo(pipeline(4, 1, 0, 0).withZeroStage(1));
  }
}
