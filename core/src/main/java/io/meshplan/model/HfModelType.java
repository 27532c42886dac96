package io.meshplan.model;

import java.util.List;
import java.util.Objects;

/**
 * A Hugging Face {@code model_type} that {@link HfConfigReader} reads, with what a command needs
 * to know to say whether it takes it: the family its models belong to and whether every config of
 * the type has blocks beyond LLaMA's ({@link Architecture#beyondLlama}: biases, q/k norms, GeGLU,
 * experts, latent attention), which a LLaMA forward graph cannot build. {@link #ALL} is the one
 * list: the reader refuses every other type, and each command's help lists the types it takes
 * from it.
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

  /**
   * Every type read, in the order of the reader's documentation. The blocks: Qwen2's QKV biases,
   * Qwen3's and OLMo 2's q/k norms, Gemma's GeGLU and four norms, the experts of Mixtral,
   * Qwen3-MoE and GPT-OSS, DeepSeek-V3's latent attention; GPT-NeoX, OPT and StarCoder2 are of the
   * GPT family (LayerNorm, biases, GeLU).
   */
  public static final List<HfModelType> ALL = List.of(
      new HfModelType("llama", "LLaMA 1/2/3", ModelSpec.Family.LLAMA, true),
      new HfModelType("mistral", "Mistral", ModelSpec.Family.LLAMA, true),
      new HfModelType("gpt_neox", "GPT-NeoX", ModelSpec.Family.GPT, false),
      new HfModelType("opt", "OPT", ModelSpec.Family.GPT, false),
      new HfModelType("qwen2", "Qwen2, Qwen2.5", ModelSpec.Family.LLAMA, false),
      new HfModelType("qwen3", "Qwen3", ModelSpec.Family.LLAMA, false),
      new HfModelType("gemma2", "Gemma 2", ModelSpec.Family.LLAMA, false),
      new HfModelType("gemma3", "Gemma 3 (its text_config)", ModelSpec.Family.LLAMA, false),
      new HfModelType("gemma3_text", "Gemma 3", ModelSpec.Family.LLAMA, false),
      new HfModelType("phi3", "Phi-3, Phi-4", ModelSpec.Family.LLAMA, true),
      new HfModelType("olmo2", "OLMo 2", ModelSpec.Family.LLAMA, false),
      new HfModelType("granite", "Granite 3", ModelSpec.Family.LLAMA, true),
      new HfModelType("starcoder2", "StarCoder2", ModelSpec.Family.GPT, false),
      new HfModelType("mixtral", "Mixtral", ModelSpec.Family.LLAMA, false),
      new HfModelType("qwen3_moe", "Qwen3-MoE", ModelSpec.Family.LLAMA, false),
      new HfModelType("gpt_oss", "GPT-OSS", ModelSpec.Family.LLAMA, false),
      new HfModelType("deepseek_v3", "DeepSeek-V3", ModelSpec.Family.LLAMA, false));

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
