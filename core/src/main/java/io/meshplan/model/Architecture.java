package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The layer design of a decoder-only transformer: what sets GPT (Radford et al. 2019; Megatron-LM,
 * Shoeybi et al. 2019), OPT (Zhang et al. 2022), GPT-NeoX (Black et al. 2022), LLaMA (Touvron et
 * al. 2023) and Mistral (Jiang et al. 2023) apart at the level that matters for parameter counts,
 * FLOPs and activation memory.
 *
 * @param mlp the feed-forward design
 * @param norm the normalization (one before attention, one before the MLP, one after the last
 *     block)
 * @param positions how positions enter the model
 * @param positionRows rows of the learned position table ({@code 0} with rotary embeddings; OPT
 *     stores {@code max_position_embeddings + 2} rows)
 * @param biases whether every linear layer has a bias (attention QKV and output, both MLP
 *     matrices; the LM head never has one)
 * @param tiedEmbeddings whether the LM head reuses the token embedding table
 * @param attn the attention details of the Hugging Face families (explicit head size, QKV-only
 *     biases, q/k norms, soft-capping, sliding windows); {@link AttentionShape#PLAIN} for the
 *     others
 * @param moe the mixture-of-experts layer; {@link MoeShape#DENSE} for a dense model
 * @param mtpDepth the multi-token prediction modules trained after the last block (DeepSeek-V3,
 *     arXiv:2412.19437, section 2.2: module {@code k} norms the previous depth's hidden state
 *     and the embedding of token {@code i + k}, projects their concatenation {@code 2h -> h},
 *     runs one transformer block and the shared LM head and loss; in a hybrid model the block
 *     is the layers of {@link HybridPattern#mtp}); {@code 0} for none
 * @param mtpShared whether the depths run one module's weights again (Megatron-Core's {@code
 *     mtp_use_repeated_layer}, {@code multi_token_prediction.py:1831-1874, 2049} at d98e8a6, as
 *     Nemotron 3 Super's recipes train its one released module for 2 depths), so the weights,
 *     gradients and optimizer state are one module's while each depth computes
 * @param numerics the rotary base and scaling, norm epsilon, dropout and the other numbers that
 *     change what the model computes but not its price ({@link Numerics})
 * @param hybrid the layer pattern of a hybrid state-space model (Nemotron-H: Mamba-2, attention
 *     and MLP layers, each its own residual sublayer); {@link HybridPattern#NONE} for an ordinary
 *     decoder, whose every block holds attention and an MLP
 */
public record Architecture(
    Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
    boolean tiedEmbeddings, AttentionShape attn, MoeShape moe, int mtpDepth, Numerics numerics,
    HybridPattern hybrid, boolean mtpShared)
    implements java.io.Serializable {
  private static final long serialVersionUID = 7L;

  /**
   * An architecture whose multi-token prediction modules, if any, have weights of their own.
   *
   * @param mlp the feed-forward design
   * @param norm the normalization
   * @param positions how positions enter the model
   * @param positionRows learned position rows (0 with rotary positions)
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head is the token table
   * @param attn the attention details
   * @param moe the mixture-of-experts layer
   * @param mtpDepth the multi-token prediction modules
   * @param numerics the numbers that do not change the price
   * @param hybrid the hybrid layer pattern, {@link HybridPattern#NONE} for an ordinary decoder
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings, AttentionShape attn, MoeShape moe, int mtpDepth, Numerics numerics,
      HybridPattern hybrid) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn, moe, mtpDepth,
        numerics, hybrid, false);
  }

  /**
   * This architecture with its multi-token prediction depths sharing one module's weights, or
   * each with its own.
   *
   * @param shared whether the depths share one module's weights
   * @return the architecture
   */
  public Architecture withMtpShared(boolean shared) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        moe, mtpDepth, numerics, hybrid, shared);
  }

  /**
   * The multi-token prediction modules that hold weights: one when the depths share it, else
   * one per depth.
   *
   * @return modules with weights, 0 without prediction
   */
  public int mtpWeightedModules() {
    return mtpShared ? Math.min(mtpDepth, 1) : mtpDepth;
  }

  /** The most multi-token prediction modules (DeepSeek-V3 trains 1). */
  public static final int MAX_MTP_DEPTH = 16;

  /**
   * An ordinary decoder's architecture: no hybrid layer pattern.
   *
   * @param mlp the feed-forward design
   * @param norm the normalization
   * @param positions how positions enter the model
   * @param positionRows learned position rows (0 with rotary positions)
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head is the token table
   * @param attn the attention details
   * @param moe the mixture-of-experts layer
   * @param mtpDepth the multi-token prediction modules
   * @param numerics the numbers that do not change the price
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings, AttentionShape attn, MoeShape moe, int mtpDepth, Numerics numerics) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn, moe, mtpDepth,
        numerics, HybridPattern.NONE);
  }

  /**
   * An architecture with {@link Numerics#DEFAULT}'s numbers.
   *
   * @param mlp the feed-forward design
   * @param norm the normalization
   * @param positions how positions enter the model
   * @param positionRows learned position rows (0 with rotary positions)
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head is the token table
   * @param attn the attention details
   * @param moe the mixture-of-experts layer
   * @param mtpDepth the multi-token prediction modules
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings, AttentionShape attn, MoeShape moe, int mtpDepth) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn, moe, mtpDepth,
        Numerics.DEFAULT);
  }

  /**
   * An architecture without multi-token prediction.
   *
   * @param mlp the feed-forward design
   * @param norm the normalization
   * @param positions how positions enter the model
   * @param positionRows learned position rows (0 with rotary positions)
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head is the token table
   * @param attn the attention details
   * @param moe the mixture-of-experts layer
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings, AttentionShape attn, MoeShape moe) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn, moe, 0);
  }

  /**
   * An architecture without the details of {@link AttentionShape}.
   *
   * @param mlp the feed-forward design
   * @param norm the normalization
   * @param positions how positions enter the model
   * @param positionRows rows of the learned position table
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head reuses the token embedding table
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, AttentionShape.PLAIN);
  }

  /**
   * A dense architecture (no experts).
   *
   * @param mlp the MLP
   * @param norm the norm
   * @param positions the positions
   * @param positionRows learned position rows (0 with rotary positions)
   * @param biases whether every linear layer has a bias
   * @param tiedEmbeddings whether the LM head is the token table
   * @param attn the attention details
   */
  public Architecture(Mlp mlp, Norm norm, Positions positions, int positionRows, boolean biases,
      boolean tiedEmbeddings, AttentionShape attn) {
    this(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn, MoeShape.DENSE);
  }

  /** Feed-forward designs. */
  public enum Mlp {
    /** Gated SiLU: {@code W2 (silu(x W1) * (x W3))}, three matrices h x f (Shazeer 2020). */
    SWIGLU,
    /** Two matrices with GeLU in between (GPT, GPT-NeoX). */
    GELU,
    /**
     * Gated GeLU (tanh approximation): {@code W2 (gelu(x W1) * (x W3))}, three matrices h x f
     * (Shazeer 2020; Gemma).
     */
    GEGLU,
    /** Two matrices with ReLU in between (OPT). */
    RELU,
    /**
     * Two matrices with squared ReLU in between, {@code relu(x)^2} (So et al., Primer, 2021;
     * Nemotron-H's {@code mlp_hidden_act: relu2}; Megatron-LM's {@code --squared-relu}).
     */
    RELU2;

    /**
     * Whether the MLP has a gate matrix.
     *
     * @return true for {@link #SWIGLU} and {@link #GEGLU}
     */
    public boolean gated() {
      return this == SWIGLU || this == GEGLU;
    }
  }

  /** Normalizations. */
  public enum Norm {
    /** RMSNorm: a gain per channel (Zhang and Sennrich 2019). */
    RMS,
    /** LayerNorm: a gain and a bias per channel (Ba et al. 2016). */
    LAYER;

    /**
     * Parameters of one norm over h channels.
     *
     * @param hidden h
     * @return h for RMSNorm, 2h for LayerNorm
     */
    public long parameters(int hidden) {
      return this == RMS ? hidden : 2L * hidden;
    }
  }

  /** Position encodings. */
  public enum Positions {
    /** Rotary embeddings applied to queries and keys (Su et al. 2021); no parameters. */
    ROTARY,
    /** A learned table added to the token embeddings. */
    LEARNED,
    /**
     * None: the attention layers of a hybrid model see no position encoding, the state-space
     * layers carry order (Nemotron-H: Megatron-Bridge's bridge sets {@code
     * position_embedding_type} "none").
     */
    NONE
  }

  /** Validates the fields. */
  public Architecture {
    Require.nonNull(mlp, "mlp");
    Require.nonNull(norm, "norm");
    Require.nonNull(positions, "positions");
    Require.nonNull(attn, "attn");
    Require.nonNull(moe, "moe");
    Require.nonNull(numerics, "numerics");
    Require.nonNull(hybrid, "hybrid");
    Require.that(!hybrid.on() || !attn.mla().on(), () -> "a hybrid layer pattern is priced without "
        + "latent attention");
    Require.that(!hybrid.on() || (mtpDepth > 0) == !hybrid.mtp().isEmpty(),
        () -> "a hybrid model's multi-token prediction modules need their layers, and layers "
        + "need modules");
    Require.that(positions != Positions.LEARNED ? positionRows == 0 : positionRows > 0,
        () -> "learned positions need a positive number of rows, rotary ones none; got "
        + positionRows);
    Require.that(!mtpShared || mtpDepth > 0, () -> "shared multi-token prediction weights need "
        + "prediction depths");
    Require.that(mtpDepth >= 0 && mtpDepth <= MAX_MTP_DEPTH, () -> "multi-token prediction depth "
        + "must be between 0 and " + MAX_MTP_DEPTH + ", got " + mtpDepth);
    Require.that(mtpDepth == 0 || !tiedEmbeddings && (positions == Positions.ROTARY
        || hybrid.on() && positions == Positions.NONE),
        () -> "multi-token prediction is priced for untied embeddings and rotary positions (as "
        + "DeepSeek-V3 has them), or none in a hybrid model (as Nemotron 3 Super has)");
    Require.that(!attn.mla().on() || positions == Positions.ROTARY && mlp.gated() && !biases,
        "latent attention needs rotary positions, a gated MLP and no biases");
  }

  /**
   * LLaMA and Mistral: SwiGLU, RMSNorm, rotary, no biases, untied embeddings.
   *
   * @return the architecture
   */
  public static Architecture llama() {
    return new Architecture(Mlp.SWIGLU, Norm.RMS, Positions.ROTARY, 0, false, false);
  }

  /**
   * GPT as trained by Megatron-LM (Narayanan et al. SC'21): GeLU MLP, LayerNorm, learned
   * positions, biases, embeddings tied to the LM head.
   *
   * @param positionRows rows of the position table (the sequence length, 2048 in Table 1)
   * @return the architecture
   */
  public static Architecture megatronGpt(int positionRows) {
    return new Architecture(Mlp.GELU, Norm.LAYER, Positions.LEARNED, positionRows, true, true)
        .withNumerics(MEGATRON_GPT);
  }

  /**
   * The numbers of a GPT trained by Megatron-LM with its defaults (Narayanan et al. SC'21 set no
   * others): LayerNorm epsilon 1e-5 and dropout 0.1 on the attention probabilities and the
   * hidden states ({@code megatron/core/transformer/transformer_config.py} at NVIDIA/Megatron-LM
   * d98e8a6: {@code layernorm_epsilon}, {@code attention_dropout}, {@code hidden_dropout}).
   */
  private static final Numerics MEGATRON_GPT = Numerics.rotary(10_000, 1e-5)
      .withDropout(0.1, 0.1);

  /**
   * OPT: ReLU MLP, LayerNorm, learned positions with OPT's offset of 2 rows, biases, tied
   * embeddings.
   *
   * @param maxPositions {@code max_position_embeddings}
   * @return the architecture
   */
  public static Architecture opt(int maxPositions) {
    // facebook/opt-*/config.json: dropout 0.1, attention_dropout 0.0; LayerNorm's default 1e-5.
    return new Architecture(Mlp.RELU, Norm.LAYER, Positions.LEARNED,
        Math.addExact(maxPositions, 2), true, true).withNumerics(Numerics.rotary(10_000, 1e-5)
        .withDropout(0, 0.1));
  }

  /**
   * GPT-NeoX: GeLU MLP, LayerNorm, rotary (on part of each head, which has no parameters), biases,
   * untied embeddings.
   *
   * @return the architecture
   */
  public static Architecture neox() {
    // transformers' GPTNeoXConfig defaults (configuration_gpt_neox.py at 008e574): rotary_pct
    // 0.25, use_parallel_residual true, layer_norm_eps 1e-5, no dropout.
    return new Architecture(Mlp.GELU, Norm.LAYER, Positions.ROTARY, 0, true, false)
        .withNumerics(Numerics.rotary(10_000, 1e-5).withRotary(0.25, true));
  }

  /**
   * What sets this design apart from the LLaMA- and GPT-style blocks that shard's forward graph
   * and the framework exports build: {@link AttentionShape#beyondLlama}, a GeGLU MLP and a
   * mixture of experts.
   *
   * @return the details, empty for the presets and LLaMA, Mistral, GPT-NeoX and OPT configs
   */
  public java.util.List<String> beyondLlama() {
    java.util.List<String> out = new java.util.ArrayList<>(attn.beyondLlama());
    if (mlp == Mlp.GEGLU) {
      out.add(0, "a GeGLU MLP");
    }
    if (mlp == Mlp.RELU2) {
      out.add(0, "a squared-ReLU MLP");
    }
    if (hybrid.on()) {
      out.add(0, "a hybrid layer pattern" + (hybrid.mamba() != null ? " with Mamba-2 layers"
          : ""));
    }
    if (moe.latent() > 0) {
      out.add(0, "experts in a latent width of " + moe.latent());
    }
    if (moe.routed()) {
      out.add(0, "a mixture of " + moe.experts() + " experts");
    }
    if (mtpDepth > 0) {
      out.add("multi-token prediction");
    }
    if (mtpShared) {
      out.add("prediction depths sharing one module's weights");
    }
    return out;
  }

  /**
   * This architecture able to train sequences of {@code seq} tokens: a learned position table
   * needs a row per position, so it grows when it is shorter (and is otherwise unchanged).
   *
   * @param seq tokens per sequence
   * @return the architecture
   */
  public Architecture forSequence(int seq) {
    return positionRows() < seq ? withPositionRows(seq) : this;
  }

  /**
   * This architecture with another mixture-of-experts layer.
   *
   * @param newMoe the layer
   * @return the architecture
   */
  public Architecture withMoe(MoeShape newMoe) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        newMoe, mtpDepth, numerics, hybrid, mtpShared);
  }

  /**
   * This architecture with another number of multi-token prediction modules (a hybrid's of the
   * layers its pattern gives them, which it must have for a depth above 0).
   *
   * @param depth the modules, 0 for none
   * @return the architecture
   */
  public Architecture withMtp(int depth) {
    // Without modules a hybrid has no prediction layers; with them, its own.
    HybridPattern h = depth == 0 && hybrid.on() ? hybrid.withMtp("") : hybrid;
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        moe, depth, numerics, h, mtpShared && depth > 0);
  }

  /**
   * This architecture with other attention details.
   *
   * @param a the attention details
   * @return the architecture
   */
  public Architecture withAttention(AttentionShape a) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, a, moe,
        mtpDepth, numerics, hybrid, mtpShared);
  }

  /**
   * This architecture with other numbers.
   *
   * @param n the rotary base and scaling, norm epsilon, dropout, ...
   * @return the architecture
   */
  public Architecture withNumerics(Numerics n) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        moe, mtpDepth, n, hybrid, mtpShared);
  }

  /**
   * This architecture with another number of learned position rows (rotary ones have none).
   *
   * @param rows position rows
   * @return the architecture
   */
  public Architecture withPositionRows(int rows) {
    return positions != Positions.LEARNED ? this
        : new Architecture(mlp, norm, positions, rows, biases, tiedEmbeddings, attn, moe,
            mtpDepth, numerics, hybrid, mtpShared);
  }

  /**
   * This architecture with another hybrid layer pattern.
   *
   * @param h the pattern, {@link HybridPattern#NONE} for an ordinary decoder
   * @return the architecture
   */
  public Architecture withHybrid(HybridPattern h) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        moe, mtpDepth, numerics, h, mtpShared);
  }

  /**
   * This architecture with another hybrid pattern and number of multi-token prediction modules.
   *
   * @param h the pattern, whose prediction module's layers are the modules' own
   * @param depth the modules, 0 for none
   * @return the architecture
   */
  public Architecture withHybrid(HybridPattern h, int depth) {
    return new Architecture(mlp, norm, positions, positionRows, biases, tiedEmbeddings, attn,
        moe, depth, numerics, h, mtpShared && depth > 0);
  }
}
