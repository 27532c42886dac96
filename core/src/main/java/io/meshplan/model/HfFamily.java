package io.meshplan.model;

import io.meshplan.util.Require;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One Hugging Face {@code model_type} as meshplan reads and builds it: everything a new family
 * states, in one value, registered by one line of {@link HfRegistry#ALL}.
 *
 * <p>Its names in each framework: torchtitan builds a model by its directory under {@code
 * torchtitan/models/} (main at b5bcd76), named here when meshplan writes some flavor of it;
 * Megatron-LM and DeepSpeed (Megatron-DeepSpeed) have no per-family name, since their GPT model
 * takes any of these decoders as arguments ({@code --normalization}, {@code --swiglu}, {@code
 * --group-query-attention}, ...), which the export writes, or refuses, from the {@link
 * Architecture} the reader builds.
 *
 * @param modelType the {@code model_type} as a config states it
 * @param models the models it covers, in words (for help and refusals)
 * @param builder the forward builder family: {@link ModelSpec.Family#LLAMA} (RMSNorm, rotary,
 *     gated MLP) or {@link ModelSpec.Family#GPT} (LayerNorm, biases, GeLU); {@link
 *     TrainingGraphBuilder} builds the graph of that family with the architecture read
 * @param llamaBlocks whether every config of the type has LLaMA's blocks (no biases, q/k norms,
 *     GeGLU, experts or latent attention), which the LLaMA forward graph of {@code shard} builds
 * @param defaults the defaults of its transformers configuration class for the fields a {@code
 *     config.json} may leave out
 * @param known the family's own fields meshplan reads or knows to be cost-neutral; any other field
 *     not in {@link HfFamilies#NEUTRAL} is named in a warning; empty for no warnings at all
 * @param reader builds the model from the fields, with {@link #defaults} applied
 * @param torchtitan the torchtitan model directory whose flavors meshplan writes for it, if any
 */
record HfFamily(String modelType, String models, ModelSpec.Family builder, boolean llamaBlocks,
    Map<String, Object> defaults, Optional<Set<String>> known, Reader reader,
    Optional<String> torchtitan) {
  /** Checks the fields and copies the maps. */
  HfFamily {
    Require.nonNull(modelType, "modelType");
    Require.nonNull(models, "models");
    Require.nonNull(builder, "builder");
    Require.nonNull(reader, "reader");
    defaults = Map.copyOf(defaults);
    known = known.map(Set::copyOf);
    Require.nonNull(torchtitan, "torchtitan");
  }

  /** Builds a family's model from its config fields. */
  @FunctionalInterface
  interface Reader {
    /**
     * Reads the model.
     *
     * @param type the {@code model_type} ({@code gemma3_text} for Gemma 3's text config)
     * @param f the config's fields, with the family's defaults
     * @param c the fields every family has
     * @return the model
     * @throws io.meshplan.util.InputException naming the field that cannot be read
     */
    ModelSpec read(String type, HfFields f, HfConfigReader.Common c);
  }

  /**
   * The public view of the family, for commands that list the types they take.
   *
   * @return its {@code model_type}, models, builder family and block kind
   */
  HfModelType type() {
    return new HfModelType(modelType, models, builder, llamaBlocks);
  }
}
