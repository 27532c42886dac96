package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * Multi-head latent attention (DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, section 2.1;
 * DeepSeek-V3, arXiv:2412.19437, section 2.1.1): queries and keys/values pass through low-rank
 * latents. Per token and block:
 *
 * <ul>
 *   <li>queries: {@code c_q = x W_DQ} ({@code h x r_q}), an RMSNorm, then {@code q = c_q W_UQ}
 *       ({@code r_q x a (d_n + d_r)}); with {@code r_q = 0} directly {@code q = x W_Q} ({@code h
 *       x a (d_n + d_r)}, DeepSeek-V2-Lite);
 *   <li>keys and values: {@code [c_kv, k_r] = x W_DKV} ({@code h x (r_kv + d_r)}), an RMSNorm
 *       on {@code c_kv}, then {@code [k_n, v] = c_kv W_UKV} ({@code r_kv x a (d_n + d_v)});
 *   <li>rotary positions on the last {@code d_r} dimensions of each query head and on {@code
 *       k_r}, which every head shares; each head's key is {@code [k_n, k_r]};
 *   <li>attention with {@code d_n + d_r} dimensions per query/key head and {@code d_v} per value
 *       head, and the output projection {@code a d_v x h}.
 * </ul>
 *
 * <p>Field names follow the Hugging Face configs ({@code q_lora_rank}, {@code kv_lora_rank},
 * {@code qk_nope_head_dim}, {@code qk_rope_head_dim}, {@code v_head_dim}).
 *
 * @param qLoraRank {@code r_q}, the query latent's size; {@code 0} for uncompressed queries
 * @param kvLoraRank {@code r_kv}, the key/value latent's size
 * @param nopeDim {@code d_n}, the dimensions per head without rotary positions
 * @param ropeDim {@code d_r}, the rotary dimensions per head (even)
 * @param valueDim {@code d_v}, the value dimensions per head
 */
public record Mla(int qLoraRank, int kvLoraRank, int nopeDim, int ropeDim, int valueDim)
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The largest rank or head dimension taken (real models use 64 to 1536). */
  public static final int MAX_SIZE = 1 << 16;

  /** No latent attention: the model's attention is multi-head or grouped-query attention. */
  public static final Mla NONE = new Mla(0, 0, 0, 0, 0);

  /** Validates the sizes: all zero, or positive ranks and dimensions with an even rope part. */
  public Mla {
    Require.that(qLoraRank >= 0 && kvLoraRank >= 0 && nopeDim >= 0 && ropeDim >= 0
        && valueDim >= 0, "latent attention sizes must not be negative");
    boolean none = kvLoraRank == 0 && nopeDim == 0 && ropeDim == 0 && valueDim == 0
        && qLoraRank == 0;
    Require.that(none || kvLoraRank > 0 && nopeDim > 0 && ropeDim > 0 && valueDim > 0,
        () -> "latent attention needs positive kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim "
        + "and v_head_dim, got " + kvLoraRank + ", " + nopeDim + ", " + ropeDim + ", " + valueDim);
    Require.that(ropeDim % 2 == 0, () -> "qk_rope_head_dim must be even (rotary embeddings rotate "
        + "pairs), got " + ropeDim);
    Require.that(Math.max(Math.max(qLoraRank, kvLoraRank), Math.max(Math.max(nopeDim, ropeDim),
        valueDim)) <= MAX_SIZE, () -> "latent attention ranks and head sizes must be at most "
        + MAX_SIZE);
  }

  /**
   * Whether the attention is latent.
   *
   * @return true unless {@link #NONE}
   */
  public boolean on() {
    return kvLoraRank > 0;
  }

  /**
   * The query and key dimensions per head.
   *
   * @return {@code d_n + d_r}
   */
  public int qkDim() {
    return nopeDim + ropeDim;
  }

  /**
   * The weights of one block's latent attention: the query down- and up-projections (or the
   * direct query projection) with the query latent's norm gain, the key/value down-projection,
   * its norm gain and up-projection, and the output projection; no biases.
   *
   * @param hidden h
   * @param heads a
   * @return parameters, elements
   */
  public long parameters(int hidden, int heads) {
    long h = hidden;
    long a = heads;
    long qOut = Math.multiplyExact(a, qkDim());
    long q = qLoraRank > 0
        ? Math.addExact(Math.addExact(Math.multiplyExact(h, qLoraRank), qLoraRank),
            Math.multiplyExact((long) qLoraRank, qOut))
        : Math.multiplyExact(h, qOut);
    long kv = Math.addExact(Math.addExact(Math.multiplyExact(h, (long) kvLoraRank + ropeDim),
        kvLoraRank), Math.multiplyExact(Math.multiplyExact((long) kvLoraRank, a),
            (long) nopeDim + valueDim));
    long out = Math.multiplyExact(Math.multiplyExact(a, valueDim), h);
    return Math.addExact(Math.addExact(q, kv), out);
  }

  /**
   * The weights of one block's matrix multiplications (no norm gains), for FLOP counts.
   *
   * @param hidden h
   * @param heads a
   * @return parameters, elements
   */
  public long matmulParameters(int hidden, int heads) {
    return parameters(hidden, heads) - qLoraRank - kvLoraRank;
  }
}
