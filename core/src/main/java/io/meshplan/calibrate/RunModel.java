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
   */
  record Dims(int layers, int hidden, int heads, int kvHeads, int ffn, int vocab, int seq,
      boolean swiglu, String dtype, boolean flash) implements RunModel {
    /** Validates the sizes. */
    public Dims {
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
}
