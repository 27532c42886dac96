package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The Gated DeltaNet mixer of a hybrid model's {@code G} layers (Yang, Kautz and Hatamizadeh,
 * "Gated Delta Networks", arXiv:2412.06464; transformers' {@code Qwen3NextGatedDeltaNet} in
 * {@code modeling_qwen3_next.py} at 7515843; Megatron-Core's {@code
 * megatron/core/ssm/gated_delta_net/}): projections of the hidden state to queries and keys
 * ({@code keyHeads x keyHeadDim} each), values and an output gate ({@code valueHeads x
 * valueHeadDim} each) and one decay and one write strength per value head; a causal depthwise
 * convolution of {@code convKernel} taps, without bias, over the queries, keys and values before
 * SiLU; the gated delta rule, run chunk by chunk; an RMSNorm per value head with one weight of
 * {@code valueHeadDim} all heads share, gated by {@code silu(z)}; and the output projection. Per
 * value head it learns {@code dt_bias} and {@code A_log}.
 *
 * @param keyHeads query and key heads ({@code linear_num_key_heads}), dividing the value heads
 * @param valueHeads value heads ({@code linear_num_value_heads})
 * @param keyHeadDim channels per query and key head ({@code linear_key_head_dim})
 * @param valueHeadDim channels per value head ({@code linear_value_head_dim})
 * @param convKernel the convolution's taps ({@code linear_conv_kernel_dim})
 * @param chunk the chunkwise algorithm's chunk length, tokens (64 in flash-linear-attention's
 *     {@code chunk_gated_delta_rule} and Megatron-Core's)
 */
public record GdnShape(int keyHeads, int valueHeads, int keyHeadDim, int valueHeadDim,
    int convKernel, int chunk) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the sizes. */
  public GdnShape {
    for (int v : new int[] {keyHeads, valueHeads, keyHeadDim, valueHeadDim, convKernel, chunk}) {
      Require.that(v > 0 && v <= MambaShape.MAX_SIZE, () -> "Gated DeltaNet sizes must be 1 to "
          + MambaShape.MAX_SIZE + ", got key heads " + keyHeads + ", value heads " + valueHeads
          + ", key head dim " + keyHeadDim + ", value head dim " + valueHeadDim
          + ", conv kernel " + convKernel + ", chunk " + chunk);
    }
    Require.that(valueHeads % keyHeads == 0, () -> "Gated DeltaNet key heads " + keyHeads
        + " must divide its " + valueHeads + " value heads");
  }

  /**
   * The query (and key) width.
   *
   * @return {@code keyHeads x keyHeadDim}
   */
  public long keyWidth() {
    return (long) keyHeads * keyHeadDim;
  }

  /**
   * The value (and gate) width.
   *
   * @return {@code valueHeads x valueHeadDim}
   */
  public long valueWidth() {
    return (long) valueHeads * valueHeadDim;
  }

  /**
   * The mixer's parameters: {@code in_proj_qkvz} ({@code h x (2 key + 2 value)}), {@code
   * in_proj_ba} ({@code h x 2 valueHeads}), the convolution ({@code (2 key + value) x
   * convKernel}), {@code dt_bias} and {@code A_log} (one each per value head), the norm's shared
   * weight ({@code valueHeadDim}) and {@code out_proj} ({@code value x h}).
   *
   * @param hidden the model's hidden size h
   * @return parameters
   */
  public long parameters(int hidden) {
    long h = hidden;
    long in = Math.multiplyExact(h, 2 * keyWidth() + 2 * valueWidth() + 2L * valueHeads);
    long conv = Math.multiplyExact(2 * keyWidth() + valueWidth(), convKernel);
    long out = Math.multiplyExact(valueWidth(), h);
    return Math.addExact(Math.addExact(in, out), conv + 2L * valueHeads + valueHeadDim);
  }

  /**
   * Whether a tensor-parallel size splits the mixer as Megatron-Core does: key heads and value
   * heads evenly ({@code transformer_config.py} asserts both divisible by TP x CP).
   *
   * @param tp the tensor-parallel size
   * @return true when it divides both
   */
  public boolean splits(int tp) {
    return tp > 0 && keyHeads % tp == 0 && valueHeads % tp == 0;
  }

  /**
   * The elements per token one GPU's two all-to-alls move under context parallelism: in, its
   * share of the queries, keys, values, gate, write strengths and decays; out, its share of the
   * delta rule's output.
   *
   * @param tp the tensor-parallel size
   * @return elements per token
   */
  public double swapElementsPerToken(int tp) {
    return (2.0 * keyWidth() + 2.0 * valueWidth() + 2.0 * valueHeads + valueWidth()) / tp;
  }
}
