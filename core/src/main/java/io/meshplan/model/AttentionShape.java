package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The attention and block details that set the Hugging Face decoder families of 2024-2025 apart
 * from LLaMA: Qwen2 (Yang et al. 2024), Qwen3, Gemma 2 and 3 (Gemma Team 2024, 2025), Phi-3
 * (Abdin et al. 2024), OLMo 2 (OLMo et al. 2024), Granite 3.0 and StarCoder2 (Lozhkov et al.
 * 2024).
 *
 * @param headDim the size of one attention head, elements; {@code 0} for {@code hidden / heads}
 * @param qkvBias whether the query, key and value projections have a bias when the architecture
 *     has no biases elsewhere (Qwen2)
 * @param qkNorm the RMSNorm on queries and keys (Qwen3, Gemma 3: per head; OLMo 2: over all
 *     heads)
 * @param blockNorms norms per block: 2 (before attention and MLP), or 4 in Gemma 2 and 3, which
 *     also norm each sublayer's output
 * @param attentionSoftcap the attention scores' soft cap {@code c} of {@code c tanh(x / c)}
 *     (Gemma 2); {@code 0} for none
 * @param finalSoftcap the logits' soft cap (Gemma 2); {@code 0} for none
 * @param window the sliding attention window, tokens: a query sees itself and the {@code window -
 *     1} tokens before it (Beltagy et al. 2020; Mistral); {@code 0} for none
 * @param globalEvery with a window: layer {@code i} (from 0) attends globally when {@code (i + 1)
 *     % globalEvery == 0} (Gemma 2: 2, Gemma 3: 6); {@code 0} when every layer has the window
 * @param windowFrom with a window: the first windowed layer (Qwen2's {@code max_window_layers});
 *     the layers before it attend globally
 * @param sinks whether each head has a learned attention sink (GPT-OSS, OpenAI 2025; Xiao et
 *     al., ICLR'24): one logit per head and block that joins each query's softmax and takes its
 *     share of the probability mass without a value, {@code heads} parameters per block
 * @param mla the multi-head latent attention of DeepSeek-V2 and V3, or {@link Mla#NONE}; with
 *     it, {@code headDim} is 0 and the head sizes are the latent attention's
 * @param chunked whether the windowed layers attend within fixed chunks of {@code window}
 *     tokens (block-diagonal causal attention: Llama 4's {@code attention_chunk_size}, a query
 *     sees the earlier tokens of its own chunk only) rather than over a sliding window
 */
public record AttentionShape(
    int headDim, boolean qkvBias, QkNorm qkNorm, int blockNorms, double attentionSoftcap,
    double finalSoftcap, int window, int globalEvery, int windowFrom, boolean sinks, Mla mla,
    boolean chunked)
    implements java.io.Serializable {

  /**
   * A shape whose windowed layers, if any, slide their window.
   *
   * @param headDim explicit head size, 0 for hidden / heads
   * @param qkvBias biases on Q, K and V only
   * @param qkNorm query and key normalization
   * @param blockNorms 2 or 4
   * @param attentionSoftcap the attention soft cap, 0 for none
   * @param finalSoftcap the final logit soft cap, 0 for none
   * @param window the sliding window, tokens, 0 for none
   * @param globalEvery the global layer period with a window, 0 for none
   * @param windowFrom the first windowed layer
   * @param sinks whether each head has an attention sink
   * @param mla the latent attention's sizes, or {@link Mla#NONE}
   */
  public AttentionShape(int headDim, boolean qkvBias, QkNorm qkNorm, int blockNorms,
      double attentionSoftcap, double finalSoftcap, int window, int globalEvery,
      int windowFrom, boolean sinks, Mla mla) {
    this(headDim, qkvBias, qkNorm, blockNorms, attentionSoftcap, finalSoftcap, window,
        globalEvery, windowFrom, sinks, mla, false);
  }

  /**
   * This shape with chunked attention on its windowed layers: chunks of {@code chunk} tokens,
   * every {@code globalEvery}-th layer global (Llama 4: chunks of 8192, the NoPE layers, every
   * fourth, global).
   *
   * @param chunk tokens per chunk
   * @param newGlobalEvery the global layer period, 0 for none
   * @return the shape
   */
  public AttentionShape withChunks(int chunk, int newGlobalEvery) {
    return new AttentionShape(headDim, qkvBias, qkNorm, blockNorms, attentionSoftcap,
        finalSoftcap, chunk, newGlobalEvery, 0, sinks, mla, true);
  }

  /**
   * The causal query-key pairs of a sequence attending within fixed chunks: {@code q} whole
   * chunks of {@code C} tokens and a last one of {@code r}, {@code q C^2 / 2 + r^2 / 2}, the
   * work a fused kernel does with a block-diagonal causal mask (FlexAttention's chunked mask, as
   * Llama 4's training runs it).
   *
   * @param seq tokens
   * @param chunk tokens per chunk
   * @return pairs
   */
  public static double chunkedPairs(long seq, long chunk) {
    Require.positive(seq, "sequence length");
    Require.positive(chunk, "chunk");
    double q = seq / chunk;
    double r = seq % chunk;
    double c = chunk;
    return q * c * c / 2 + r * r / 2;
  }
  private static final long serialVersionUID = 4L;

  /** LLaMA, GPT, OPT, GPT-NeoX: nothing of the above. */
  public static final AttentionShape PLAIN = plain(0);

  /**
   * LLaMA's attention with heads of a given size: no biases, q/k norms, windows or sinks.
   *
   * @param headDim the head size, 0 for hidden / heads
   * @return the shape
   */
  public static AttentionShape plain(int headDim) {
    return new AttentionShape(headDim, false, QkNorm.NONE, 2, 0, 0, 0, 0, 0, false);
  }

  /**
   * A shape without latent attention.
   *
   * @param headDim the head size, 0 for hidden / heads
   * @param qkvBias QKV-only biases
   * @param qkNorm the q/k norms
   * @param blockNorms norms per block, 2 or 4
   * @param attentionSoftcap the scores' soft cap, 0 for none
   * @param finalSoftcap the logits' soft cap, 0 for none
   * @param window the sliding window, tokens, 0 for none
   * @param globalEvery the global layer period with a window, 0 for none
   * @param windowFrom the first windowed layer
   * @param sinks whether each head has an attention sink
   */
  public AttentionShape(int headDim, boolean qkvBias, QkNorm qkNorm, int blockNorms,
      double attentionSoftcap, double finalSoftcap, int window, int globalEvery,
      int windowFrom, boolean sinks) {
    this(headDim, qkvBias, qkNorm, blockNorms, attentionSoftcap, finalSoftcap, window,
        globalEvery, windowFrom, sinks, Mla.NONE);
  }

  /**
   * DeepSeek's attention: latent attention and nothing else of the above.
   *
   * @param mla the latent attention's sizes
   * @return the shape
   */
  public static AttentionShape latent(Mla mla) {
    return new AttentionShape(0, false, QkNorm.NONE, 2, 0, 0, 0, 0, 0, false, mla);
  }

  /**
   * A shape without attention sinks.
   *
   * @param headDim the head size, 0 for hidden / heads
   * @param qkvBias QKV-only biases
   * @param qkNorm the q/k norms
   * @param blockNorms norms per block, 2 or 4
   * @param attentionSoftcap the scores' soft cap, 0 for none
   * @param finalSoftcap the logits' soft cap, 0 for none
   * @param window the sliding window, tokens, 0 for none
   * @param globalEvery the global layer period with a window, 0 for none
   * @param windowFrom the first windowed layer
   */
  public AttentionShape(int headDim, boolean qkvBias, QkNorm qkNorm, int blockNorms,
      double attentionSoftcap, double finalSoftcap, int window, int globalEvery,
      int windowFrom) {
    this(headDim, qkvBias, qkNorm, blockNorms, attentionSoftcap, finalSoftcap, window,
        globalEvery, windowFrom, false);
  }

  /**
   * This shape with another sliding window.
   *
   * @param newWindow the window, tokens, 0 for none
   * @param newGlobalEvery the global layer period, 0 for none
   * @param newWindowFrom the first windowed layer
   * @return the shape
   */
  public AttentionShape withWindow(int newWindow, int newGlobalEvery, int newWindowFrom) {
    return new AttentionShape(headDim, qkvBias, qkNorm, blockNorms, attentionSoftcap,
        finalSoftcap, newWindow, newGlobalEvery, newWindowFrom, sinks, mla,
        chunked && newWindow > 0);
  }

  /** Query and key normalizations. */
  public enum QkNorm {
    /** None. */
    NONE,
    /** An RMSNorm over each head's {@code d} elements, shared by the heads (Qwen3, Gemma 3). */
    PER_HEAD,
    /** An RMSNorm over all query heads and one over all key heads (OLMo 2). */
    WHOLE,
    /**
     * An L2 normalization of each head's {@code d} elements without a weight (Llama 4's {@code
     * use_qk_norm}, on its rotary layers): no parameters.
     */
    L2
  }

  /** The largest explicit head size (real models use 64 to 256; the Hugging Face reader's bound). */
  public static final int MAX_HEAD_DIM = 1 << 16;

  /** Validates the fields. */
  public AttentionShape {
    Require.that(headDim >= 0 && headDim <= MAX_HEAD_DIM, () -> "head_dim must be from 1 to "
        + MAX_HEAD_DIM + ", got " + headDim);
    Require.nonNull(qkNorm, "qkNorm");
    Require.that(blockNorms == 2 || blockNorms == 4, () -> "a block has 2 or 4 norms, not "
        + blockNorms);
    Require.that(attentionSoftcap >= 0 && Double.isFinite(attentionSoftcap),
        () -> "the attention soft cap must be positive, got " + attentionSoftcap);
    Require.that(finalSoftcap >= 0 && Double.isFinite(finalSoftcap),
        () -> "the final logit soft cap must be positive, got " + finalSoftcap);
    Require.that(window >= 0, () -> "the sliding window must be positive, got " + window);
    Require.that(globalEvery >= 0, () -> "the global layer period must be positive, got "
        + globalEvery);
    Require.that(windowFrom >= 0, () -> "the first windowed layer must not be negative, got "
        + windowFrom);
    Require.nonNull(mla, "mla");
    Require.that(!chunked || window > 0 && windowFrom == 0, () -> "chunked attention needs a chunk "
        + "size and chunks every layer from the first that is not global");
    Require.that(!mla.on() || headDim == 0 && qkNorm == QkNorm.NONE && !qkvBias,
        "latent attention sets its own head sizes and has no q/k norms or QKV biases");
  }

  /**
   * What sets this shape apart from LLaMA's besides the sliding window, for the consumers that
   * build or write only LLaMA- and GPT-style blocks (shard's forward graph, framework exports).
   *
   * @return e.g. {@code [head_dim 256, four norms per block]}; empty for {@link #PLAIN}
   */
  public java.util.List<String> beyondLlama() {
    java.util.List<String> out = new java.util.ArrayList<>();
    if (headDim > 0) {
      out.add("head_dim " + headDim);
    }
    if (qkvBias) {
      out.add("QKV biases");
    }
    if (qkNorm != QkNorm.NONE) {
      out.add("q/k norms");
    }
    if (blockNorms != 2) {
      out.add(blockNorms + " norms per block");
    }
    if (attentionSoftcap > 0 || finalSoftcap > 0) {
      out.add("logit soft-capping");
    }
    if (sinks) {
      out.add("attention sinks");
    }
    if (mla.on()) {
      out.add("multi-head latent attention");
    }
    if (chunked) {
      out.add("chunked attention");
    }
    return out;
  }

  /**
   * Whether layer {@code layer} attends within the sliding window.
   *
   * @param layer the block, from 0
   * @return true on a windowed layer
   */
  public boolean windowed(int layer) {
    return window > 0 && layer >= windowFrom
        && (globalEvery == 0 || (layer + 1) % globalEvery != 0);
  }

  /**
   * The query-key pairs one sequence's causal attention scores, with or without a window:
   * {@code s^2 / 2} without (the convention of FlashAttention's causal FLOP count, Dao 2023), and
   * {@code w^2 / 2 + (s - w) w} with a window {@code w < s} (the first {@code w} queries see all
   * before them, the rest {@code w} keys each).
   *
   * @param seq tokens s
   * @param window tokens w, {@code 0} for none
   * @return pairs (fractional: the continuous count)
   */
  public static double causalPairs(long seq, long window) {
    Require.positive(seq, "sequence length");
    Require.that(window >= 0, "window must not be negative");
    double s = seq;
    if (window == 0 || window >= seq) {
      return s * s / 2;
    }
    double w = window;
    return w * w / 2 + (s - w) * w;
  }
}
