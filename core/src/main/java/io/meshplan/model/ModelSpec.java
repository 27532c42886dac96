package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.Require;

/**
 * The dimensions of a decoder-only transformer and its workload.
 *
 * @param name the preset name or a description
 * @param family which forward builder makes its graph for {@code shard}
 * @param layers number of transformer blocks (or dot layers for {@link Family#ALPA_MLP})
 * @param hidden hidden size h
 * @param heads attention heads a
 * @param kvHeads key/value heads (equal to heads without grouped-query attention)
 * @param ffn feed-forward inner size f (of each routed expert in a mixture-of-experts model)
 * @param vocab vocabulary size V
 * @param seq sequence length of the workload, tokens
 * @param batch batch size of the workload, sequences
 * @param dtype element type of weights and activations in forward graphs
 * @param arch the layer design (MLP, norm, positions, biases, tied embeddings)
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
    DType dtype,
    Architecture arch) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The model families. */
  public enum Family {
    /**
     * LLaMA and Mistral: RMSNorm, rotary, SwiGLU, optionally grouped-query attention; the forward
     * graph of {@code shard} comes from {@link LlamaForwardBuilder}.
     */
    LLAMA,
    /** GPT, OPT and GPT-NeoX style decoders (LayerNorm, two-matrix MLP, biases). */
    GPT,
    /** The MLP training step of Alpa's prototype tests. */
    ALPA_MLP
  }

  /**
   * The most layers a model may have: 131,072 = 1,024 x the 128 layers of the deepest preset
   * (gpt-1t). Every estimate that gates work (the stage table's layers^2 x shapes cells, the
   * simulator's per-layer lists, the graph builders' per-layer instructions) is polynomial in
   * the layer count, so this bound keeps each of them far inside a long and lets the later
   * guards refuse quickly instead of wrapping around.
   */
  public static final int MAX_LAYERS = 1 << 17;

  /** Validates sizes. */
  public ModelSpec {
    Require.nonNull(name, "name");
    Require.nonNull(family, "family");
    Require.positive(layers, "layers");
    Require.that(layers <= MAX_LAYERS, "layers must be at most " + MAX_LAYERS + ", got "
        + layers);
    Require.positive(hidden, "hidden size");
    Require.positive(heads, "attention heads");
    Require.positive(kvHeads, "key/value heads");
    Require.positive(ffn, "feed-forward size");
    Require.positive(vocab, "vocabulary");
    Require.positive(seq, "sequence length");
    Require.positive(batch, "batch");
    Require.nonNull(dtype, "dtype");
    Require.nonNull(arch, "arch");
    if (family != Family.ALPA_MLP) {
      Require.that(arch.attn().headDim() > 0 || hidden % heads == 0, "hidden size " + hidden
          + " must be a multiple of attention heads " + heads);
      Require.that(heads % kvHeads == 0, "attention heads " + heads + " must be a multiple of "
          + "key/value heads " + kvHeads);
    }
    if (family == Family.LLAMA) {
      Require.that(arch.mlp().gated() && arch.norm() == Architecture.Norm.RMS
          && arch.positions() == Architecture.Positions.ROTARY,
          "a LLaMA-family model needs SwiGLU, RMSNorm and rotary positions, got " + arch);
    }
  }

  /**
   * A spec with the family's usual architecture: {@link Architecture#llama()} for LLaMA and the
   * Alpa MLP, {@link Architecture#megatronGpt} with {@code seq} position rows for GPT.
   *
   * @param name the name
   * @param family the family
   * @param layers blocks
   * @param hidden h
   * @param heads a
   * @param kvHeads key/value heads
   * @param ffn f
   * @param vocab V
   * @param seq tokens per sequence
   * @param batch sequences
   * @param dtype element type
   */
  public ModelSpec(String name, Family family, int layers, int hidden, int heads, int kvHeads,
      int ffn, int vocab, int seq, int batch, DType dtype) {
    this(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, dtype,
        family == Family.GPT ? Architecture.megatronGpt(seq) : Architecture.llama());
  }

  /**
   * The size of one attention head.
   *
   * @return the architecture's explicit {@code head_dim}, else hidden / heads
   */
  public int headDim() {
    return arch.attn().headDim() > 0 ? arch.attn().headDim() : hidden / heads;
  }

  /**
   * The parameters of one transformer block: Q, K, V and output projections (with their biases
   * when the architecture has them, or Q, K and V biases alone), the q/k norms, the MLP matrices
   * (and biases) or the mixture-of-experts layer ({@link MoeShape#parameters}), the attention
   * sinks (one per head), and the block's two or four norms. Fused QKV or gate/up matrices
   * (Phi-3) hold the same weights and count the same.
   *
   * @return parameters per block (one dot layer, h x h, for {@link Family#ALPA_MLP})
   */
  public long blockParameterCount() {
    long h = hidden;
    if (family == Family.ALPA_MLP) {
      return h * h;
    }
    AttentionShape at = arch.attn();
    long qd = Math.multiplyExact((long) heads, headDim());
    long kv = Math.multiplyExact((long) kvHeads, headDim());
    long attn = 2 * h * qd + 2 * h * kv;
    MoeShape moe = arch.moe();
    long mlp = moe.routed() ? moe.parameters(hidden) : (arch.mlp().gated() ? 3 : 2) * h * ffn;
    long mlpBias = moe.routed() ? 0 : (arch.mlp().gated() ? 2L * ffn : ffn) + h;
    long bias = arch.biases() ? qd + 2 * kv + h + mlpBias
        : at.qkvBias() ? qd + 2 * kv : 0;
    long qkNorm = switch (at.qkNorm()) {
      case NONE -> 0;
      case PER_HEAD -> 2L * headDim();
      case WHOLE -> qd + kv;
    };
    long sinks = at.sinks() ? heads : 0;
    return Math.addExact(attn + mlp + bias + qkNorm + sinks,
        at.blockNorms() * arch.norm().parameters(hidden));
  }

  /**
   * The parameters of the embedding layer: the token table and, with learned positions, the
   * position table.
   *
   * @return {@code V*h + positionRows*h} (0 for {@link Family#ALPA_MLP})
   */
  public long embeddingParameterCount() {
    if (family == Family.ALPA_MLP) {
      return 0;
    }
    return ((long) vocab + arch.positionRows()) * hidden;
  }

  /**
   * The parameters after the last block: the final norm and, unless tied to the embedding, the
   * LM head (which has no bias in any supported family).
   *
   * @return parameters of the head (0 for {@link Family#ALPA_MLP})
   */
  public long headParameterCount() {
    if (family == Family.ALPA_MLP) {
      return 0;
    }
    return arch.norm().parameters(hidden) + (arch.tiedEmbeddings() ? 0 : (long) vocab * hidden);
  }

  /**
   * All parameters: embeddings, position table, every block, the final norm and the LM head
   * (counted once when tied).
   *
   * @return the number of weights
   */
  public long parameterCount() {
    return Math.addExact(Math.addExact(embeddingParameterCount(),
        Math.multiplyExact((long) layers, blockParameterCount())), headParameterCount());
  }

  /**
   * The parameters of all blocks, without embeddings and head (what this method's predecessor,
   * {@code parameterCount}, returned for LLaMA).
   *
   * @return {@code layers * blockParameterCount()}
   */
  public long blocksParameterCount() {
    return Math.multiplyExact((long) layers, blockParameterCount());
  }

  /**
   * The parameters one token's forward pass uses: every weight but the routed experts the router
   * does not pick ({@code E - k} of each block's experts), the embedding table included, as
   * Mistral's and Qwen's active counts have it (OpenAI's gpt-oss card leaves the table out).
   * Equal to {@link #parameterCount()} for a dense model.
   *
   * @return active parameters
   */
  public long activeParameterCount() {
    MoeShape moe = arch.moe();
    if (!moe.routed()) {
      return parameterCount();
    }
    long idle = moe.expertParameters(hidden) / moe.experts() * (moe.experts() - moe.topK());
    return Math.subtractExact(parameterCount(), Math.multiplyExact((long) layers, idle));
  }

  /**
   * This spec with another workload.
   *
   * @param newSeq tokens per sequence
   * @param newBatch sequences
   * @return the spec
   */
  public ModelSpec withWorkload(int newSeq, int newBatch) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, newSeq,
        newBatch, dtype, arch);
  }

  /**
   * This spec as one training job runs it.
   *
   * @param newBatch sequences per iteration
   * @param newDtype the training precision
   * @return the spec
   */
  public ModelSpec withTraining(int newBatch, DType newDtype) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, newBatch,
        newDtype, arch);
  }

  /**
   * This spec at another sequence length, with the layer design that length implies ({@link
   * Architecture#forSequence}).
   *
   * @param newSeq tokens per sequence
   * @return the spec
   */
  public ModelSpec withSequence(int newSeq) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, newSeq, batch,
        dtype, arch.forSequence(newSeq));
  }

  /**
   * This spec with another number of transformer blocks.
   *
   * @param newLayers blocks
   * @return the spec
   */
  public ModelSpec withLayers(int newLayers) {
    return new ModelSpec(name, family, newLayers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch);
  }
}
