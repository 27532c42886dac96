package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * torchtitan's per-op selective checkpointing ({@link Recompute#OP}) on the training graph: the
 * policy of {@code SelectiveAC} in torchtitan's {@code distributed/activation_checkpoint.py}
 * saves the 1st, 3rd, 5th... matrix multiplication of a block and the attention kernel's output,
 * and the block is replayed whole before its backward, reusing them.
 */
class PerOpRecomputeTest {
  /** A LLaMA block: 64 tokens, hidden 64, 4 heads of 16, 2 key/value heads, SwiGLU of 128. */
  private static final ModelSpec TINY = tiny();

  private static ModelSpec tiny() {
    ModelSpec l = Presets.get("llama3-8b");
    return new ModelSpec("tiny", l.family(), 2, 64, 4, 2, 128, 256, 64, 1, DType.BF16,
        l.arch().forSequence(64));
  }

  private static TrainingGraph block(Recompute r) {
    return TrainingGraphBuilder.build(TINY, TrainingOptions.oneBlock(TINY, 1, 64)
        .withAttention(Attention.FLASH).withRecompute(r).withDropout(false));
  }

  /**
   * Kept bytes, bf16 (2 bytes an element), b = 1, s = 64: the block's input [64, 64] 8,192; wq's
   * output [64, 64] 8,192 (1st product); wv's [64, 32] 4,096 (3rd); the attention kernel's
   * [64, 4, 16] 8,192; w1's [64, 128] 16,384 (5th); w2's [64, 64] 8,192 (7th, read by the
   * replayed residual add). 8,192 + 8,192 + 4,096 + 8,192 + 16,384 + 8,192 = 53,248, between
   * full recomputation's 8,192 (the input alone) and none's.
   */
  @Test
  void keepsTheSavedOutputsAndTheBlockInput() {
    long op = ActivationMemory.savedBytes(block(Recompute.OP), LayerRef.block(0));
    assertThat(op).isEqualTo(53_248);
    assertThat(ActivationMemory.savedBytes(block(Recompute.FULL), LayerRef.block(0)))
        .isEqualTo(8_192);
    assertThat(ActivationMemory.savedBytes(block(Recompute.NONE), LayerRef.block(0)))
        .isGreaterThan(op);
  }

  /**
   * The replay computes the 2nd, 4th and 6th products again: wk 2 x 64 x 64 x 32 = 262,144
   * FLOPs, wo 2 x 64 x 64 x 64 = 524,288, w3 2 x 64 x 64 x 128 = 1,048,576; 1,835,008 in all,
   * and not the attention kernel, whose output it reuses.
   */
  @Test
  void recomputesEveryOtherProductAndNotTheAttention() {
    TrainingGraph tg = block(Recompute.OP);
    double dotFlops = 0;
    int dots = 0;
    for (Instruction ins : tg.graph().instructions()) {
      if (tg.phase(ins.id()) != Phase.RECOMPUTE) {
        continue;
      }
      assertThat(ins.opcode()).isNotEqualTo(Opcode.FUSED_ATTENTION);
      if (ins.opcode() == Opcode.DOT) {
        dots++;
        dotFlops += OpCost.flops(tg.graph(), ins);
      }
    }
    assertThat(dots).isEqualTo(3);
    assertThat(dotFlops).isEqualTo(1_835_008.0);
  }

  /** The search stays within Megatron-LM's modes, which every export target runs. */
  @Test
  void planDoesNotSearchIt() {
    assertThat(Recompute.SEARCHED).containsExactly(Recompute.NONE, Recompute.SELECTIVE,
        Recompute.FULL);
    assertThat(Recompute.parse("OP")).isEqualTo(Recompute.OP);
  }

  /** Mixture-of-experts and latent-attention models are refused in one line. */
  @Test
  void refusedForModelsItIsNotModelledFor() {
    for (String preset : new String[] {"mixtral-8x7b", "deepseek-v3"}) {
      assertThatThrownBy(() -> RecomputeModule.check(Recompute.OP, RecomputeModule.DEFAULT,
          Presets.get(preset))).isInstanceOf(InputException.class)
          .hasMessageContaining("--recompute op").hasMessageContaining(preset);
    }
    RecomputeModule.check(Recompute.OP, RecomputeModule.DEFAULT, Presets.get("llama3-8b"));
    assertThat(Set.of(Recompute.values())).contains(Recompute.OP);
  }
}
