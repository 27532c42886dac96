package io.meshplan.graph;

import io.meshplan.util.Require;

/**
 * The layer an instruction belongs to, read from its framework scope: the repeated stack (for
 * example {@code decoder/layers}) and the index of the layer in it.
 *
 * @param stack the scope path of the repeated stack, without the index; scopes such as {@code
 *     jit(train_step)} or {@code transpose(jvp(...))} are left out so that forward and backward ops
 *     of one layer get the same key
 * @param index the layer index within the stack, at least 0
 */
public record LayerKey(String stack, int index) implements Comparable<LayerKey> {
  /** Validates the fields. */
  public LayerKey {
    Require.nonNull(stack, "stack");
    Require.that(index >= 0, () -> "layer index must be >= 0, got " + index);
  }

  /** Orders by stack name, then index. */
  @Override
  public int compareTo(LayerKey o) {
    int c = stack.compareTo(o.stack);
    return c != 0 ? c : Integer.compare(index, o.index);
  }

  @Override
  public String toString() {
    return stack + "[" + index + "]";
  }
}
