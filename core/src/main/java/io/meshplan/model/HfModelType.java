package io.meshplan.model;

import java.util.List;
import java.util.Objects;

/**
 * A Hugging Face {@code model_type} that {@link HfConfigReader} reads, with what a command needs
 * to know to say whether it takes it: the family its models belong to and whether every config of
 * the type has blocks beyond LLaMA's ({@link Architecture#beyondLlama}: biases, q/k norms, GeGLU,
 * experts, latent attention), which a LLaMA forward graph cannot build. {@link #ALL} is the
 * public view of the one registry ({@link HfRegistry}): the reader refuses every other type, and
 * each command's help lists the types it takes from it.
 *
 * @param name the {@code model_type} as a config states it
 * @param models the models it covers, in words
 * @param family the family of its models
 * @param llamaBlocks whether its blocks are LLaMA's (a config may still add, for example, an
 *     explicit {@code head_dim}, which is then named)
 */
public record HfModelType(String name, String models, ModelSpec.Family family,
    boolean llamaBlocks) {
  /** Checks the fields. */
  public HfModelType {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(models, "models");
    Objects.requireNonNull(family, "family");
  }

  /** Every type read, in the order of the reader's documentation ({@link HfRegistry#ALL}). */
  public static final List<HfModelType> ALL = HfRegistry.ALL.stream().map(HfFamily::type)
      .toList();

  /**
   * The names of the types a command takes.
   *
   * @param families the families the command runs
   * @param llamaBlocksOnly whether it builds LLaMA's blocks only
   * @return the names, in {@link #ALL}'s order
   */
  public static List<String> names(java.util.Set<ModelSpec.Family> families,
      boolean llamaBlocksOnly) {
    return ALL.stream().filter(t -> families.contains(t.family())
        && (!llamaBlocksOnly || t.llamaBlocks())).map(HfModelType::name).toList();
  }
}
