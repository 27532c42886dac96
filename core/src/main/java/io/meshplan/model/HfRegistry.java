package io.meshplan.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Hugging Face families meshplan reads, one line each: a {@code model_type} maps to its
 * {@link HfFamily}, which holds its reader, its forward builder, its defaults and known fields,
 * and its torchtitan model. {@link HfConfigReader} refuses every other type, and each command's
 * help lists the types it takes from {@link HfModelType#ALL}, this list's view. A new family is
 * one class holding its {@link HfFamily} and one line here.
 *
 * <p>The defaults are those of each transformers configuration class ({@code
 * models/<family>/configuration_<family>.py}) for the fields {@code config.json} may leave out.
 * The blocks: Qwen2's QKV biases, Qwen3's and OLMo 2's q/k norms, Gemma's GeGLU and four norms,
 * the experts of Mixtral, Qwen3-MoE and GPT-OSS, DeepSeek-V3's latent attention; GPT-NeoX, OPT
 * and StarCoder2 are of the GPT family (LayerNorm, biases, GeLU).
 */
final class HfRegistry {
  private static final ModelSpec.Family LLAMA = ModelSpec.Family.LLAMA;
  private static final ModelSpec.Family GPT = ModelSpec.Family.GPT;
  private static final Optional<String> NO_TORCHTITAN = Optional.empty();

  /**
   * DeepSeek-V3's own fields: latent attention, the experts and their router, the prediction
   * module, and what describes the released checkpoint rather than the model trained.
   */
  private static final Set<String> DEEPSEEK_FIELDS = Set.of("attention_bias", "q_lora_rank",
      "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "head_dim",
      "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size",
      "first_k_dense_replace", "moe_layer_freq", "num_nextn_predict_layers",
      "routed_scaling_factor", "n_group", "topk_group", "topk_method", "scoring_func",
      "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size", "rope_interleave",
      "quantization_config", "pretraining_tp");

  /** Every family, in the order of the reader's documentation. */
  static final List<HfFamily> ALL = List.of(
      new HfFamily("llama", "LLaMA 1/2/3", LLAMA, true, Map.of(), Optional.empty(),
          HfConfigReader::llama, Optional.of("llama3")),
      new HfFamily("mistral", "Mistral", LLAMA, true, Map.of(), Optional.empty(),
          HfConfigReader::llama, NO_TORCHTITAN),
      new HfFamily("gpt_neox", "GPT-NeoX", GPT, false, Map.of(), Optional.empty(),
          (t, f, c) -> HfConfigReader.gptNeox(f, c), NO_TORCHTITAN),
      new HfFamily("opt", "OPT", GPT, false, Map.of(), Optional.empty(),
          (t, f, c) -> HfConfigReader.opt(f, c), NO_TORCHTITAN),
      new HfFamily("qwen2", "Qwen2, Qwen2.5", LLAMA, false, qwen(), Optional.of(Set.of(
          "head_dim", "use_sliding_window", "sliding_window", "max_window_layers", "layer_types",
          "use_mrope")), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("qwen3", "Qwen3", LLAMA, false, qwen(), Optional.of(Set.of("head_dim",
          "attention_bias", "use_sliding_window", "sliding_window", "max_window_layers",
          "layer_types")), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("gemma2", "Gemma 2", LLAMA, false, gemma2(), Optional.of(Set.of("head_dim",
          "hidden_activation", "attention_bias", "query_pre_attn_scalar", "sliding_window",
          "sliding_window_size", "final_logit_softcapping", "attn_logit_softcapping",
          "cache_implementation", "layer_types")), HfFamilies::read, NO_TORCHTITAN),
      // Gemma 3's config holds its text model in text_config, which is read as gemma3_text.
      new HfFamily("gemma3", "Gemma 3 (its text_config)", LLAMA, false, Map.of(),
          Optional.empty(), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("gemma3_text", "Gemma 3", LLAMA, false, gemma3(), Optional.of(Set.of(
          "head_dim", "hidden_activation", "attention_bias", "query_pre_attn_scalar",
          "sliding_window", "sliding_window_pattern", "layer_types", "final_logit_softcapping",
          "attn_logit_softcapping", "rope_local_base_freq", "cache_implementation")),
          HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("phi3", "Phi-3, Phi-4", LLAMA, true, Map.of("vocab_size", 32064,
          "hidden_size", 3072, "intermediate_size", 8192, "num_hidden_layers", 32,
          "num_attention_heads", 32, "max_position_embeddings", 4096), Optional.of(Set.of(
          "head_dim", "attention_bias", "resid_pdrop", "embd_pdrop", "sliding_window",
          "original_max_position_embeddings")), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("olmo2", "OLMo 2", LLAMA, false, olmo2OrGranite(50304),
          Optional.of(Set.of("head_dim", "attention_bias")), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("granite", "Granite 3", LLAMA, true, olmo2OrGranite(32000),
          Optional.of(Set.of("head_dim", "attention_bias", "mlp_bias", "embedding_multiplier",
              "logits_scaling", "residual_multiplier", "attention_multiplier")),
          HfFamilies::read, NO_TORCHTITAN),
      InternLm2.FAMILY,
      HfNemotronH.FAMILY,
      HfQwen3Next.FAMILY,
      HfJamba.FAMILY,
      new HfFamily("starcoder2", "StarCoder2", GPT, false, Map.of("vocab_size", 49152,
          "hidden_size", 3072, "intermediate_size", 12288, "num_hidden_layers", 30,
          "num_attention_heads", 24, "num_key_value_heads", 2, "max_position_embeddings", 4096,
          "tie_word_embeddings", true), Optional.of(Set.of("head_dim", "use_bias", "sliding_window",
          "norm_epsilon", "layer_norm_epsilon", "residual_dropout", "embedding_dropout",
          "norm_type", "mlp_type")), HfFamilies::read, NO_TORCHTITAN),
      // The router's auxiliary loss and jitter cost a few operations per token and expert.
      new HfFamily("mixtral", "Mixtral", LLAMA, false, Map.of("vocab_size", 32000,
          "hidden_size", 4096, "intermediate_size", 14336, "num_hidden_layers", 32,
          "num_attention_heads", 32, "num_key_value_heads", 8, "max_position_embeddings",
          4096 * 32, "num_local_experts", 8, "num_experts_per_tok", 2), Optional.of(Set.of(
          "head_dim", "sliding_window", "num_local_experts", "num_experts_per_tok",
          "output_router_logits", "router_aux_loss_coef", "router_jitter_noise")),
          HfFamilies::read, NO_TORCHTITAN),
      // OLMoE (Muennighoff et al. 2024, arXiv:2409.02060): OLMo 2's attention (RMSNorm over the
      // whole query and key projections) with 64 SwiGLU experts of intermediate_size, 8 a token,
      // on every block; clip_qkv clamps the projections, an elementwise pass. Its configuration
      // class has defaults that are not the released model's (intermediate_size 2048 against
      // 1024), so no size field has one here. head_dim is read as its attention reads it
      // (getattr(config, "head_dim", hidden_size // heads)), not ignored.
      new HfFamily("olmoe", "OLMoE", LLAMA, false, Map.of(), Optional.of(Set.of(
          "head_dim", "attention_bias", "clip_qkv", "num_experts", "num_experts_per_tok", "norm_topk_prob",
          "output_router_logits", "router_aux_loss_coef")), HfFamilies::read, NO_TORCHTITAN),
      // max_window_layers is in the released configs but the Qwen3-MoE modeling file does not
      // read it; norm_topk_prob rescales k weights per token.
      new HfFamily("qwen3_moe", "Qwen3-MoE", LLAMA, false, qwen3Moe(), Optional.of(Set.of(
          "head_dim", "attention_bias", "use_sliding_window", "sliding_window",
          "max_window_layers", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
          "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob", "output_router_logits",
          "router_aux_loss_coef")), HfFamilies::read, Optional.of("qwen3")),
      // Llama 4's config holds its text model in text_config, read as llama4_text. Its
      // attention temperature tuning (attn_temperature_tuning, floor_scale, attn_scale) scales
      // the NoPE layers' queries, a few operations per element.
      new HfFamily("llama4", "Llama 4 (its text_config)", LLAMA, false, Map.of(),
          Optional.empty(), HfFamilies::read, NO_TORCHTITAN),
      new HfFamily("llama4_text", "Llama 4", LLAMA, false, llama4(), Optional.of(Set.of(
          "head_dim", "attention_bias", "use_qk_norm", "attention_chunk_size", "no_rope_layers",
          "no_rope_layer_interval", "interleave_moe_layer_step", "moe_layers",
          "intermediate_size_mlp", "num_local_experts", "num_experts_per_tok",
          "output_router_logits", "router_aux_loss_coef", "router_jitter_noise",
          "attn_temperature_tuning", "floor_scale", "attn_scale", "for_llm_compressor")),
          HfFamilies::read, NO_TORCHTITAN),
      // swiglu_limit clamps the experts' gate and up values; initial_context_length is the
      // rotary table's length before YaRN.
      new HfFamily("gpt_oss", "GPT-OSS", LLAMA, false, gptOss(), Optional.of(Set.of("head_dim",
          "attention_bias", "sliding_window", "layer_types", "num_local_experts",
          "num_experts_per_tok", "experts_per_token", "output_router_logits",
          "router_aux_loss_coef", "swiglu_limit", "initial_context_length")),
          HfFamilies::read, NO_TORCHTITAN),
      // The router's scoring (sigmoid, group-limited top-k, balancing bias) and scaling cost a
      // few operations per token and expert; head_dim is transformers' name for the rotary
      // part; quantization_config and ep_size describe the released checkpoint and its
      // inference, not the model trained.
      new HfFamily("deepseek_v3", "DeepSeek-V3", LLAMA, false, deepseekV3(),
          Optional.of(DEEPSEEK_FIELDS), HfFamilies::read, Optional.of("deepseek_v3")),
      // DeepSeek-V2 and V2-Lite (DeepSeek-AI 2024, arXiv:2405.04434) are DeepSeek-V3's blocks
      // without its prediction module: the same fields (V2-Lite's q_lora_rank null), a softmax
      // router (scoring_func softmax, topk_method greedy or group_limited_greedy) that costs what
      // V3's sigmoid one does. Their configuration class ships with the checkpoint, as Kimi K2's
      // does, so no field has a default here.
      new HfFamily("deepseek_v2", "DeepSeek-V2", LLAMA, false, Map.of(),
          Optional.of(DEEPSEEK_FIELDS), HfFamilies::read, NO_TORCHTITAN),
      // Kimi K2 (Moonshot AI) is DeepSeek-V3's architecture under its own model_type: its
      // config.json names DeepseekV3ForCausalLM and the DeepSeek-V3 fields, read alike. Its
      // configuration class ships with the checkpoint, not with transformers, so no field has a
      // default here: a config that leaves one out is refused, not guessed.
      new HfFamily("kimi_k2", "Kimi K2", LLAMA, false, Map.of(), Optional.of(DEEPSEEK_FIELDS),
          HfFamilies::read, NO_TORCHTITAN),
      // Kimi K2.5's config holds its text model, a kimi_k2, in text_config.
      new HfFamily("kimi_k25", "Kimi K2.5 (its text_config)", LLAMA, false, Map.of(),
          Optional.empty(), HfFamilies::read, NO_TORCHTITAN));

  private HfRegistry() {}

  /**
   * The family of a {@code model_type}.
   *
   * @param modelType the type as a config states it
   * @return its family, empty for a type meshplan does not read
   */
  static Optional<HfFamily> find(String modelType) {
    return ALL.stream().filter(f -> f.modelType().equals(modelType)).findFirst();
  }

  private static Map<String, Object> qwen() {
    return Map.of("vocab_size", 151936, "hidden_size", 4096, "intermediate_size", 22016,
        "num_hidden_layers", 32, "num_attention_heads", 32, "max_position_embeddings", 32768,
        "head_dim", 128, "sliding_window", 4096, "max_window_layers", 28,
        "num_key_value_heads", 32);
  }

  private static Map<String, Object> gemma2() {
    return Map.of("vocab_size", 256000, "hidden_size", 2304, "intermediate_size", 9216,
        "num_hidden_layers", 26, "num_attention_heads", 8, "num_key_value_heads", 4,
        "head_dim", 256, "max_position_embeddings", 8192, "sliding_window", 4096,
        "tie_word_embeddings", true);
  }

  private static Map<String, Object> gemma3() {
    return Map.of("vocab_size", 262208, "hidden_size", 2304, "intermediate_size", 9216,
        "num_hidden_layers", 26, "num_attention_heads", 8, "num_key_value_heads", 4,
        "head_dim", 256, "max_position_embeddings", 131072, "sliding_window", 4096,
        "tie_word_embeddings", true);
  }

  private static Map<String, Object> olmo2OrGranite(int vocab) {
    return Map.of("vocab_size", vocab, "hidden_size", 4096, "intermediate_size", 11008,
        "num_hidden_layers", 32, "num_attention_heads", 32, "max_position_embeddings", 2048);
  }

  private static Map<String, Object> qwen3Moe() {
    return Map.ofEntries(Map.entry("vocab_size", 151936), Map.entry("hidden_size", 2048),
        Map.entry("intermediate_size", 6144), Map.entry("num_hidden_layers", 24),
        Map.entry("num_attention_heads", 32), Map.entry("num_key_value_heads", 4),
        Map.entry("max_position_embeddings", 32768), Map.entry("sliding_window", 4096),
        Map.entry("moe_intermediate_size", 768), Map.entry("num_experts_per_tok", 8),
        Map.entry("num_experts", 128), Map.entry("decoder_sparse_step", 1));
  }

  /** transformers' Llama4TextConfig defaults (Llama 4 Scout's sizes). */
  private static Map<String, Object> llama4() {
    return Map.ofEntries(Map.entry("vocab_size", 202048), Map.entry("hidden_size", 5120),
        Map.entry("intermediate_size", 8192), Map.entry("intermediate_size_mlp", 16384),
        Map.entry("num_hidden_layers", 48), Map.entry("num_attention_heads", 40),
        Map.entry("num_key_value_heads", 8), Map.entry("head_dim", 128),
        Map.entry("max_position_embeddings", 4096 * 32), Map.entry("num_experts_per_tok", 1),
        Map.entry("num_local_experts", 16), Map.entry("interleave_moe_layer_step", 1),
        Map.entry("no_rope_layer_interval", 4), Map.entry("attention_chunk_size", 8192));
  }

  private static Map<String, Object> gptOss() {
    return Map.ofEntries(Map.entry("num_hidden_layers", 36),
        Map.entry("num_local_experts", 128), Map.entry("vocab_size", 201088),
        Map.entry("hidden_size", 2880), Map.entry("intermediate_size", 2880),
        Map.entry("head_dim", 64), Map.entry("num_attention_heads", 64),
        Map.entry("num_key_value_heads", 8), Map.entry("sliding_window", 128),
        Map.entry("max_position_embeddings", 131072), Map.entry("num_experts_per_tok", 4),
        Map.entry("attention_bias", true));
  }

  private static Map<String, Object> deepseekV3() {
    return Map.ofEntries(Map.entry("vocab_size", 129280), Map.entry("hidden_size", 7168),
        Map.entry("intermediate_size", 18432), Map.entry("moe_intermediate_size", 2048),
        Map.entry("num_hidden_layers", 61), Map.entry("num_attention_heads", 128),
        Map.entry("num_key_value_heads", 128), Map.entry("n_shared_experts", 1),
        Map.entry("n_routed_experts", 256), Map.entry("kv_lora_rank", 512),
        Map.entry("q_lora_rank", 1536), Map.entry("qk_rope_head_dim", 64),
        Map.entry("v_head_dim", 128), Map.entry("qk_nope_head_dim", 128),
        Map.entry("num_experts_per_tok", 8), Map.entry("first_k_dense_replace", 3),
        Map.entry("max_position_embeddings", 4096));
  }
}
