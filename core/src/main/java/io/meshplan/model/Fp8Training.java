package io.meshplan.model;

import io.meshplan.graph.DType;
import java.util.Locale;

/**
 * FP8 training as Transformer Engine's default recipe runs it ({@code DelayedScaling} with {@code
 * fp8_format=Format.HYBRID}, the recipe Megatron-LM selects with {@code --fp8-format hybrid}):
 * the GEMMs of the linear layers read FP8 operands, E4M3 in the forward pass (activations and
 * weights) and E5M2 for the gradients in the backward pass, and write bf16 results; attention,
 * norms, softmax, elementwise ops, the embedding and the LM head stay bf16 (Megatron's output
 * layer is not a Transformer Engine module). Weights stay bf16 with fp32 master weights and
 * Adam state, as in bf16 training. Sources: Transformer Engine's {@code
 * transformer_engine.common.recipe} API ("HYBRID - FP8 tensors in the forward pass are in e4m3
 * format, FP8 tensors in the backward pass are in e5m2 format") and Megatron-Core's {@code
 * TransformerConfig.fp8} ({@code --fp8-format e4m3|hybrid}).
 *
 * <p>The training precision is carried as a {@link DType}, like bf16 or fp32: {@link
 * DType#F8E4M3FN}, the forward operand type, stands for the whole recipe, and its word on the
 * command line and in the plan JSON is {@code fp8}.
 */
public final class Fp8Training {
  /** The training precision that stands for the hybrid recipe. */
  public static final DType RECIPE = DType.F8E4M3FN;
  /** The operand type of forward GEMMs (activations and weights). */
  public static final DType FORWARD = DType.F8E4M3FN;
  /** The operand type of gradients in backward GEMMs. */
  public static final DType GRADIENT = DType.F8E5M2;
  /** The word for the recipe on the command line and in plan files. */
  public static final String WORD = "fp8";

  private Fp8Training() {}

  /**
   * Whether a training precision is the FP8 recipe.
   *
   * @param t the precision
   * @return true for {@link #RECIPE}
   */
  public static boolean on(DType t) {
    return t == RECIPE;
  }

  /**
   * The type weights and activations are stored in: bf16 under the FP8 recipe, else the type.
   *
   * @param t the training precision
   * @return the storage type
   */
  public static DType storage(DType t) {
    return on(t) ? DType.BF16 : t;
  }

  /**
   * The word for a training precision: {@code fp8} for the recipe, else its HLO name.
   *
   * @param t the precision
   * @return the word
   */
  public static String word(DType t) {
    return on(t) ? WORD : t.hloName();
  }

  /**
   * Reads a training precision word: {@code fp8}, or an HLO type name.
   *
   * @param word the word, any case
   * @return the type, or null when the word names none
   */
  public static DType parse(String word) {
    String w = word.toLowerCase(Locale.ROOT);
    return w.equals(WORD) ? RECIPE : DType.fromHlo(w);
  }

  /**
   * Whether a training precision can train: bf16, f16, f32 or the FP8 recipe.
   *
   * @param t the precision
   * @return true if it can
   */
  public static boolean trains(DType t) {
    return t == DType.BF16 || t == DType.F16 || t == DType.F32 || on(t);
  }
}
