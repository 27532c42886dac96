package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import org.junit.jupiter.api.Test;

/** Kept activations of built blocks against Korthikanti et al.'s closed forms. */
class ActivationMemoryTest {
  /** A small Megatron GPT: h = 256, a = 8, s = 128, b = 2 (bf16, dropout, biases). */
  private static final ModelSpec GPT = new ModelSpec("gpt-small", ModelSpec.Family.GPT, 4, 256,
      8, 8, 1024, 1000, 128, 2, DType.BF16);

  private static long saved(Recompute r) {
    return saved(r, Attention.UNFUSED);
  }

  private static long saved(Recompute r, Attention a) {
    TrainingGraph tg = TrainingGraphBuilder.build(GPT,
        TrainingOptions.oneBlock(GPT, 2, 128).withRecompute(r).withAttention(a));
    return ActivationMemory.savedBytes(tg, LayerRef.block(0));
  }

  /**
   * s = 128, b = 2, h = 256, a = 8: sbh = 65,536 and as^2b = 262,144. Korthikanti et al. section
   * 4.1, term by term, 16-bit values and 1-byte masks:
   * attention: QKV input 2sbh, Q and K 4sbh, softmax output 2as^2b, its dropout mask as^2b,
   * dropout output 2as^2b, V 2sbh, projection input 2sbh, projection dropout mask sbh
   * = 11sbh + 5as^2b; MLP: input 2sbh, GeLU input 8sbh, GeLU output 8sbh, dropout mask sbh =
   * 19sbh; the two LayerNorm inputs 4sbh. Total 34 * 65,536 + 5 * 262,144 = 2,228,224 +
   * 1,310,720 = 3,538,944 = sbh (34 + 5as/h) with 5as/h = 5 * 8 * 128 / 256 = 20.
   */
  @Test
  void noRecomputationMatchesTheClosedForm() {
    assertThat(saved(Recompute.NONE)).isEqualTo(3_538_944L);
    assertThat(KorthikantiActivations.bytesPerLayer(128, 2, 256, 8, 1, Recompute.NONE, false))
        .isEqualTo(3_538_944.0);
  }

  /** Selective: the 5as^2b of the attention core is recomputed: 34 sbh = 2,228,224. */
  @Test
  void selectiveRecomputationMatchesTheClosedForm() {
    assertThat(saved(Recompute.SELECTIVE)).isEqualTo(2_228_224L);
    assertThat(KorthikantiActivations.bytesPerLayer(128, 2, 256, 8, 1, Recompute.SELECTIVE,
        false)).isEqualTo(2_228_224.0);
  }

  /** Full: only the block input, 2 sbh = 131,072. */
  @Test
  void fullRecomputationMatchesTheClosedForm() {
    assertThat(saved(Recompute.FULL)).isEqualTo(131_072L);
    assertThat(KorthikantiActivations.bytesPerLayer(128, 2, 256, 8, 1, Recompute.FULL, false))
        .isEqualTo(131_072.0);
  }

  /**
   * Fused attention keeps Q, K, V and its output (Korthikanti's 8sbh of them) and nothing of size
   * s x s: the 5as^2b term goes, softmax, dropout mask and dropout output alike (the kernel draws
   * its dropout from a seed). 34 sbh = 2,228,224 without recomputation and with selective
   * recomputation (nothing is left to recompute); the block input alone, 131,072, with full.
   */
  @Test
  void flashAttentionKeepsNoScores() {
    assertThat(saved(Recompute.NONE, Attention.FLASH)).isEqualTo(2_228_224L);
    assertThat(saved(Recompute.SELECTIVE, Attention.FLASH)).isEqualTo(2_228_224L);
    assertThat(saved(Recompute.FULL, Attention.FLASH)).isEqualTo(131_072L);
    TrainingGraph tg = TrainingGraphBuilder.build(GPT,
        TrainingOptions.oneBlock(GPT, 2, 128).withAttention(Attention.FLASH));
    for (var ins : tg.graph().instructions()) {
      if (ins.shape() instanceof io.meshplan.graph.TensorShape t && t.rank() == 4) {
        // [b, s, a, d] = [2, 128, 8, 32]; no [b, a, s, s] score tensor.
        assertThat(t.dim(3)).as(ins.name()).isNotEqualTo(128);
      }
    }
  }
}
