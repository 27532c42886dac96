package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The numbers of a model that change what it computes but no parameter, FLOP or byte meshplan
 * prices beyond dropout's masks: the rotary base and scaling, the norms' epsilon, dropout, and
 * the block wiring and multipliers of a few families. The frameworks default each of them their
 * own way (Megatron-LM's rotary base 10,000, norm epsilon 1e-5 and dropout 0.1; torchtitan's
 * flavors fix theirs), so every export states them or refuses the model; {@link
 * Architecture#numerics()} carries them, read from a {@code config.json} or set by the presets
 * from the released configs.
 *
 * @param ropeTheta the rotary base {@code theta} of the frequencies {@code theta^(-2i/d)}
 *     ({@code rope_theta}; ignored with learned positions)
 * @param rotaryFraction the share of each head's dimensions that rotate ({@code rotary_pct} of
 *     GPT-NeoX, 0.25; {@code partial_rotary_factor}); 1 for the whole head
 * @param ropeScaling how the frequencies are stretched, {@link RopeScaling#NONE} for not at all
 * @param normEps the epsilon of every LayerNorm or RMSNorm ({@code rms_norm_eps}, {@code
 *     layer_norm_eps}, {@code norm_epsilon})
 * @param attentionDropout the dropout probability on the attention probabilities
 * @param hiddenDropout the dropout probability on the embedding and on each sublayer's output
 *     before the residual add
 * @param parallelResidual whether attention and MLP read the same input and add to the residual
 *     together (GPT-NeoX's {@code use_parallel_residual}) instead of one after the other
 * @param multipliers the fixed multipliers of Granite 3.0 ({@link Multipliers#NONE} otherwise)
 */
public record Numerics(double ropeTheta, double rotaryFraction, RopeScaling ropeScaling,
    double normEps, double attentionDropout, double hiddenDropout, boolean parallelResidual,
    Multipliers multipliers) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * LLaMA 2's numbers, the default of a rotary model without them: base 10,000, no scaling,
   * epsilon 1e-5 (meta-llama/Llama-2-7b-hf {@code config.json}), no dropout.
   */
  public static final Numerics DEFAULT = rotary(10_000, 1e-5);

  /**
   * The largest rotary base read: 10^12. Published bases run from 10^4 (LLaMA) to 10^7 and 10^8
   * (long-context models); past 10^12 a base is a typo, and past 2^63 an integer writer (Megatron's
   * {@code --rotary-base}) would saturate it.
   */
  public static final double MAX_ROPE_THETA = 1e12;

  /** Validates the fields. */
  public Numerics {
    Require.that(ropeTheta >= 1 && ropeTheta <= MAX_ROPE_THETA, () -> "the rotary base must be a"
        + " number from 1 to 10^12, got " + ropeTheta);
    Require.that(rotaryFraction > 0 && rotaryFraction <= 1,
        () -> "the rotary fraction of a head must be above 0 and at most 1, got " + rotaryFraction);
    Require.nonNull(ropeScaling, "ropeScaling");
    Require.that(normEps > 0 && normEps < 1,
        () -> "the norm epsilon must be above 0 and below 1, got "
        + normEps);
    Require.that(attentionDropout >= 0 && attentionDropout < 1 && hiddenDropout >= 0
        && hiddenDropout < 1, () -> "dropout probabilities must be at least 0 and below 1, got "
        + attentionDropout + " and " + hiddenDropout);
    Require.nonNull(multipliers, "multipliers");
  }

  /**
   * A rotary model's numbers without scaling, dropout or multipliers.
   *
   * @param theta the rotary base
   * @param eps the norm epsilon
   * @return the numbers
   */
  public static Numerics rotary(double theta, double eps) {
    return new Numerics(theta, 1, RopeScaling.NONE, eps, 0, 0, false, Multipliers.NONE);
  }

  /**
   * These numbers with another rotary scaling.
   *
   * @param s the scaling
   * @return the numbers
   */
  public Numerics withScaling(RopeScaling s) {
    return new Numerics(ropeTheta, rotaryFraction, s, normEps, attentionDropout, hiddenDropout,
        parallelResidual, multipliers);
  }

  /**
   * These numbers with other dropout probabilities.
   *
   * @param attention on the attention probabilities
   * @param hidden on the embedding and the sublayers' outputs
   * @return the numbers
   */
  public Numerics withDropout(double attention, double hidden) {
    return new Numerics(ropeTheta, rotaryFraction, ropeScaling, normEps, attention, hidden,
        parallelResidual, multipliers);
  }

  /**
   * These numbers with a part of each head rotating, and the residual wiring.
   *
   * @param fraction the rotating share of a head
   * @param parallel whether attention and MLP add to the residual together
   * @return the numbers
   */
  public Numerics withRotary(double fraction, boolean parallel) {
    return new Numerics(ropeTheta, fraction, ropeScaling, normEps, attentionDropout,
        hiddenDropout, parallel, multipliers);
  }

  /**
   * These numbers with multipliers.
   *
   * @param m the multipliers
   * @return the numbers
   */
  public Numerics withMultipliers(Multipliers m) {
    return new Numerics(ropeTheta, rotaryFraction, ropeScaling, normEps, attentionDropout,
        hiddenDropout, parallelResidual, m);
  }

  /**
   * Whether the model trains with any dropout, which the training graph then builds (its masks
   * are priced).
   *
   * @return true when either probability is above 0
   */
  public boolean dropout() {
    return attentionDropout > 0 || hiddenDropout > 0;
  }

  /**
   * Granite 3.0's fixed multipliers (ibm-granite/granite-3.0-8b-base {@code config.json}; the
   * transformers Granite modeling file): the embedding output times {@code embedding}, each
   * sublayer's output times {@code residual} before the residual add, the attention scores
   * times {@code attention} in place of {@code 1/sqrt(d)}, the logits divided by {@code logits}.
   *
   * @param embedding {@code embedding_multiplier}
   * @param residual {@code residual_multiplier}
   * @param attention {@code attention_multiplier}; 0 for the usual {@code 1/sqrt(d)}
   * @param logits {@code logits_scaling}
   */
  public record Multipliers(double embedding, double residual, double attention, double logits)
      implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** No multipliers: every one 1, and the attention's usual scale. */
    public static final Multipliers NONE = new Multipliers(1, 1, 0, 1);

    /** Validates the fields. */
    public Multipliers {
      Require.that(embedding > 0 && residual > 0 && logits > 0 && attention >= 0
          && Double.isFinite(embedding + residual + attention + logits), () -> "multipliers must be"
          + " positive and finite (the attention one 0 for 1/sqrt(d))");
    }

    /**
     * The multipliers in a config's words.
     *
     * @return e.g. {@code embedding_multiplier 12, residual_multiplier 0.22, ...}
     */
    public String words() {
      return "embedding_multiplier " + RopeScaling.num(embedding) + ", residual_multiplier "
          + RopeScaling.num(residual) + ", attention_multiplier " + RopeScaling.num(attention)
          + ", logits_scaling " + RopeScaling.num(logits);
    }
  }
}
