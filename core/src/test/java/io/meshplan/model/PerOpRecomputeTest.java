package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
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

  /**
   * TINY's block with experts in place of its MLP: 4 experts of 32, 2 per token, a shared expert
   * of 32.
   */
  private static final ModelSpec TINY_MOE = new ModelSpec("tiny-moe", TINY.family(), 2, 64, 4, 2,
      128, 256, 64, 1, DType.BF16, TINY.arch().withMoe(new MoeShape(4, 2, 32, 32, false)));

  private static TrainingGraph moeBlock(int ep) {
    return TrainingGraphBuilder.build(TINY_MOE, TrainingOptions.oneBlock(TINY_MOE, 1, 64)
        .withAttention(Attention.FLASH).withRecompute(Recompute.OP).withDropout(false)
        .withExperts(new ExpertLayout(ep, 1, 1)));
  }

  /**
   * What torchtitan's policy keeps of an expert block (its MoE models' save list: matrix
   * multiplications, attention kernels, all-to-alls; the router's gate always recomputed and not
   * counted; grouped GEMMs not saved), bf16, b = 1, s = 64, h = 64: the input 8,192; wq 8,192
   * (1st product) and wv 4,096 (3rd); the attention kernel 8,192; the shared expert's w1 [64, 32]
   * 4,096 (5th, after wk and wo) and w2 [64, 64] 8,192 (7th): 40,960 bytes with the experts on the
   * GPU (EP 1, no all-to-all). With EP 2 the dispatch's and the combine's all-to-all outputs are
   * kept as well, each the GPU's 2 experts x 64 rows (64 tokens x 2 copies / 2) x 64 = 8,192
   * elements, 16,384 bytes: 73,728.
   */
  @Test
  void anExpertBlockKeepsTheSavedOutputsAndItsAllToAlls() {
    assertThat(ActivationMemory.savedBytes(moeBlock(1), LayerRef.block(0))).isEqualTo(40_960);
    assertThat(ActivationMemory.savedBytes(moeBlock(2), LayerRef.block(0))).isEqualTo(73_728);
  }

  /**
   * The replay of an expert block under EP 2 computes again wk 2 x 64 x 64 x 32 = 262,144 FLOPs,
   * wo 524,288, the router's gate 2 x 64 x 64 x 4 = 32,768, the three grouped GEMMs, each 2 x 2
   * experts x 64 rows x 64 x 32 = 524,288 (the down projection too, whose output only feeds the
   * saved all-to-all), and the shared expert's w3 262,144: 2,654,208 FLOPs in 7 products. It does
   * not dispatch again (the all-to-all's output is saved); with EP 1 the local dispatch, a
   * permutation, runs again.
   */
  @Test
  void anExpertBlockReplaysTheGroupedGemmsButNotTheAllToAll() {
    TrainingGraph tg = moeBlock(2);
    double dotFlops = 0;
    int dots = 0;
    int dispatches = 0;
    for (Instruction ins : tg.graph().instructions()) {
      if (tg.phase(ins.id()) != Phase.RECOMPUTE) {
        continue;
      }
      dispatches += ins.opcode() == Opcode.MOE_DISPATCH ? 1 : 0;
      if (ins.opcode() == Opcode.DOT) {
        dots++;
        dotFlops += OpCost.flops(tg.graph(), ins);
      }
    }
    assertThat(dots).isEqualTo(7);
    assertThat(dotFlops).isEqualTo(2_654_208.0);
    assertThat(dispatches).isZero();
    assertThat(moeBlock(1).graph().instructions().stream().filter(ins -> ins.opcode()
        == Opcode.MOE_DISPATCH && moeBlock(1).phase(ins.id()) == Phase.RECOMPUTE)).hasSize(1);
  }

  /**
   * A latent-attention block (DeepSeek's, dense here: h = 64, 4 heads, r_q = 32, r_kv = 16,
   * d_n = 16, d_r = 8, d_v = 16, SwiGLU of 96; b = 1, s = 32, bf16) keeps, in torchtitan's order
   * of products: the input 4,096 bytes; wq_a [32, 32] 2,048 (1st; wq_b 2nd); wkv_a [32, 24] 1,536
   * (3rd; wkv_b 4th); the attention kernel [32, 4, 16] 4,096; wo [32, 64] 4,096 (5th); w3
   * [32, 96] 6,144 (7th, between w1 and w2): 22,016 bytes.
   */
  @Test
  void aLatentAttentionBlockCountsItsProductsInOrder() {
    Architecture a = Presets.get("deepseek-v3").arch();
    ModelSpec mla = new ModelSpec("tiny-mla", ModelSpec.Family.LLAMA, 2, 64, 4, 4, 96, 256, 32, 1,
        DType.BF16, new Architecture(a.mlp(), a.norm(), a.positions(), 0, false, false,
            AttentionShape.latent(new Mla(32, 16, 16, 8, 16)), MoeShape.DENSE, 0));
    TrainingGraph tg = TrainingGraphBuilder.build(mla, TrainingOptions.oneBlock(mla, 1, 32)
        .withAttention(Attention.FLASH).withRecompute(Recompute.OP).withDropout(false));
    assertThat(ActivationMemory.savedBytes(tg, LayerRef.block(0))).isEqualTo(22_016);
  }

  /** Every model takes it, mixture-of-experts and latent attention included. */
  @Test
  void everyModelTakesIt() {
    for (String preset : new String[] {"mixtral-8x7b", "deepseek-v3", "llama3-8b"}) {
      RecomputeModule.check(Recompute.OP, RecomputeModule.DEFAULT, Presets.get(preset));
    }
    assertThat(Set.of(Recompute.values())).contains(Recompute.OP);
  }
}
