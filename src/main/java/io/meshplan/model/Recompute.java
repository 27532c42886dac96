package io.meshplan.model;

/**
 * Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models", MLSys'23, sections 4.2-4.3).
 */
public enum Recompute {
  /** Keep every activation the backward pass needs. */
  NONE,
  /**
   * Recompute only the attention core (QK^T, softmax, softmax dropout, attention over V): keeps
   * 34sbh bytes per layer instead of sbh(34 + 5as/h).
   */
  SELECTIVE,
  /** Keep only each block's input and recompute the whole block before its backward. */
  FULL
}
