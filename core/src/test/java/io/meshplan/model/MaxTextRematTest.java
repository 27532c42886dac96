package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * MaxText's remat policies ({@link MaxTextRemat}) on the training graph: a block keeps its input
 * and the named values its policy saves that the backward reads, and the backward recomputes the
 * rest of what it reads. Policies read at AI-Hypercomputer/maxtext 48f2524e ({@code
 * MaxText/layers/models.py}) and e591f30 ({@code src/maxtext/layers/decoders.py}).
 */
class MaxTextRematTest {
  /** A LLaMA block: 64 tokens, hidden 64, 4 heads of 16, 2 key/value heads, SwiGLU of 128. */
  private static final ModelSpec TINY = tiny();

  private static ModelSpec tiny() {
    ModelSpec l = Presets.get("llama3-8b");
    return new ModelSpec("tiny", l.family(), 2, 64, 4, 2, 128, 256, 64, 1, DType.BF16,
        l.arch().forSequence(64));
  }

  private static TrainingGraph block(ModelSpec m, int seq, Recompute r) {
    return TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, 1, seq)
        .withAttention(Attention.FLASH).withRecompute(r).withDropout(false));
  }

  private static long kept(ModelSpec m, int seq, Recompute r) {
    return ActivationMemory.savedBytes(block(m, seq, r), LayerRef.block(0));
  }

  /** FLOPs of the recomputation, every instruction tagged {@link Phase#RECOMPUTE}. */
  private static double recomputeFlops(TrainingGraph tg) {
    double f = 0;
    for (Instruction ins : tg.graph().instructions()) {
      if (tg.phase(ins.id()) == Phase.RECOMPUTE) {
        f += OpCost.flops(tg.graph(), ins);
      }
    }
    return f;
  }

  private static long count(TrainingGraph tg, Opcode op) {
    return tg.graph().instructions().stream()
        .filter(i -> tg.phase(i.id()) == Phase.RECOMPUTE && i.opcode() == op).count();
  }

  /**
   * TINY's block, bf16 (2 bytes an element), b = 1, s = 64, h = 64, 4 query heads and 2
   * key/value heads of 16, SwiGLU of 128, fused attention: the input [64, 64] is 8,192 bytes;
   * the queries [64, 4, 16] 8,192, keys and values [64, 2, 16] 4,096 each; out_proj [64, 64]
   * 8,192; context [64, 4, 16] 8,192; mlpwi_0 and mlpwi_1 [64, 128] 16,384 each. mlpwo is never
   * read by the backward (it only feeds the residual add), so it costs nothing.
   * <ul>
   *   <li>full: 8,192
   *   <li>save_out_proj: 8,192 + 8,192 = 16,384
   *   <li>save_qkv_proj: 8,192 + 8,192 + 4,096 + 4,096 = 24,576
   *   <li>save_dot_except_mlp: 24,576 + 8,192 = 32,768; save_dot_except_mlpwi the same
   *   <li>save_dot_with_context_except_mlp: 32,768 + 8,192 = 40,960
   *   <li>minimal: 32,768 + 2 x 16,384 = 65,536
   *   <li>minimal_flash: 65,536 + 8,192 = 73,728, less than none's
   * </ul>
   */
  @Test
  void eachPolicyKeepsTheBlockInputAndWhatItNames() {
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_FULL)).isEqualTo(8_192);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_SAVE_OUT_PROJ)).isEqualTo(16_384);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_SAVE_QKV_PROJ)).isEqualTo(24_576);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLP)).isEqualTo(32_768);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLPWI)).isEqualTo(32_768);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_SAVE_DOT_WITH_CONTEXT_EXCEPT_MLP))
        .isEqualTo(40_960);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_MINIMAL)).isEqualTo(65_536);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_MINIMAL_FLASH)).isEqualTo(73_728);
    assertThat(kept(TINY, 64, Recompute.NONE)).isGreaterThan(73_728);
    assertThat(kept(TINY, 64, Recompute.FULL)).isEqualTo(8_192);
  }

  /**
   * Llama 3 8B's block, bf16, b = 1, s = 4096, h = 4096, 32 query heads and 8 key/value heads of
   * 128, SwiGLU of 14336, fused attention. The input, the queries, the context and out_proj are
   * 4096 x 4096 x 2 = 33,554,432 bytes each; keys and values 4096 x 1024 x 2 = 8,388,608 each;
   * mlpwi_0 and mlpwi_1 4096 x 14336 x 2 = 117,440,512 each. save_qkv_proj: 2 x 33,554,432 +
   * 2 x 8,388,608 = 83,886,080. minimal: 3 x 33,554,432 + 16,777,216 + 234,881,024 =
   * 352,321,536; minimal_flash adds the context: 385,875,968. And the order of the memory the
   * policies trade for speed: full < save_qkv_proj < save_dot_except_mlp (=
   * save_dot_except_mlpwi here) < minimal < minimal_flash < none.
   */
  @Test
  void llama3BlockBytesPerMicrobatch() {
    ModelSpec m = Presets.get("llama3-8b");
    long full = kept(m, 4096, Recompute.MAXTEXT_FULL);
    long qkv = kept(m, 4096, Recompute.MAXTEXT_SAVE_QKV_PROJ);
    long exceptMlp = kept(m, 4096, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLP);
    long exceptMlpwi = kept(m, 4096, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLPWI);
    long minimal = kept(m, 4096, Recompute.MAXTEXT_MINIMAL);
    long flash = kept(m, 4096, Recompute.MAXTEXT_MINIMAL_FLASH);
    assertThat(full).isEqualTo(33_554_432L);
    assertThat(qkv).isEqualTo(83_886_080L);
    assertThat(minimal).isEqualTo(352_321_536L);
    assertThat(flash).isEqualTo(385_875_968L);
    assertThat(List.of(full, qkv, exceptMlp, minimal, flash, kept(m, 4096, Recompute.NONE)))
        .isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
    assertThat(exceptMlpwi).isEqualTo(exceptMlp);
  }

  /**
   * Where the MLP's output is read, as by Gemma 2's norm after the MLP, save_dot_except_mlpwi
   * keeps it and save_dot_except_mlp does not: a tiny Gemma 2 (h = 64, 4 heads of 16, 2
   * key/value heads, GeGLU of 128, s = 64, bf16) keeps mlpwo's [64, 64], 8,192 bytes, more.
   */
  @Test
  void mlpwoCountsWhereAPostNormReadsIt() {
    ModelSpec g = HfConfigReader.parse("{\"model_type\":\"gemma2\",\"hidden_size\":64,"
        + "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
        + "\"head_dim\":16,\"intermediate_size\":128,\"vocab_size\":256,"
        + "\"max_position_embeddings\":256}", "g.json", "g");
    assertThat(g.arch().attn().blockNorms()).isEqualTo(4);
    assertThat(kept(g, 64, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLPWI)
        - kept(g, 64, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLP)).isEqualTo(8_192);
  }

  /**
   * The recomputation runs the other way: products recomputed in TINY's block, 2 x rows x in x
   * out FLOPs with 64 rows: wq 524,288, wk and wv 262,144 each, wo 524,288, w1 and w3 1,048,576
   * each. full recomputes all six the backward reads (3,670,016, not w2, whose output it never
   * reads) and the attention; save_qkv_proj wo, w1, w3 (2,621,440) and the attention;
   * save_dot_except_mlp w1 and w3 (2,097,152) and the attention; minimal the attention alone;
   * minimal_flash no product and no attention.
   */
  @Test
  void recomputationShrinksAsPoliciesSaveMore() {
    List<Recompute> order = List.of(Recompute.MAXTEXT_FULL, Recompute.MAXTEXT_SAVE_QKV_PROJ,
        Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLP, Recompute.MAXTEXT_MINIMAL,
        Recompute.MAXTEXT_MINIMAL_FLASH);
    List<Double> flops = order.stream().map(r -> recomputeFlops(block(TINY, 64, r))).toList();
    assertThat(flops).isSortedAccordingTo((a, b) -> Double.compare(b, a))
        .doesNotHaveDuplicates();
    double[] dotFlops = order.stream().mapToDouble(r -> {
      TrainingGraph tg = block(TINY, 64, r);
      return tg.graph().instructions().stream().filter(i -> tg.phase(i.id()) == Phase.RECOMPUTE
          && i.opcode() == Opcode.DOT).mapToDouble(i -> OpCost.flops(tg.graph(), i)).sum();
    }).toArray();
    assertThat(dotFlops).containsExactly(3_670_016, 2_621_440, 2_097_152, 0, 0);
    assertThat(recomputeFlops(block(TINY, 64, Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLPWI)))
        .isEqualTo(flops.get(2));
  }

  /**
   * minimal and minimal_flash differ by the attention's output alone: minimal_flash keeps the
   * context [64, 4, 16], 8,192 bytes, and minimal recomputes the fused attention (once) where
   * minimal_flash does not; the rest of their recomputation is the same.
   */
  @Test
  void minimalFlashKeepsTheContextMinimalReplaysTheAttention() {
    TrainingGraph minimal = block(TINY, 64, Recompute.MAXTEXT_MINIMAL);
    TrainingGraph flash = block(TINY, 64, Recompute.MAXTEXT_MINIMAL_FLASH);
    assertThat(kept(TINY, 64, Recompute.MAXTEXT_MINIMAL_FLASH)
        - kept(TINY, 64, Recompute.MAXTEXT_MINIMAL)).isEqualTo(8_192);
    assertThat(count(minimal, Opcode.FUSED_ATTENTION)).isEqualTo(1);
    assertThat(count(flash, Opcode.FUSED_ATTENTION)).isZero();
    double attention = minimal.graph().instructions().stream()
        .filter(i -> minimal.phase(i.id()) == Phase.RECOMPUTE
            && i.opcode() == Opcode.FUSED_ATTENTION)
        .mapToDouble(i -> OpCost.flops(minimal.graph(), i)).sum();
    assertThat(attention).isPositive();
    assertThat(recomputeFlops(minimal) - recomputeFlops(flash)).isEqualTo(attention);
  }

  /**
   * MaxText names the context of fused attention only (Transformer Engine's and its cuDNN JAX
   * path): under unfused attention minimal_flash keeps and recomputes what minimal does.
   */
  @Test
  void unfusedAttentionHasNoContextToSave() {
    TrainingOptions o = TrainingOptions.oneBlock(TINY, 1, 64).withAttention(Attention.UNFUSED)
        .withDropout(false);
    TrainingGraph minimal = TrainingGraphBuilder.build(TINY,
        o.withRecompute(Recompute.MAXTEXT_MINIMAL));
    TrainingGraph flash = TrainingGraphBuilder.build(TINY,
        o.withRecompute(Recompute.MAXTEXT_MINIMAL_FLASH));
    assertThat(ActivationMemory.savedBytes(flash, LayerRef.block(0)))
        .isEqualTo(ActivationMemory.savedBytes(minimal, LayerRef.block(0)));
    assertThat(recomputeFlops(flash)).isEqualTo(recomputeFlops(minimal));
  }

  /** Every policy meshplan prices reads back from its label; the refused ones say why. */
  @Test
  void parsesThePoliciesAndRefusesTheOthersInOneLine() {
    for (Recompute r : Recompute.values()) {
      assertThat(Recompute.parse(r.label())).isEqualTo(r);
      assertThat(Recompute.parse(" " + r.label().toUpperCase(java.util.Locale.ROOT) + " "))
          .isEqualTo(r);
    }
    assertThat(Recompute.parse("maxtext:minimal_with_context"))
        .isEqualTo(Recompute.MAXTEXT_MINIMAL_FLASH);
    assertThat(Recompute.MAXTEXT_MINIMAL.layerwise()).isEqualTo(Recompute.FULL);
    assertThat(Recompute.SEARCHED).noneMatch(Recompute::maxText);
    assertRefused("maxtext:minimal_offloaded", "host memory");
    assertRefused("maxtext:qkv_proj_offloaded", "host memory");
    assertRefused("maxtext:custom", "its own flag");
    assertRefused("maxtext:minimal_with_quantization", "quantized");
    assertRefused("maxtext:none", "48f2524e");
    assertRefused("maxtext:minimal_flashy", "save_dot_except_mlpwi");
    assertRefused("maxtext:", "not a MaxText remat policy");
    assertRefused("maxtext:minimal\nfull", "control character");
    assertRefused("maxtext:minimal\n", "control character");
    assertRefused("full\n", "control character");
  }

  private static void assertRefused(String text, String says) {
    assertThatThrownBy(() -> Recompute.parse(text)).isInstanceOf(InputException.class)
        .hasMessageContaining(says).message().doesNotContain("\n");
  }

  /** Dense models take the policies; others name other values, and are refused. */
  @Test
  void denseModelsOnly() {
    MaxTextRemat.check(Recompute.MAXTEXT_MINIMAL_FLASH, Presets.get("llama3-8b"));
    MaxTextRemat.check(Recompute.OP, Presets.get("mixtral-8x7b"));
    for (String p : List.of("mixtral-8x7b", "deepseek-v3")) {
      assertThatThrownBy(() -> MaxTextRemat.check(Recompute.MAXTEXT_MINIMAL, Presets.get(p)))
          .isInstanceOf(InputException.class).hasMessageContaining("dense decoder models only");
    }
  }
}
