package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * How a model stretches its rotary position embedding (Su et al. 2021) beyond the context it was
 * first trained at: the {@code rope_scaling} (transformers v4) or {@code rope_parameters} (v5)
 * object of a Hugging Face {@code config.json}. None of the forms changes a parameter, a FLOP or
 * a byte that meshplan prices, but each changes the model a framework builds, so the exports
 * state it or refuse it.
 */
public sealed interface RopeScaling extends java.io.Serializable
    permits RopeScaling.None, RopeScaling.Llama3, RopeScaling.Yarn, RopeScaling.Linear,
    RopeScaling.Other {

  /** No scaling: the frequencies {@code theta^(-2i/d)} as they are. */
  record None() implements RopeScaling {
    private static final long serialVersionUID = 1L;
  }

  /** The one instance of {@link None}. */
  None NONE = new None();

  /**
   * Llama 3.1's frequency-dependent scaling ({@code rope_type: "llama3"}; Dubey et al. 2024,
   * "The Llama 3 Herd of Models", and meta-llama/Llama-3.1-8B's {@code config.json}): wavelengths
   * above {@code originalMax / lowFreq} divided by {@code factor}, below {@code originalMax /
   * highFreq} kept, and a smooth blend between.
   *
   * @param factor the division of the long wavelengths (8 in Llama 3.1)
   * @param lowFreq {@code low_freq_factor} (1)
   * @param highFreq {@code high_freq_factor} (4)
   * @param originalMax {@code original_max_position_embeddings}, tokens (8192)
   */
  record Llama3(double factor, double lowFreq, double highFreq, int originalMax)
      implements RopeScaling {
    private static final long serialVersionUID = 1L;

    /** Validates the fields. */
    public Llama3 {
      requireFactor(factor);
      Require.that(lowFreq > 0 && highFreq > lowFreq && Double.isFinite(highFreq),
          () -> "llama3 RoPE scaling needs 0 < low_freq_factor < high_freq_factor, got " + lowFreq
          + " and " + highFreq);
      Require.positive(originalMax, "original_max_position_embeddings");
    }
  }

  /**
   * YaRN (Peng et al., ICLR'24, "YaRN: Efficient Context Window Extension of Large Language
   * Models"; {@code rope_type: "yarn"}): the frequencies blended between interpolated and kept
   * by wavelength, between {@code betaSlow} and {@code betaFast} rotations over {@code
   * originalMax} tokens, and the attention scaled by {@code 0.1 ln(factor) + 1} (DeepSeek's
   * {@code mscale} and {@code mscale_all_dim} weight that term in its softmax scale).
   *
   * @param factor the context stretch (40 in DeepSeek-V3, 32 in gpt-oss)
   * @param originalMax {@code original_max_position_embeddings}, tokens (4096 in both)
   * @param betaFast {@code beta_fast} (32)
   * @param betaSlow {@code beta_slow} (1)
   * @param mscale DeepSeek's {@code mscale} (1; transformers' default 1 when absent)
   * @param mscaleAllDim DeepSeek's {@code mscale_all_dim} (1 in DeepSeek-V3; 0 when absent)
   * @param truncate whether the blend's correction range is rounded to whole dimensions ({@code
   *     truncate}: transformers' default true; gpt-oss sets false)
   */
  record Yarn(double factor, int originalMax, double betaFast, double betaSlow, double mscale,
      double mscaleAllDim, boolean truncate) implements RopeScaling {
    private static final long serialVersionUID = 1L;

    /** Validates the fields. */
    public Yarn {
      requireFactor(factor);
      Require.positive(originalMax, "original_max_position_embeddings");
      Require.that(betaSlow > 0 && betaFast > betaSlow && Double.isFinite(betaFast),
          () -> "YaRN needs 0 < beta_slow < beta_fast, got " + betaSlow + " and " + betaFast);
      Require.that(mscale >= 0 && Double.isFinite(mscale) && mscaleAllDim >= 0
          && Double.isFinite(mscaleAllDim),
          "YaRN's mscale and mscale_all_dim must be finite and not negative");
    }
  }

  /**
   * Position interpolation (Chen et al. 2023; {@code rope_type: "linear"}): every position
   * divided by {@code factor}.
   *
   * @param factor the division (8 in Gemma 3's global layers)
   */
  record Linear(double factor) implements RopeScaling {
    private static final long serialVersionUID = 1L;

    /** Validates the factor. */
    public Linear {
      requireFactor(factor);
    }
  }

  /**
   * A form meshplan reads but no export writes ({@code dynamic}, {@code longrope} of Phi-3's
   * long-context models, ...): the exports refuse it by this name.
   *
   * @param type the {@code rope_type} as the config spells it
   */
  record Other(String type) implements RopeScaling {
    private static final long serialVersionUID = 1L;

    /** Validates the name. */
    public Other {
      Require.nonNull(type, "rope_type");
    }
  }

  /**
   * The form in a config's words, for messages and headers.
   *
   * @return e.g. {@code llama3 (factor 8, low_freq_factor 1, high_freq_factor 4,
   *     original_max_position_embeddings 8192)}; {@code none}
   */
  default String words() {
    if (this instanceof Llama3 l) {
      return "llama3 (factor " + num(l.factor()) + ", low_freq_factor " + num(l.lowFreq())
          + ", high_freq_factor " + num(l.highFreq()) + ", original_max_position_embeddings "
          + l.originalMax() + ")";
    }
    if (this instanceof Yarn y) {
      return "yarn (factor " + num(y.factor()) + ", original_max_position_embeddings "
          + y.originalMax() + ", beta_fast " + num(y.betaFast()) + ", beta_slow "
          + num(y.betaSlow()) + ", mscale " + num(y.mscale()) + ", mscale_all_dim "
          + num(y.mscaleAllDim()) + (y.truncate() ? "" : ", truncate false") + ")";
    }
    if (this instanceof Linear l) {
      return "linear (factor " + num(l.factor()) + ")";
    }
    return this instanceof Other o ? o.type() : "none";
  }

  /**
   * A number as Python writes it back: whole values without a fraction.
   *
   * @param x the number
   * @return e.g. {@code 8}, {@code 0.25}, {@code 1e-5}
   */
  static String num(double x) {
    if (x == Math.rint(x) && Math.abs(x) < 1e15) {
      return Long.toString((long) x);
    }
    return Double.toString(x).replace(".0E", "E").replace("E", "e");
  }

  private static void requireFactor(double factor) {
    Require.that(factor >= 1 && Double.isFinite(factor),
        () -> "a RoPE scaling factor must be at least 1 and finite, got " + factor);
  }
}
