package io.meshplan.model;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * How FP8 training ({@link Fp8Training}) chooses each tensor's scale, in Megatron-Core's words
 * ({@code TransformerConfig.fp8_recipe}, {@code --fp8-recipe}; NVIDIA/Megatron-LM {@code
 * megatron/core/transformer/transformer_config.py} at d98e8a6, whose default is {@code delayed}).
 * Both scale a whole tensor by one factor and run the same E4M3/E5M2 GEMMs:
 *
 * <ul>
 *   <li>{@link #DELAYED}: Transformer Engine's {@code DelayedScaling}, the scale taken from a
 *       history of earlier steps' amax values;
 *   <li>{@link #TENSORWISE}: {@code Float8CurrentScaling}, the scale from the tensor's own amax in
 *       the current step (Megatron-Bridge's {@code fp8_cs} precision, which its performance recipes
 *       run).
 * </ul>
 *
 * <p>They differ where Megatron-Core's rules differ: under delayed scaling the norms and the
 * experts' activation may not be recomputed ({@code __post_init__}: "Delayed scaling does not
 * support moe_act and layernorm recompute for fp8"); current scaling allows both. Their prices are
 * the same: current scaling's amax is one more read of each cast tensor, which meshplan does not
 * price (the cast kernels are a few per cent of a step).
 */
public enum Fp8Scaling {
  /** Scales from the amax history of earlier steps (Megatron-Core's default). */
  DELAYED("delayed"),
  /** Scales from each tensor's amax in the current step. */
  TENSORWISE("tensorwise");

  private final String word;

  Fp8Scaling(String word) {
    this.word = word;
  }

  /**
   * The word Megatron-LM's {@code --fp8-recipe} takes.
   *
   * @return {@code delayed} or {@code tensorwise}
   */
  public String word() {
    return word;
  }

  /**
   * Reads a recipe word.
   *
   * @param w the word, any case
   * @return the recipe, or empty when the word names none
   */
  public static Optional<Fp8Scaling> parse(String w) {
    String l = w.toLowerCase(Locale.ROOT);
    return Arrays.stream(values()).filter(s -> s.word.equals(l)).findFirst();
  }

  /**
   * The scaling a precision word names, as training logs and the public folds write FP8 runs:
   * {@code fp8:tensorwise} (or {@code :delayed}) after the precision, else delayed.
   *
   * @param precision a precision word, e.g. {@code bf16}, {@code fp8}, {@code fp8:tensorwise}
   * @return the scaling
   * @throws IllegalArgumentException for a recipe after the colon that is neither
   */
  public static Fp8Scaling ofPrecision(String precision) {
    int colon = precision.indexOf(':');
    if (colon < 0) {
      return DELAYED;
    }
    String w = precision.substring(colon + 1);
    return parse(w).orElseThrow(() -> new IllegalArgumentException("unknown FP8 recipe " + w));
  }

  /**
   * The precision a word names before its recipe: {@code fp8} of {@code fp8:tensorwise}.
   *
   * @param precision a precision word
   * @return the word without its recipe
   */
  public static String stripRecipe(String precision) {
    int colon = precision.indexOf(':');
    return colon < 0 ? precision : precision.substring(0, colon);
  }
}
