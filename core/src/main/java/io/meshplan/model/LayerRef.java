package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * Which layer of the model an instruction belongs to.
 *
 * @param kind embedding, transformer block or head
 * @param index the block index within the whole model ({@code 0} for embedding and head)
 */
public record LayerRef(Kind kind, int index) {
  /** Layer kinds. */
  public enum Kind {
    /** Token (and position) embedding. */
    EMBEDDING,
    /** A transformer block. */
    BLOCK,
    /** Final norm, LM head and loss. */
    HEAD
  }

  /** Validates the fields. */
  public LayerRef {
    Require.nonNull(kind, "kind");
    Require.that(index >= 0 && (kind == Kind.BLOCK || index == 0),
        () -> "layer index must be >= 0, and 0 outside blocks; got " + kind + " " + index);
  }

  /**
   * The embedding layer.
   *
   * @return it
   */
  public static LayerRef embedding() {
    return new LayerRef(Kind.EMBEDDING, 0);
  }

  /**
   * A block.
   *
   * @param i its index in the model
   * @return it
   */
  public static LayerRef block(int i) {
    return new LayerRef(Kind.BLOCK, i);
  }

  /**
   * The head.
   *
   * @return it
   */
  public static LayerRef head() {
    return new LayerRef(Kind.HEAD, 0);
  }

  /**
   * The first part of the scopes of this layer's instructions; blocks use {@code layer_<i>}, which
   * {@link io.meshplan.graph.LayerScopes} reads as stack {@code layer}, index {@code i}.
   *
   * @return {@code embedding}, {@code layer_<i>} or {@code head}
   */
  public String scope() {
    return switch (kind) {
      case EMBEDDING -> "embedding";
      case BLOCK -> "layer_" + index;
      case HEAD -> "head";
    };
  }

  @Override
  public String toString() {
    return scope();
  }
}
