package io.meshplan.interop;

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
    /** One transformer block. */
    BLOCK,
    /** The final norm, the LM head and the softmax cross-entropy loss, on the last stage. */
    HEAD
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
}
