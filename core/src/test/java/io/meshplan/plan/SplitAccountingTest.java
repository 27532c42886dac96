package io.meshplan.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The split that counts the embedding and the loss as layers, against Megatron-Core's rule. */
class SplitAccountingTest {
  /**
   * Megatron-Core's {@code get_num_layers_to_build} for chunk {@code vp} of stage {@code pp},
   * transcribed step by step, or -1 where its asserts (and TransformerConfig's checks) fail.
   */
  private static int megatron(int layers, int stages, int chunks, boolean e, boolean l, int pp,
      int vp) {
    int n = layers + (e ? 1 : 0) + (l ? 1 : 0);
    if (n % stages != 0) {
      return -1;
    }
    int perRank = n / stages;
    if (perRank % chunks != 0) {
      return -1;
    }
    int build = perRank / chunks;
    if (e && pp == 0 && vp == 0) {
      build -= 1;
    }
    if (l && pp == stages - 1 && vp == chunks - 1) {
      build -= 1;
    }
    return build;
  }

  @Test
  void chunksMatchMegatronOnSeededRandomShapes() {
    Random rnd = new Random(20261127);
    int checked = 0;
    for (int i = 0; i < 5000; i++) {
      int layers = 1 + rnd.nextInt(130);
      int stages = 1 + rnd.nextInt(16);
      int chunks = 1 + rnd.nextInt(6);
      SplitAccounting s = new SplitAccounting(rnd.nextBoolean(), rnd.nextBoolean());
      if (!s.any()) {
        continue;
      }
      int[] want = new int[stages * chunks];
      boolean legal = true;
      for (int k = 0; k < want.length; k++) {
        // Chunk k runs on stage k mod stages as its (k / stages)-th chunk.
        want[k] = megatron(layers, stages, chunks, s.embedding(), s.loss(), k % stages,
            k / stages);
        legal &= want[k] >= 1;
      }
      if (legal) {
        s.check(layers, stages, chunks, false);
        int[] got = s.chunkLayers(layers, stages, chunks);
        assertThat(got).as(layers + " layers, " + stages + "x" + chunks + " " + s)
            .containsExactly(want);
        assertThat(Arrays.stream(got).sum()).isEqualTo(layers);
        checked++;
      } else {
        assertThatThrownBy(() -> s.check(layers, stages, chunks, false))
            .isInstanceOf(InputException.class);
      }
    }
    assertThat(checked).isGreaterThan(100);
  }

  @Test
  void qwen3MoeRecipeLaysNinetyFourLayersInThirtyTwoChunks() {
    // Megatron-Bridge's Qwen3-235B recipe: PP 8, VP 4, both counted: (94 + 2) / 32 = 3 a chunk,
    // the first and last chunk 2.
    int[] c = new SplitAccounting(true, true).chunkLayers(94, 8, 4);
    assertThat(c).hasSize(32);
    assertThat(c[0]).isEqualTo(2);
    assertThat(c[31]).isEqualTo(2);
    assertThat(Arrays.stream(c, 1, 31)).allMatch(n -> n == 3);
  }

  @Test
  void notWithStatedStages() {
    assertThatThrownBy(() -> new SplitAccounting(true, false).check(31, 4, 1, true))
        .isInstanceOf(InputException.class).hasMessageContaining("cannot be given with");
  }
}
