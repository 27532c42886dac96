package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * Activation memory per transformer layer in closed form: Korthikanti et al., "Reducing
 * Activation Recomputation in Large Transformer Models" (MLSys'23), section 4 and Table 2, for
 * 16-bit activations and 1-byte dropout masks, s tokens per sequence, b sequences per
 * micro-batch, h hidden, a heads, t-way tensor parallelism.
 *
 * <ul>
 *   <li>no parallelism, no recomputation: {@code sbh (34 + 5as/h)} (attention 11sbh + 5as^2b, MLP
 *       19sbh, two LayerNorm inputs 4sbh);
 *   <li>tensor parallelism: {@code sbh (10 + 24/t + 5as/(ht))} (the LayerNorm inputs and the
 *       dropout masks after the projections, 10sbh, are not split);
 *   <li>tensor and sequence parallelism: {@code sbh (34/t + 5as/(ht))};
 *   <li>selective recomputation (attention core): the {@code 5as/(ht)} term goes: {@code sbh (10
 *       + 24/t)}, and {@code 34 sbh / t} with sequence parallelism;
 *   <li>full recomputation: the layer input, {@code 2sbh}; with sequence parallelism it is kept
 *       split along the sequence, {@code 2sbh/t}.
 * </ul>
 */
public final class KorthikantiActivations {
  private KorthikantiActivations() {}

  /**
   * Bytes of activations kept per transformer layer and device.
   *
   * @param s sequence length, tokens
   * @param b micro-batch, sequences
   * @param h hidden size
   * @param a attention heads
   * @param t tensor-parallel degree (1 without)
   * @param recompute the recomputation mode
   * @param sequenceParallel whether sequence parallelism splits the non-tensor-parallel parts
   * @return bytes per layer per device
   * @throws IllegalArgumentException for {@link Recompute#OP} and MaxText's policies, which the
   *     paper does not treat
   */
  public static double bytesPerLayer(long s, long b, long h, long a, int t, Recompute recompute,
      boolean sequenceParallel) {
    Require.positive(s, "s");
    Require.positive(b, "b");
    Require.positive(h, "h");
    Require.positive(a, "a");
    Require.positive(t, "t");
    Require.nonNull(recompute, "recompute");
    double sbh = (double) s * b * h;
    double attention = 5.0 * a * s / ((double) h * t);
    return switch (recompute) {
      case FULL -> sequenceParallel ? 2 * sbh / t : 2 * sbh;
      case SELECTIVE -> sequenceParallel ? 34 * sbh / t : sbh * (10 + 24.0 / t);
      case NONE -> sequenceParallel ? sbh * (34.0 / t + attention)
          : sbh * (10 + 24.0 / t + attention);
      default -> throw new IllegalArgumentException("Korthikanti et al. give no closed form for "
          + "torchtitan's per-op checkpointing or MaxText's policies");
    };
  }
}
