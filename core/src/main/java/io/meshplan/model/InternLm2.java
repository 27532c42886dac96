package io.meshplan.model;

import io.meshplan.util.InputException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * InternLM2 and InternLM2.5 ({@code model_type} {@code internlm2}): LLaMA's decoder under other
 * weight names. Its modeling code (sgl-project/sglang@01925ca {@code
 * python/sglang/srt/models/internlm2.py}, adapted from vLLM's) builds RMSNorm before attention
 * and before the MLP, rotary positions over whole heads of {@code hidden / heads}, grouped-query
 * attention and a SiLU-gated MLP ({@code w1}, {@code w3}, {@code w2}) without biases, and an
 * untied output head: LLaMA's blocks, which {@link LlamaForwardBuilder} builds exactly.
 *
 * <p>What differs from LLaMA, and changes neither parameters nor FLOPs: the query, key and value
 * projections are one fused {@code wqkv} matrix with the heads of each key-value group side by
 * side (q, then k, then v per group), and the attention projections' biases are switched by one
 * field, {@code bias}. Its configuration class (InternLM2Config, as copied in
 * sgl-project/sglang@b87b167 {@code python/sglang/srt/configs/internvl.py} from
 * OpenGVLab/InternVL@34a8100) defaults {@code bias} to true, while every released config sets it
 * false; a config that leaves it out or sets it true has biases on {@code wqkv} and {@code wo}
 * only, which meshplan's blocks do not model, so it is refused. Its {@code rope_scaling} (type
 * {@code dynamic} in InternLM2.5) scales RoPE beyond the trained context only.
 *
 * <p>torchtitan has no InternLM2 model; Megatron-LM trains it as a LLaMA-style GPT model from the
 * arguments its export writes.
 */
final class InternLm2 {
  /**
   * The family: the defaults of InternLM2Config ({@code __init__}'s keyword defaults), and its own
   * fields: {@code bias}, {@code attn_implementation} (the attention kernel at inference) and
   * {@code pretraining_tp} (LLaMA's inference-time split of its projections, cost-neutral).
   */
  static final HfFamily FAMILY = new HfFamily("internlm2", "InternLM2, InternLM2.5",
      ModelSpec.Family.LLAMA, true, Map.of("vocab_size", 103168, "hidden_size", 4096,
          "intermediate_size", 11008, "num_hidden_layers", 32, "num_attention_heads", 32,
          "max_position_embeddings", 2048, "bias", true),
      Optional.of(Set.of("bias", "attn_implementation", "pretraining_tp")), InternLm2::read,
      Optional.empty());

  private InternLm2() {}

  /** Reads LLaMA's blocks once the attention biases are known to be off. */
  private static ModelSpec read(String type, HfFields f, HfConfigReader.Common c) {
    if (f.bool("bias", true)) {
      throw new InputException(f.where() + ": field 'bias' is " + (f.given("bias")
          ? "true" : "absent (InternLM2Config defaults it to true)") + ": biases on the fused "
          + "query-key-value and output projections are not supported (released InternLM2 "
          + "configs set bias false)");
    }
    return HfConfigReader.llama(type, f, c);
  }
}
