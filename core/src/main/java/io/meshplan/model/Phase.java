package io.meshplan.model;

import java.util.Locale;

/** The part of a training step an instruction belongs to. */
public enum Phase {
  /** The forward pass. */
  FORWARD,
  /** The backward pass (vector-Jacobian products of the forward). */
  BACKWARD,
  /**
   * Forward values computed again during the backward pass instead of being kept: the whole
   * block with full recomputation, the attention core with selective recomputation, and cheap
   * elementwise intermediates (norm statistics, activation internals, broadcast constants) in
   * every mode.
   */
  RECOMPUTE,
  /** Gradient accumulation and the Adam update. */
  OPTIMIZER;

  /**
   * The word used in scopes.
   *
   * @return e.g. {@code backward}
   */
  public String scopeWord() {
    return name().toLowerCase(Locale.ROOT);
  }
}
