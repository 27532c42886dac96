package io.meshplan.interop.cost;

import io.meshplan.interop.space.LayerSetting;

/**
 * Prices the three kinds of layer of a decoder-only transformer. Identical transformer blocks cost
 * the same, so one block is planned per setting and reused for every layer; implementations
 * remember what they have planned.
 */
public interface LayerCostModel {
  /** The kinds of layer. */
  enum Kind {
    /** Token (and position) embedding, on the first stage. */
    EMBEDDING,
    /**
     * One transformer block (a mixture-of-experts block in a mixture-of-experts model; a hybrid's
     * mixture-of-experts layer, symbol {@code E}).
     */
    BLOCK(io.meshplan.model.HybridPattern.MOE),
    /**
     * One of the blocks with a dense MLP of a mixture-of-experts model ({@link
     * io.meshplan.model.MoeShape#denseLayers}).
     */
    DENSE_BLOCK,
    /** The final norm, the LM head and the softmax cross-entropy loss, on the last stage. */
    HEAD,
    /**
     * A Mamba-2 layer of a hybrid model ({@link io.meshplan.model.HybridPattern}, symbol {@code
     * M}): its norm and mixer; a hybrid's mixture-of-experts layers ({@code E}) are {@link
     * #BLOCK}s.
     */
    MAMBA(io.meshplan.model.HybridPattern.MAMBA),
    /** A Gated DeltaNet layer of a hybrid model (symbol {@code G}): its norm and mixer. */
    GDN_LAYER(io.meshplan.model.HybridPattern.GDN),
    /** A Mamba-1 layer of a hybrid model (symbol {@code S}): its norm and mixer. */
    MAMBA1(io.meshplan.model.HybridPattern.SELECTIVE),
    /** A self-attention layer of a hybrid model (symbol {@code *}): its norm and attention. */
    ATTENTION_LAYER(io.meshplan.model.HybridPattern.ATTENTION),
    /** A dense MLP layer of a hybrid model (symbol {@code -}): its norm and MLP. */
    MLP_LAYER(io.meshplan.model.HybridPattern.MLP),
    /**
     * The input of one multi-token prediction module ({@link
     * io.meshplan.model.Architecture#mtpDepth}): its copy of the token table, two norms and the
     * {@code 2h -> h} projection; the module's block is a {@link #BLOCK} and its head a {@link
     * #MTP_HEAD}, all after the head on the last stage.
     */
    MTP,
    /**
     * {@link #MTP} on a stage that also holds the embedding (a one-stage pipeline): the token table
     * is the embedding's, not a copy.
     */
    MTP_FIRST_STAGE,
    /**
     * A multi-token prediction module's final norm, LM head and loss: the head's kernels, without
     * the LM head's weights, which the module shares with the model's head.
     */
    MTP_HEAD;

    /**
     * The kind of a hybrid's layers of a symbol ({@link io.meshplan.model.HybridPattern}).
     *
     * @param symbol the symbol
     * @return the kind
     * @throws IllegalArgumentException for a symbol no kind has
     */
    static Kind ofSymbol(char symbol) {
      for (Kind k : BLOCKS) {
        if (k.symbol == symbol) {
          return k;
        }
      }
      throw new IllegalArgumentException("no layer kind has the symbol '" + symbol + "'");
    }

    /** The block kinds of a stage, in the order a stage lists them. */
    static final java.util.List<Kind> BLOCKS = java.util.List.of(MAMBA, MAMBA1, GDN_LAYER,
        ATTENTION_LAYER, MLP_LAYER, DENSE_BLOCK, BLOCK);

    private final char symbol;

    Kind() {
      this('\0');
    }

    Kind(char symbol) {
      this.symbol = symbol;
    }

    /**
     * The hybrid pattern's symbol of the layers of this kind ({@link
     * io.meshplan.model.HybridPattern}).
     *
     * @return the symbol, or {@code 0} for a kind no pattern names
     */
    public char symbol() {
      return symbol;
    }

    /**
     * Whether recomputation applies to this kind: the transformer blocks and the multi-token
     * prediction modules' inputs.
     *
     * @return true for {@link #BLOCK}, {@link #DENSE_BLOCK}, {@link #MTP}, {@link
     *     #MTP_FIRST_STAGE} and a hybrid's layers
     */
    public boolean block() {
      return BLOCKS.contains(this) || this == MTP || this == MTP_FIRST_STAGE;
    }

    /**
     * Whether this kind holds routed experts in a mixture-of-experts model.
     *
     * @return true for {@link #BLOCK}
     */
    public boolean routed() {
      return this == BLOCK;
    }
  }

  /**
   * The cost of one layer.
   *
   * @param kind which layer
   * @param setting the tensor-parallel degree, microbatch and options
   * @return the cost, or null when no layout of the layer fits the setting (for example heads that
   *     the tensor-parallel degree does not divide under Megatron's layouts)
   */
  LayerCost cost(Kind kind, LayerSetting setting);
  /**
   * One layer to plan.
   *
   * @param kind the layer kind
   * @param setting the setting
   */
  record Key(Kind kind, LayerSetting setting) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * The embedding and head do not depend on recomputation or the experts' layout, which apply
     * to blocks only.
     */
    public Key {
      io.meshplan.util.Require.nonNull(kind, "kind");
      io.meshplan.util.Require.nonNull(setting, "setting");
      if (!kind.block() && setting.recompute() != io.meshplan.model.Recompute.NONE) {
        setting = setting.withRecompute(io.meshplan.model.Recompute.NONE);
      }
      if (!kind.routed() && (setting.expertParallel() != 1
          || setting.expertTensorParallel() != 1)) {
        // The experts live in the expert blocks; the other layers price alike under any layout.
        setting = new LayerSetting(setting.tensorParallel(), setting.microBatch(),
            setting.recompute(), setting.sequenceParallel(), setting.megatron(), 1, 1,
            setting.contextParallel(), setting.cpExchange());
      }
    }
  }

  /**
   * Prices layers ahead of use, possibly in parallel; the default does nothing, and {@link #cost}
   * prices on demand.
   *
   * @param keys the layers that will be asked for
   */
  default void prefetch(java.util.Collection<Key> keys) {
  }
}
