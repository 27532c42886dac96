package io.meshplan.plan;

import io.meshplan.util.Require;

/**
 * How one tensor of a stage is laid out on the stage's logical mesh.
 *
 * @param name the tensor's name in the layer (e.g. {@code attention.wq})
 * @param shape HLO shape text, e.g. {@code bf16[5120,5120]}
 * @param sharding XLA {@code HloSharding} text on the stage's logical mesh
 * @param words the layout in words, e.g. {@code column-parallel over 4 GPUs}
 */
public record TensorSharding(String name, String shape, String sharding, String words) {
  /** Validates the fields. */
  public TensorSharding {
    Require.nonNull(name, "name");
    Require.nonNull(shape, "shape");
    Require.nonNull(sharding, "sharding");
    Require.nonNull(words, "words");
  }
}
