package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.Require;

/**
 * The dimensions of a model and its workload.
 *
 * @param name the preset name or a description
 * @param family which builder makes its graph
 * @param layers number of transformer blocks (or dot layers for {@link Family#ALPA_MLP})
 * @param hidden hidden size h
 * @param heads attention heads
 * @param kvHeads key/value heads (equal to heads without grouped-query attention)
 * @param ffn feed-forward inner size
 * @param vocab vocabulary size
 * @param seq sequence length, tokens
 * @param batch batch size, sequences
 * @param dtype element type of weights and activations
 */
public record ModelSpec(
    String name,
    Family family,
    int layers,
    int hidden,
    int heads,
    int kvHeads,
    int ffn,
    int vocab,
    int seq,
    int batch,
    DType dtype) {

  /** The graph builders. */
  public enum Family {
    /** LLaMA decoder: RMSNorm, attention (optionally grouped-query), SwiGLU. */
    LLAMA,
    /** The MLP training step of Alpa's prototype tests. */
    ALPA_MLP
  }

  /** Validates sizes. */
  public ModelSpec {
    Require.nonNull(name, "name");
    Require.nonNull(family, "family");
    Require.positive(layers, "--layers");
    Require.positive(hidden, "--hidden");
    Require.positive(heads, "--heads");
    Require.positive(kvHeads, "--kv-heads");
    Require.positive(ffn, "--ffn");
    Require.positive(vocab, "--vocab");
    Require.positive(seq, "--seq");
    Require.positive(batch, "--batch");
    Require.nonNull(dtype, "dtype");
    if (family == Family.LLAMA) {
      Require.that(hidden % heads == 0, "--hidden " + hidden + " must be a multiple of --heads "
          + heads);
      Require.that(heads % kvHeads == 0, "--heads " + heads + " must be a multiple of --kv-heads "
          + kvHeads);
    }
  }

  /**
   * The size of one attention head.
   *
   * @return hidden / heads
   */
  public int headDim() {
    return hidden / heads;
  }

  /**
   * The number of weights.
   *
   * @return parameters of the blocks (embedding and head excluded for LLaMA)
   */
  public long parameterCount() {
    if (family == Family.ALPA_MLP) {
      return (long) layers * hidden * hidden;
    }
    long kv = (long) kvHeads * headDim();
    long attn = 2L * hidden * hidden + 2L * hidden * kv;
    long mlp = 3L * hidden * ffn;
    return layers * (attn + mlp + 2L * hidden);
  }
}
