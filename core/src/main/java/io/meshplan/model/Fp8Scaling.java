package io.meshplan.model;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * How FP8 training ({@link Fp8Training}) chooses each tensor's scale, in Megatron-Core's words
 * ({@code TransformerConfig.fp8_recipe}, {@code --fp8-recipe}; NVIDIA/Megatron-LM {@code
 * megatron/core/transformer/transformer_config.py} at d98e8a6, whose default is {@code delayed}).
 * The first two scale a whole tensor by one factor; the third scales blocks of 32 elements. All
 * three run E4M3/E5M2 GEMMs at the FP8 tensor-core rate, and differ in what casting the operands
 * costs each step, which is priced (the cost model's {@code cluster.Fp8Quantization}, from
 * Transformer Engine's measured GEMMs with their casts):
 *
 * <ul>
 *   <li>{@link #DELAYED}: Transformer Engine's {@code DelayedScaling}, the scale taken from a
 *       history of earlier steps' amax values;
 *   <li>{@link #TENSORWISE}: {@code Float8CurrentScaling}, the scale from the tensor's own amax in
 *       the current step (Megatron-Bridge's {@code fp8_cs} precision, which its performance recipes
 *       run);
 *   <li>{@link #MXFP8}: {@code MXFP8BlockScaling}, OCP's microscaling format: one power-of-two
 *       (E8M0) scale per 32 consecutive elements, which Blackwell's tensor cores apply inside the
 *       GEMM ("'mxfp8' for Blackwell architecture only", Megatron-Core's {@code fp8_recipe};
 *       Megatron-Bridge's {@code fp8_mx} precision, the MXFP8 rows of its performance tables).
 *       Its GEMMs run at the FP8 rate (torchtitan {@code
 *       torchtitan/components/quantization/mxfp8.md} at b5bcd76c: MXFP8 GEMMs "up to 2x" over
 *       bf16 on B200, the FP8 to 16-bit peak ratio); its casts are priced by their own measurement.
 *   <li>{@link #NVFP4}: {@code NVFP4BlockScaling}, a recipe of the same autocast: the linear
 *       layers' GEMM operands in 4-bit E2M1 with one FP8 (E4M3) scale per 16 elements and a
 *       per-tensor FP32 scale, random Hadamard transforms on the weight-gradient GEMM's inputs and
 *       stochastic rounding of gradients; Blackwell only (Megatron-Core's {@code fp4} {@code
 *       e2m1} with {@code fp4_recipe} {@code nvfp4}, "NVFP4BlockScaling recipe for Blackwell+
 *       architecture", {@code transformer_config.py} at d98e8a6; Megatron-Bridge's {@code nvfp4}
 *       precision, the NVFP4 rows of its performance tables). Priced by Transformer Engine's
 *       measurement of those GEMMs with their casts, 1.98x the bf16 speed on a B300. Weights,
 *       activations and the exports' other precisions are those of FP8 training: meshplan counts
 *       the saved GEMM inputs at 8 bits, an upper bound on the 4.5 bits NVFP4 keeps.
 * </ul>
 *
 * <p>They differ where Megatron-Core's rules differ: under delayed scaling the norms and the
 * experts' activation may not be recomputed ({@code __post_init__}: "Delayed scaling does not
 * support moe_act and layernorm recompute for fp8"); current scaling allows both. Their prices
 * differ by their casts: Transformer Engine measured a layer's GEMMs with their casts at 1.69x
 * (delayed) and 1.58x (current) the bf16 speed on an H200 NVL, and 1.64x, 1.39x and 1.42x (MXFP8)
 * on a B300. On Megatron-Bridge's Llama 3 70B fine-tuning rows, run alike in both on GB300 (26.06:
 * TP 1, PP 2, VP 20), MXFP8 measured 0.5% (LoRA) and 10.5% (SFT) below current scaling, where
 * these prices put it 1.3-1.4% above.
 */
public enum Fp8Scaling {
  /** Scales from the amax history of earlier steps (Megatron-Core's default). */
  DELAYED("delayed"),
  /** Scales from each tensor's amax in the current step. */
  TENSORWISE("tensorwise"),
  /** One E8M0 scale per block of 32 elements (Blackwell and later). */
  MXFP8("mxfp8"),
  /** 4-bit E2M1 GEMM operands, one E4M3 scale per 16 elements (Blackwell and later). */
  NVFP4("nvfp4");

  private final String word;

  Fp8Scaling(String word) {
    this.word = word;
  }

  /**
   * The word Megatron-LM's {@code --fp8-recipe} takes.
   *
   * @return {@code delayed}, {@code tensorwise}, {@code mxfp8} or {@code nvfp4}
   */
  public String word() {
    return word;
  }

  /**
   * The recipe words, for messages.
   *
   * @return {@code delayed, tensorwise, mxfp8 or nvfp4}
   */
  public static String words() {
    Fp8Scaling[] all = values();
    return Arrays.stream(all, 0, all.length - 1).map(Fp8Scaling::word)
        .collect(java.util.stream.Collectors.joining(", ")) + " or " + all[all.length - 1].word;
  }

  /**
   * Whether the recipe runs on a GPU of a compute capability: block scaling needs Blackwell's
   * tensor cores (capability 10 and later; Transformer Engine's {@code check_mxfp8_support}:
   * "Device compute capability 10.0 or higher required for MXFP8 execution", and its NVFP4
   * check alike).
   *
   * @param computeCapabilityMajor the GPU's major compute capability (NVIDIA)
   * @return true where it runs
   */
  public boolean runsOn(int computeCapabilityMajor) {
    return !blockScaled() || computeCapabilityMajor >= 10;
  }

  /**
   * Whether the recipe scales blocks of elements, which only Blackwell's tensor cores apply.
   *
   * @return true for MXFP8 and NVFP4
   */
  public boolean blockScaled() {
    return this == MXFP8 || this == NVFP4;
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
