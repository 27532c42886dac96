package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.Require;
import java.util.List;

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
 * @param packing the documents packed into each sequence, whose attention stays within each
 *     document ({@link Packing}); {@link Packing#NONE} for one document per sequence
 * @param lora the low-rank adapters trained on frozen weights ({@link Lora}); {@link Lora#NONE}
 *     when every weight is trained
 * @param fp8Scaling how FP8 training scales its tensors ({@link Fp8Scaling}); read only when
 *     {@code dtype} is the FP8 recipe
 * @param optimizerState the precision of Adam's weights, moments and gradients ({@link
 *     OptimizerState}); bf16 needs bf16 weights
 * @param fp8ActivationInput whether the input of each SwiGLU (the gate and up projections'
 *     outputs) is saved for the backward pass as FP8 E4M3 copies, cast back to the compute type
 *     there, instead of in the compute type: Megatron-Core's {@code
 *     TransformerConfig.activation_func_fp8_input_store} (NVIDIA/Megatron-LM d98e8a6, {@code
 *     megatron/core/fusions/fused_bias_swiglu.py}, and {@code cache_quantized_input} of
 *     Transformer Engine's fused SwiGLU op), which it takes for SwiGLU only ({@code
 *     transformer_config.py}, {@code __post_init__}); dense MLPs, shared and routed experts
 *     alike
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
    Architecture arch,
    Packing packing,
    Lora lora,
    Fp8Scaling fp8Scaling,
    OptimizerState optimizerState,
    boolean fp8ActivationInput) implements java.io.Serializable {
  private static final long serialVersionUID = 6L;

  /**
   * A model whose SwiGLU inputs are saved in the compute type.
   *
   * @param name a name for reports
   * @param family the family
   * @param layers L
   * @param hidden h
   * @param heads a
   * @param kvHeads key/value heads
   * @param ffn f
   * @param vocab V
   * @param seq tokens per sequence
   * @param batch sequences
   * @param dtype element type
   * @param arch the block's design
   * @param packing the documents packed into each sequence
   * @param lora the adapters, or {@link Lora#NONE}
   * @param fp8Scaling the FP8 scaling, read only under FP8 training
   * @param optimizerState the optimizer-state precision
   */
  public ModelSpec(String name, Family family, int layers, int hidden, int heads, int kvHeads,
      int ffn, int vocab, int seq, int batch, DType dtype, Architecture arch, Packing packing,
      Lora lora, Fp8Scaling fp8Scaling, OptimizerState optimizerState) {
    this(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, dtype, arch,
        packing, lora, fp8Scaling, optimizerState, false);
  }

  /**
   * A model whose every weight is trained.
   *
   * @param name a name for reports
   * @param family the family
   * @param layers L
   * @param hidden h
   * @param heads a
   * @param kvHeads key/value heads
   * @param ffn f
   * @param vocab V
   * @param seq tokens per sequence
   * @param batch sequences
   * @param dtype element type
   * @param arch the block's design
   * @param packing the documents packed into each sequence
   */
  public ModelSpec(String name, Family family, int layers, int hidden, int heads, int kvHeads,
      int ffn, int vocab, int seq, int batch, DType dtype, Architecture arch, Packing packing) {
    this(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, dtype, arch,
        packing, Lora.NONE, Fp8Scaling.DELAYED, OptimizerState.FP32);
  }

  /**
   * A model trained with FP8's default scaling, delayed ({@link Fp8Scaling#DELAYED}), when its
   * precision is FP8.
   *
   * @param name a name for reports
   * @param family the family
   * @param layers L
   * @param hidden h
   * @param heads a
   * @param kvHeads key/value heads
   * @param ffn f
   * @param vocab V
   * @param seq tokens per sequence
   * @param batch sequences
   * @param dtype element type
   * @param arch the block's design
   * @param packing the documents packed into each sequence
   * @param lora the adapters, or {@link Lora#NONE}
   */
  public ModelSpec(String name, Family family, int layers, int hidden, int heads, int kvHeads,
      int ffn, int vocab, int seq, int batch, DType dtype, Architecture arch, Packing packing,
      Lora lora) {
    this(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, dtype, arch,
        packing, lora, Fp8Scaling.DELAYED, OptimizerState.FP32);
  }

  /**
   * A model trained on sequences of one document each.
   *
   * @param name a name for reports
   * @param family the family
   * @param layers L
   * @param hidden h
   * @param heads a
   * @param kvHeads key/value heads
   * @param ffn f
   * @param vocab V
   * @param seq tokens per sequence
   * @param batch sequences
   * @param dtype element type
   * @param arch the block's design
   */
  public ModelSpec(String name, Family family, int layers, int hidden, int heads, int kvHeads,
      int ffn, int vocab, int seq, int batch, DType dtype, Architecture arch) {
    this(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch, dtype, arch,
        Packing.NONE);
  }

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

  /**
   * The widest hidden size: 2^20 = 1,048,576, 40 x the 25,600 of the widest preset (gpt-1t,
   * Narayanan et al. SC'21, Table 1). With {@link #MAX_FFN} and {@link #MAX_VOCAB} it keeps every
   * weight matrix (h x f, V x h) at most 2^46 elements, inside the 2^50-byte tensor limit of
   * {@link io.meshplan.util.Checked#MAX_TENSOR_BYTES} in any element type, so sizes multiply in
   * a long without wrapping.
   */
  public static final int MAX_HIDDEN = 1 << 20;
  /** The largest feed-forward size: 2^22 = 4,194,304, 40 x gpt-1t's 4h = 102,400. */
  public static final int MAX_FFN = 1 << 22;
  /** The most attention heads: 2^16 = 65,536, 400 x gpt-1t's 160. */
  public static final int MAX_HEADS = 1 << 16;
  /** The largest vocabulary: 2^24 = 16,777,216, 83 x gpt-oss's 201,088 (the largest preset). */
  public static final int MAX_VOCAB = 1 << 24;
  /**
   * The longest sequence: 2^24 = 16,777,216 tokens, 2,048 x the 8,192 of the longest preset;
   * one head's s x s attention scores then hold at most 2^48 elements, exact in a double and far
   * inside a long.
   */
  public static final int MAX_SEQ = 1 << 24;

  /** Validates sizes. */
  public ModelSpec {
    Require.nonNull(name, "name");
    Require.nonNull(family, "family");
    Require.positive(layers, "layers");
    Require.that(layers <= MAX_LAYERS, () -> "layers must be at most " + MAX_LAYERS + ", got "
        + layers);
    bounded(hidden, MAX_HIDDEN, "hidden size");
    bounded(heads, MAX_HEADS, "attention heads");
    bounded(kvHeads, MAX_HEADS, "key/value heads");
    bounded(ffn, MAX_FFN, "feed-forward size");
    bounded(vocab, MAX_VOCAB, "vocabulary");
    bounded(seq, MAX_SEQ, "sequence length");
    // The batch is bounded where it meets the cluster (microbatches per iteration, tensors).
    Require.positive(batch, "batch");
    Require.nonNull(dtype, "dtype");
    Require.nonNull(arch, "arch");
    Require.nonNull(packing, "packing");
    Require.nonNull(lora, "lora");
    Require.nonNull(fp8Scaling, "fp8Scaling");
    Require.that(Require.nonNull(optimizerState, "optimizerState").heldBy(dtype), () -> "bf16 "
        + "optimizer state needs bf16 weights; the precision is " + Fp8Training.word(dtype));
    Require.that(!arch.attn().chunked() || !packing.packed(), () -> "packed documents with chunked "
        + "attention are not modelled");
    Require.that(!fp8ActivationInput || arch.mlp() == Architecture.Mlp.SWIGLU, () -> "the "
        + "activation input is stored in FP8 for SwiGLU only, as Megatron-Core does; this MLP is "
        + arch.mlp().name().toLowerCase(java.util.Locale.ROOT));
    if (family != Family.ALPA_MLP) {
      Require.that(arch.attn().headDim() > 0 || arch.attn().mla().on() || hidden % heads == 0,
          () -> "hidden size " + hidden
          + " must be a multiple of attention heads " + heads);
      Require.that(heads % kvHeads == 0,
          () -> "attention heads " + heads + " must be a multiple of key/value heads " + kvHeads);
      Mla mla = arch.attn().mla();
      long perHead = mla.on() ? Math.max(mla.qkDim(), (long) mla.nopeDim() + mla.valueDim())
          : arch.attn().headDim() > 0 ? arch.attn().headDim() : hidden / heads;
      Require.that(heads * perHead <= Integer.MAX_VALUE, () -> "attention heads " + heads + " x "
          + perHead + " elements per head exceed 2^31 - 1 elements per token");
    }
    Require.that(arch.positions() != Architecture.Positions.LEARNED || seq <= arch.positionRows(),
        () -> "sequence length " + seq + " exceeds the " + arch.positionRows() + " rows of the "
            + "learned position table");
    Require.that(!arch.hybrid().on() || !arch.biases(), () -> "a hybrid model's attention and MLP "
        + "layers are priced without biases (its Mamba projections' are the mixer's own)");
    Require.that(!arch.hybrid().on() || arch.hybrid().symbols().length() == layers
        && arch.moe().denseLayers().isEmpty()
        && arch.moe().routed() == (arch.hybrid().first(HybridPattern.MOE) >= 0),
        () -> "a hybrid pattern names each of the " + layers + " layers, its MLP layers are '-'"
        + " and its mixture-of-experts layers 'E' (and only a model with experts has them)");
    java.util.List<Integer> dense = arch.moe().denseLayers();
    Require.that(dense.isEmpty() || dense.get(dense.size() - 1) < layers && dense.size() < layers,
        () -> "dense blocks " + dense + " must be among the " + layers + " blocks, and at least "
        + "one block must route to experts");
    if (family == Family.LLAMA) {
      Require.that(arch.mlp().gated() && arch.norm() == Architecture.Norm.RMS
          && arch.positions() == Architecture.Positions.ROTARY,
          () -> "a LLaMA-family model needs SwiGLU, RMSNorm and rotary positions, got " + arch);
    }
    lora.check(name, family, hidden, arch);
    // QLoRA's published recipes compute in bf16 (bnb_4bit_compute_dtype), the paper's setting.
    Require.that(!lora.quantized() || dtype == DType.BF16, () -> "QLoRA trains in bf16 (its "
        + "4-bit base is dequantized to bf16 for each GEMM); the training precision is "
        + Fp8Training.word(dtype));
  }

  private static void bounded(int value, int max, String what) {
    Require.positive(value, what);
    Require.that(value <= max, () -> what + " must be at most " + max + ", got " + value);
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
   * The size of one attention head's queries and keys.
   *
   * @return the latent attention's {@code d_n + d_r}, else the architecture's explicit {@code
   *     head_dim}, else hidden / heads
   */
  public int headDim() {
    Mla mla = arch.attn().mla();
    if (mla.on()) {
      return mla.qkDim();
    }
    return arch.attn().headDim() > 0 ? arch.attn().headDim() : hidden / heads;
  }

  /**
   * The size of one attention head's values (and of the attention output per head).
   *
   * @return the latent attention's {@code d_v}, else {@link #headDim()}
   */
  public int valueHeadDim() {
    Mla mla = arch.attn().mla();
    return mla.on() ? mla.valueDim() : headDim();
  }

  /**
   * The parameters of a mixture-of-experts block, or of every block of a dense model: see {@link
   * #blockParameterCount(int)}.
   *
   * @return parameters per block (one dot layer, h x h, for {@link Family#ALPA_MLP})
   */
  public long blockParameterCount() {
    return blockParameters(false);
  }

  /**
   * The parameters of block {@code layer}: Q, K, V and output projections (with their biases
   * when the architecture has them, or Q, K and V biases alone) or the latent attention's ({@link
   * Mla#parameters}), the q/k norms, the MLP matrices (and biases) or the mixture-of-experts layer
   * ({@link MoeShape#parameters}), the attention sinks (one per head), and the block's two or four
   * norms. A listed dense block of a mixture-of-experts model has a dense MLP of {@link
   * MoeShape#denseFfn}. Fused QKV or gate/up matrices (Phi-3) hold the same weights and count the
   * same.
   *
   * @param layer the block, from 0
   * @return parameters of the block
   */
  public long blockParameterCount(int layer) {
    if (arch.hybrid().on()) {
      return hybridLayerParameters(arch.hybrid().at(layer));
    }
    return blockParameters(arch.moe().denseLayer(layer));
  }

  private long blockParameters(boolean denseMlp) {
    long h = hidden;
    if (family == Family.ALPA_MLP) {
      return h * h;
    }
    return Math.addExact(Math.addExact(attentionParameters(), mlpParameters(denseMlp)),
        arch.attn().blockNorms() * arch.norm().parameters(hidden));
  }

  /**
   * The parameters of one attention sublayer: the projections or the latent attention's, their
   * biases, the q/k norms and the sinks; no norm.
   */
  private long attentionParameters() {
    long h = hidden;
    AttentionShape at = arch.attn();
    long qd = Math.multiplyExact((long) heads, headDim());
    long kv = Math.multiplyExact((long) kvHeads, headDim());
    long attn = at.mla().on() ? at.mla().parameters(hidden, heads) : 2 * h * qd + 2 * h * kv;
    long bias = arch.biases() ? qd + 2 * kv + h : at.qkvBias() ? qd + 2 * kv : 0;
    long qkNorm = switch (at.qkNorm()) {
      case NONE, L2 -> 0;
      case PER_HEAD -> 2L * headDim();
      case WHOLE -> qd + kv;
    };
    long sinks = at.sinks() ? heads : 0;
    return Math.addExact(attn, bias + qkNorm + sinks);
  }

  /**
   * The parameters of one MLP sublayer: the mixture-of-experts layer, or a dense MLP (of {@link
   * MoeShape#denseFfn} in a listed dense block of a mixture-of-experts model) with its biases; no
   * norm.
   */
  private long mlpParameters(boolean denseMlp) {
    MoeShape moe = arch.moe();
    if (moe.routed() && !denseMlp) {
      return moe.parameters(hidden, arch.mlp().gated());
    }
    return denseMlpParameters(moe.routed() ? moe.denseFfn() : ffn);
  }

  /** A dense MLP of inner size {@code f}: its two or three matrices and their biases. */
  private long denseMlpParameters(long f) {
    long mlp = Math.multiplyExact((arch.mlp().gated() ? 3L : 2L) * hidden, f);
    long bias = arch.biases() ? (arch.mlp().gated() ? 2L * f : f) + hidden : 0;
    return Math.addExact(mlp, bias);
  }

  /**
   * The parameters of one layer of a hybrid model ({@link HybridPattern}): its pre-norm and its
   * Mamba-2 mixer ({@link MambaShape#parameters}), attention, dense MLP of {@code ffn}, or
   * mixture-of-experts layer.
   */
  private long hybridLayerParameters(char symbol) {
    long norm = arch.norm().parameters(hidden);
    HybridPattern hp = arch.hybrid();
    return Math.addExact(norm, switch (symbol) {
      case HybridPattern.MAMBA -> hp.mamba().parameters(hidden);
      case HybridPattern.GDN -> hp.gdn().parameters(hidden);
      case HybridPattern.SELECTIVE -> hp.mamba1().parameters(hidden);
      case HybridPattern.ATTENTION -> Math.addExact(attentionParameters(), hp.attentionGate()
          ? Math.multiplyExact((long) hidden, Math.multiplyExact((long) heads, headDim())) : 0);
      case HybridPattern.MOE -> arch.moe().parameters(hidden, arch.mlp().gated());
      default -> denseMlpParameters(ffn);
    });
  }

  /**
   * The blocks with a dense MLP among those of a mixture-of-experts model.
   *
   * @return the listed dense blocks, 0 for a dense model
   */
  public int denseBlocks() {
    return arch.moe().denseIn(0, layers - 1);
  }

  /**
   * One dense block of this mixture-of-experts model as a model of its own: the same attention,
   * a dense MLP of {@link MoeShape#denseFfn}, no experts and no multi-token prediction. Its
   * blocks price as this model's dense blocks.
   *
   * @return the spec
   */
  public ModelSpec denseBlockModel() {
    Require.that(denseBlocks() > 0, "the model has no dense blocks among its expert blocks");
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, arch.moe().denseFfn(),
        vocab, seq, batch, dtype, arch.withMoe(MoeShape.DENSE).withMtp(0), packing, lora,
        fp8Scaling, optimizerState, fp8ActivationInput);
  }

  /**
   * The parameters of the multi-token prediction modules: per module, the two input norms and
   * the final norm ({@code 3 h} with RMSNorm), the projection {@code 2h x h} and one block (a
   * mixture-of-experts block in a mixture-of-experts model); the embedding and LM head are the
   * model's own, shared (DeepSeek-V3, section 2.2). Depths that share one module's weights
   * ({@link Architecture#mtpShared}) count it once.
   *
   * @return parameters, 0 without multi-token prediction
   */
  public long mtpParameterCount() {
    long h = hidden;
    long module = Math.addExact(Math.addExact(3 * arch.norm().parameters(hidden), 2 * h * h),
        mtpBlockParameters());
    return Math.multiplyExact(module, arch.mtpWeightedModules());
  }

  /**
   * The parameters of one multi-token prediction module's block: an expert block, or in a hybrid
   * model its pattern's layers ({@link HybridPattern#mtp}), each with its norm.
   */
  private long mtpBlockParameters() {
    if (!arch.hybrid().on()) {
      return blockParameters(false);
    }
    long sum = 0;
    for (char c : arch.hybrid().mtp().toCharArray()) {
      sum = Math.addExact(sum, hybridLayerParameters(c));
    }
    return sum;
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
   * (counted once when tied), and the multi-token prediction modules.
   *
   * @return the number of weights
   */
  public long parameterCount() {
    return Math.addExact(Math.addExact(Math.addExact(embeddingParameterCount(),
        blocksParameterCount()), headParameterCount()), mtpParameterCount());
  }

  /**
   * The parameters of all blocks, without embeddings and head (what this method's predecessor,
   * {@code parameterCount}, returned for LLaMA).
   *
   * @return the sum of {@link #blockParameterCount(int)} over the blocks
   */
  public long blocksParameterCount() {
    if (arch.hybrid().on()) {
      long sum = 0;
      for (int i = 0; i < layers; i++) {
        sum = Math.addExact(sum, blockParameterCount(i));
      }
      return sum;
    }
    int dense = denseBlocks();
    return Math.addExact(Math.multiplyExact((long) layers - dense, blockParameters(false)),
        Math.multiplyExact((long) dense, blockParameters(true)));
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
    long idle = moe.expertParameters(hidden, arch.mlp().gated()) / moe.experts()
        * (moe.experts() - moe.topK());
    HybridPattern hp = arch.hybrid();
    long routedBlocks = hp.on()
        ? hp.count(HybridPattern.MOE, 0, layers - 1)
            + (long) arch.mtpWeightedModules()
                * hp.mtp().chars().filter(c -> c == HybridPattern.MOE).count()
        : (long) layers - denseBlocks() + arch.mtpWeightedModules();
    return Math.subtractExact(parameterCount(), Math.multiplyExact(routedBlocks, idle));
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
        newBatch, dtype, arch, packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
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
        newDtype, arch, packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
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
        dtype, arch.forSequence(newSeq), packing, lora, fp8Scaling, optimizerState,
        fp8ActivationInput);
  }

  /**
   * This spec with another number of transformer blocks: the first {@code newLayers} of its
   * blocks when it has dense blocks among its expert blocks (a dense model when all of those are
   * dense).
   *
   * @param newLayers blocks
   * @return the spec
   */
  public ModelSpec withLayers(int newLayers) {
    if (arch.hybrid().on()) {
      if (newLayers > layers) {
        throw new io.meshplan.util.InputException(name + "'s " + layers + " layers follow its "
            + "hybrid pattern; " + newLayers + " layers would need a pattern for the others");
      }
      HybridPattern kept = arch.hybrid().truncated(newLayers);
      // Its first layers may hold no experts: the shorter model is then a dense one.
      // The prediction modules stay where the pattern keeps their layers (HybridPattern#truncated).
      int depth = kept.mtp().isEmpty() ? 0 : arch.mtpDepth();
      Architecture a = kept.first(HybridPattern.MOE) >= 0 ? arch.withHybrid(kept, depth)
          : arch.withHybrid(kept, depth).withMoe(MoeShape.DENSE);
      return new ModelSpec(name, family, newLayers, hidden, heads, kvHeads, ffn, vocab, seq,
          batch, dtype, a, packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
    }
    MoeShape moe = arch.moe();
    if (moe.denseLayers().isEmpty()) {
      return new ModelSpec(name, family, newLayers, hidden, heads, kvHeads, ffn, vocab, seq,
          batch, dtype, arch, packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
    }
    // The first blocks keep their kinds; when all of them are dense blocks, the model is dense.
    List<Integer> kept = moe.denseLayers().stream().filter(i -> i < newLayers).toList();
    if (kept.size() == newLayers) {
      return new ModelSpec(name, family, newLayers, hidden, heads, kvHeads, moe.denseFfn(), vocab,
          seq, batch, dtype, arch.withMoe(MoeShape.DENSE), packing, lora,
          fp8Scaling, optimizerState, fp8ActivationInput);
    }
    return new ModelSpec(name, family, newLayers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch.withMoe(moe.withDenseLayers(kept, kept.isEmpty() ? 0 : moe.denseFfn())),
        packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
  }

  /**
   * Refuses a layout a hybrid model's mixers cannot take ({@link #hybridLayoutProblem}).
   *
   * @param tp the tensor-parallel size
   * @param cp the context-parallel size
   * @throws io.meshplan.util.InputException naming what does not fit
   */
  public void checkHybridLayout(int tp, int cp) {
    hybridLayoutProblem(tp, cp).ifPresent(p -> {
      throw new io.meshplan.util.InputException(p);
    });
  }

  /**
   * What a QLoRA base cannot take of a layout: tensor parallelism. bitsandbytes' 4-bit weights
   * are whole {@code Linear4bit} layers with per-block constants over the flattened weight, and
   * the frameworks that load them (transformers, PEFT, accelerate, TRL) run them data-parallel,
   * with DDP, FSDP (Answer.AI's FSDP+QLoRA: {@code bnb_4bit_quant_storage} of a floating type
   * lets FSDP shard them, accelerate's {@code fsdp_utils.py} at 16cb6eb8) or DeepSpeed ZeRO;
   * Megatron-LM and torchtitan, which split layers over tensor ranks, do not load them.
   *
   * @param tp the tensor-parallel size
   * @return the sentence, or empty when the layout fits (and without QLoRA)
   */
  public java.util.Optional<String> quantizedLayoutProblem(int tp) {
    return lora.quantized() && tp > 1 ? java.util.Optional.of("QLoRA's 4-bit base runs "
        + "data-parallel only (bitsandbytes' Linear4bit under DDP, FSDP or ZeRO); tensor "
        + "parallelism of " + tp + " is not run by any framework that loads it")
        : java.util.Optional.empty();
  }

  /**
   * What a hybrid model's mixers cannot take of a layout, as Megatron-Core splits them: a
   * tensor-parallel size that does not divide the Mamba-2 heads and groups ({@link
   * MambaShape#splits}: {@code mamba_mixer.py} asserts both), the Gated DeltaNet key and value
   * heads ({@link GdnShape#splits}, by TP x CP: {@code transformer_config.py}) or the Mamba-1
   * channels; a context-parallel size that does not split each tensor rank's Mamba-2 heads and
   * groups ({@link MambaShape#splitsContext}: {@code mamba_context_parallel.py}); any context
   * parallelism over Mamba-1 layers, which no framework implements.
   *
   * @param tp the tensor-parallel size
   * @param cp the context-parallel size
   * @return the sentence, or empty when the layout fits (and for an ordinary decoder)
   */
  public java.util.Optional<String> hybridLayoutProblem(int tp, int cp) {
    MambaShape mamba = arch.hybrid().mamba();
    GdnShape gdn = arch.hybrid().gdn();
    Mamba1Shape mamba1 = arch.hybrid().mamba1();
    String why = null;
    if (mamba != null && !mamba.splits(tp)) {
      why = "'s Mamba layers have " + mamba.heads() + " heads in " + mamba.groups() + " groups;"
          + " tensor parallelism of " + tp + " must divide both (Megatron-Core splits heads and"
          + " groups over the ranks)";
    } else if (mamba != null && !mamba.splitsContext(tp, cp)) {
      why = "'s Mamba layers hold " + mamba.heads() / tp + " heads in " + mamba.groups() / tp
          + " groups per tensor rank; context parallelism of " + cp + " must divide the heads, "
          + "and divide the groups or be a multiple of them (Megatron-Core's "
          + "mamba_context_parallel.py)";
    } else if (gdn != null && !gdn.splits(tp)) {
      why = "'s Gated DeltaNet layers have " + gdn.keyHeads() + " key heads and "
          + gdn.valueHeads() + " value heads; tensor parallelism of " + tp + " must divide both"
          + " (Megatron-Core splits them over the ranks)";
    } else if (gdn != null && !gdn.splits(tp * cp)) {
      why = "'s Gated DeltaNet layers have " + gdn.keyHeads() + " key heads and "
          + gdn.valueHeads() + " value heads; tensor x context parallelism of " + tp + " x " + cp
          + " must divide both (Megatron-Core's transformer_config.py)";
    } else if (mamba1 != null && !mamba1.splits(tp)) {
      why = "'s Mamba-1 layers have " + mamba1.inner() + " channels; tensor parallelism of " + tp
          + " must divide them";
    } else if (mamba1 != null && cp > 1) {
      why = " has Mamba-1 layers, whose context parallelism no framework meshplan knows "
          + "implements; use --cp 1";
    }
    return java.util.Optional.ofNullable(why).map(w -> name + w);
  }

  /**
   * This spec trained on packed documents.
   *
   * @param p the documents, or {@link Packing#NONE}
   * @return the spec
   */
  public ModelSpec withPacking(Packing p) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch, p, lora, fp8Scaling, optimizerState, fp8ActivationInput);
  }

  /**
   * The causal query-key pairs a windowed block computes, as a share of a whole sequence's:
   * within its sliding window and its packed documents ({@link Packing#work}), or within its
   * chunks ({@link AttentionShape#chunkedPairs}; packed documents are not modelled with chunks).
   *
   * @param seq tokens per sequence
   * @return the share, in (0, 1]
   */
  public double windowedWork(int seq) {
    AttentionShape at = arch.attn();
    if (at.chunked()) {
      return AttentionShape.chunkedPairs(seq, at.window()) / AttentionShape.causalPairs(seq, 0);
    }
    return packing.work(seq, at.window());
  }

  /**
   * This spec fine-tuned through low-rank adapters on its frozen weights.
   *
   * @param l the adapters, or {@link Lora#NONE} to train every weight
   * @return the spec
   * @throws IllegalArgumentException when the model cannot take the adapters ({@link Lora})
   */
  public ModelSpec withLora(Lora l) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch, packing, l, fp8Scaling, optimizerState, fp8ActivationInput);
  }

  /**
   * This model with another layer design, every other field kept.
   *
   * @param a the architecture
   * @return the model
   */
  public ModelSpec withArchitecture(Architecture a) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, a, packing, lora, fp8Scaling, optimizerState, fp8ActivationInput);
  }

  /**
   * This model trained with another optimizer-state precision.
   *
   * @param s the precision; bf16 needs bf16 weights
   * @return the model
   */
  public ModelSpec withOptimizerState(OptimizerState s) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch, packing, lora, fp8Scaling, s, fp8ActivationInput);
  }

  /**
   * This model trained with another FP8 scaling.
   *
   * @param s the scaling; read only when the precision is FP8
   * @return the model
   */
  public ModelSpec withFp8Scaling(Fp8Scaling s) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch, packing, lora, s, optimizerState, fp8ActivationInput);
  }

  /**
   * This model with its SwiGLU inputs saved in FP8 for the backward pass, or in the compute type.
   *
   * @param on whether in FP8 ({@link #fp8ActivationInput})
   * @return the model
   * @throws IllegalArgumentException when on and the MLP is not SwiGLU
   */
  public ModelSpec withFp8ActivationInput(boolean on) {
    return new ModelSpec(name, family, layers, hidden, heads, kvHeads, ffn, vocab, seq, batch,
        dtype, arch, packing, lora, fp8Scaling, optimizerState, on);
  }

  /**
   * The parameters that are trained: every parameter, or the adapters' alone under {@link Lora}.
   *
   * @return trainable parameters
   */
  public long trainableParameterCount() {
    return lora.on() ? Math.multiplyExact(lora.blockParameters(this), (long) layers)
        : parameterCount();
  }
}
