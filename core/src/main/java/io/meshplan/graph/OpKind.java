package io.meshplan.graph;

/** How the planner reasons about an opcode. */
public enum OpKind {
  /** An input of the computation. */
  PARAMETER,
  /** A literal or an index generator (constant, iota, rng); has no operands. */
  SOURCE,
  /** Same shape in and out, element by element; follows an operand. */
  ELEMENTWISE,
  /** Broadcast into a larger shape. */
  BROADCAST,
  /** Reshape or bitcast: same elements, new dimensions. */
  RESHAPE,
  /** Permutation of dimensions. */
  TRANSPOSE,
  /** Reduction over some dimensions. */
  REDUCE,
  /** General dot product (any batch and contracting dimensions). */
  DOT,
  /** Concatenation along one dimension. */
  CONCATENATE,
  /** Static slice. */
  SLICE,
  /** Tuple construction. */
  TUPLE,
  /** Tuple element extraction. */
  GET_TUPLE_ELEMENT,
  /**
   * Fused attention (FlashAttention, cuDNN): softmax(Q K^T) V without the score matrix in memory;
   * the operands and the output split together over batch and heads.
   */
  FUSED_ATTENTION,
  /**
   * A fused state-space scan (Mamba-2's SSD): the operands and the output split together over
   * batch and heads (or the heads' groups), never over the sequence, which the scan runs along.
   */
  SCAN,
  /**
   * Mixture-of-experts token dispatch and combine: each device moves its own tokens to and from
   * its local experts' rows; the exchange between devices (expert parallelism's all-to-all) is
   * priced outside the layer's plan.
   */
  TOKEN_EXCHANGE,
  /** Marks a value that must end up replicated on every device. */
  FORCE_REPLICATED,
  /** An op the strategy generator cannot see into; it gets a conservative strategy set. */
  OPAQUE
}
