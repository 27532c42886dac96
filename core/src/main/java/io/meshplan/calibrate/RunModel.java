package io.meshplan.calibrate;

import io.meshplan.util.Require;

/** The model of a training run: a meshplan preset by name, or its dimensions as the log states. */
public sealed interface RunModel permits RunModel.Preset, RunModel.Dims {
  /**
   * The compute precision, {@code bf16}, {@code f16} or {@code f32}.
   *
   * @return the dtype word
   */
  String dtype();

  /**
   * Whether the attention core ran as one fused kernel (FlashAttention, cuDNN).
   *
   * @return true for fused attention
   */
  boolean flash();

  /**
   * A meshplan preset (see {@code meshplan plan --help}).
   *
   * @param name the preset name, e.g. {@code llama3-8b}
   * @param seq tokens per sequence trained
   * @param dtype the compute precision word
   * @param flash whether attention was fused
   */
  record Preset(String name, int seq, String dtype, boolean flash) implements RunModel {
    /** Validates the fields. */
    public Preset {
      Require.nonNull(name, "preset name");
      Require.positive(seq, "sequence length");
      Require.nonNull(dtype, "dtype");
    }
  }

  /**
   * A decoder given by its sizes, as Megatron-LM's arguments state them.
   *
   * @param layers transformer blocks ({@code num_layers})
   * @param hidden hidden size ({@code hidden_size})
   * @param heads attention heads ({@code num_attention_heads})
   * @param kvHeads key/value heads ({@code num_query_groups} under grouped-query attention)
   * @param ffn feed-forward size ({@code ffn_hidden_size})
   * @param vocab padded vocabulary ({@code padded_vocab_size})
   * @param seq tokens per sequence ({@code seq_length})
   * @param swiglu whether the MLP is SwiGLU ({@code swiglu}); LLaMA-style when true
   * @param dtype the compute precision word
   * @param flash whether attention was fused
   * @param moe the routed experts, {@link Moe#NONE} for a dense decoder
   * @param fp8Weights whether an FP8 run kept its weights in FP8 and gathered them so ({@code
   *     fp8_param_gather})
   */
  record Dims(int layers, int hidden, int heads, int kvHeads, int ffn, int vocab, int seq,
      boolean swiglu, String dtype, boolean flash, Moe moe, boolean fp8Weights)
      implements RunModel {
    /**
     * A decoder whose weights are kept in the training precision.
     *
     * @param layers transformer blocks
     * @param hidden hidden size
     * @param heads attention heads
     * @param kvHeads key/value heads
     * @param ffn feed-forward size
     * @param vocab padded vocabulary
     * @param seq tokens per sequence
     * @param swiglu whether the MLP is SwiGLU
     * @param dtype the compute precision word
     * @param flash whether attention was fused
     * @param moe the routed experts
     */
    public Dims(int layers, int hidden, int heads, int kvHeads, int ffn, int vocab, int seq,
        boolean swiglu, String dtype, boolean flash, Moe moe) {
      this(layers, hidden, heads, kvHeads, ffn, vocab, seq, swiglu, dtype, flash, moe, false);
    }

    /**
     * A dense decoder.
     *
     * @param layers transformer blocks
     * @param hidden hidden size
     * @param heads attention heads
     * @param kvHeads key/value heads
     * @param ffn feed-forward size
     * @param vocab padded vocabulary
     * @param seq tokens per sequence
     * @param swiglu whether the MLP is SwiGLU
     * @param dtype the compute precision word
     * @param flash whether attention was fused
     */
    public Dims(int layers, int hidden, int heads, int kvHeads, int ffn, int vocab, int seq,
        boolean swiglu, String dtype, boolean flash) {
      this(layers, hidden, heads, kvHeads, ffn, vocab, seq, swiglu, dtype, flash, Moe.NONE,
          false);
    }

    /** Validates the sizes. */
    public Dims {
      Require.nonNull(moe, "experts");
      Require.positive(layers, "layers");
      Require.positive(hidden, "hidden size");
      Require.positive(heads, "heads");
      Require.positive(kvHeads, "key/value heads");
      Require.positive(ffn, "feed-forward size");
      Require.positive(vocab, "vocabulary");
      Require.positive(seq, "sequence length");
      Require.nonNull(dtype, "dtype");
    }
  }

  /**
   * The routed experts of a mixture-of-experts run, as Megatron-LM's arguments state them.
   *
   * @param experts routed experts ({@code num_experts}); 0 for a dense decoder
   * @param topK experts per token ({@code moe_router_topk})
   * @param ffn one expert's feed-forward size ({@code moe_ffn_hidden_size})
   * @param sharedFfn the shared experts' feed-forward size ({@code
   *     moe_shared_expert_intermediate_size}), 0 for none
   * @param capacityFactor {@code moe_expert_capacity_factor}, 0 for dropless
   * @param denseLayers the blocks without experts ({@code moe_layer_freq}), 0-based
   */
  record Moe(int experts, int topK, int ffn, int sharedFfn, double capacityFactor,
      java.util.List<Integer> denseLayers) {
    /** No experts. */
    public static final Moe NONE = new Moe(0, 0, 0, 0, 0, java.util.List.of());

    /** Copies the list; the sizes are checked where the model is built. */
    public Moe {
      denseLayers = java.util.List.copyOf(denseLayers);
    }

    /**
     * Whether the run routed tokens to experts.
     *
     * @return true for a mixture-of-experts run
     */
    public boolean routed() {
      return experts > 0;
    }
  }
}
