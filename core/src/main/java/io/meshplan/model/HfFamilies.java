package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Hugging Face decoder families {@link HfConfigReader} reads besides LLaMA, Mistral, GPT-NeoX
 * and OPT: for each, the defaults of its transformers configuration class ({@code
 * models/<family>/configuration_<family>.py}) for the fields {@code config.json} may leave out,
 * the layer design its modeling file builds, and the fields meshplan knows. A field outside that
 * list may change the model's cost, so the reader names it in a warning.
 */
final class HfFamilies {
  /** The largest {@code head_dim} read ({@link AttentionShape#MAX_HEAD_DIM}). */
  static final int MAX_HEAD_DIM = AttentionShape.MAX_HEAD_DIM;

  /** Fields that never change parameters, FLOPs or memory (ids, initialization, inference). */
  static final Set<String> NEUTRAL = Set.of("architectures", "model_type", "_name_or_path",
      "torch_dtype", "dtype", "transformers_version", "bos_token_id", "eos_token_id",
      "pad_token_id", "use_cache", "initializer_range", "rms_norm_eps", "rope_theta",
      "rope_scaling", "attention_dropout", "hidden_act", "tie_word_embeddings", "vocab_size",
      "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
      "num_key_value_heads", "max_position_embeddings", "auto_map", "rope_parameters",
      "partial_rotary_factor");

  /** The families, by {@code model_type}. */
  static final Map<String, Set<String>> KNOWN = Map.ofEntries(
      Map.entry("qwen2", Set.of("use_sliding_window", "sliding_window", "max_window_layers",
          "layer_types", "use_mrope")),
      Map.entry("qwen3", Set.of("head_dim", "attention_bias", "use_sliding_window",
          "sliding_window", "max_window_layers", "layer_types")),
      Map.entry("gemma2", Set.of("head_dim", "hidden_activation", "attention_bias",
          "query_pre_attn_scalar", "sliding_window", "sliding_window_size",
          "final_logit_softcapping", "attn_logit_softcapping", "cache_implementation",
          "layer_types")),
      Map.entry("gemma3_text", Set.of("head_dim", "hidden_activation", "attention_bias",
          "query_pre_attn_scalar", "sliding_window", "sliding_window_pattern", "layer_types",
          "final_logit_softcapping", "attn_logit_softcapping", "rope_local_base_freq",
          "cache_implementation")),
      Map.entry("phi3", Set.of("attention_bias", "resid_pdrop", "embd_pdrop", "sliding_window",
          "original_max_position_embeddings")),
      Map.entry("olmo2", Set.of("attention_bias")),
      Map.entry("granite", Set.of("attention_bias", "mlp_bias", "embedding_multiplier",
          "logits_scaling", "residual_multiplier", "attention_multiplier")),
      Map.entry("starcoder2", Set.of("use_bias", "sliding_window", "norm_epsilon",
          "layer_norm_epsilon", "residual_dropout", "embedding_dropout", "norm_type",
          "mlp_type")),
      // The router's auxiliary loss and jitter cost a few operations per token and expert.
      Map.entry("mixtral", Set.of("head_dim", "sliding_window", "num_local_experts",
          "num_experts_per_tok", "output_router_logits", "router_aux_loss_coef",
          "router_jitter_noise")),
      // max_window_layers is in the released configs but the Qwen3-MoE modeling file does not
      // read it; norm_topk_prob rescales k weights per token.
      Map.entry("qwen3_moe", Set.of("head_dim", "attention_bias", "use_sliding_window",
          "sliding_window", "max_window_layers", "num_experts", "num_experts_per_tok",
          "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob",
          "output_router_logits", "router_aux_loss_coef")),
      // swiglu_limit clamps the experts' gate and up values; initial_context_length is the
      // rotary table's length before YaRN.
      Map.entry("gpt_oss", Set.of("head_dim", "attention_bias", "sliding_window", "layer_types",
          "num_local_experts", "num_experts_per_tok", "experts_per_token",
          "output_router_logits", "router_aux_loss_coef", "swiglu_limit",
          "initial_context_length")),
      // The router's scoring (sigmoid, group-limited top-k, balancing bias) and scaling cost a
      // few operations per token and expert; head_dim is transformers' name for the rotary
      // part; quantization_config and ep_size describe the released checkpoint and its
      // inference, not the model trained.
      Map.entry("deepseek_v3", Set.of("attention_bias", "q_lora_rank", "kv_lora_rank",
          "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "head_dim", "n_routed_experts",
          "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size",
          "first_k_dense_replace", "moe_layer_freq", "num_nextn_predict_layers",
          "routed_scaling_factor", "n_group", "topk_group", "topk_method", "scoring_func",
          "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size", "rope_interleave",
          "quantization_config", "pretraining_tp")));

  private HfFamilies() {}

  /**
   * The transformers defaults of a family's size fields, for fields the config leaves out.
   *
   * @param type the {@code model_type}
   * @return field to default
   */
  static Map<String, Object> defaults(String type) {
    return switch (type) {
      case "qwen2", "qwen3" -> Map.of("vocab_size", 151936, "hidden_size", 4096,
          "intermediate_size", 22016, "num_hidden_layers", 32, "num_attention_heads", 32,
          "max_position_embeddings", 32768, "head_dim", 128, "sliding_window", 4096,
          "max_window_layers", 28, "num_key_value_heads", 32);
      case "gemma2" -> Map.of("vocab_size", 256000, "hidden_size", 2304, "intermediate_size",
          9216, "num_hidden_layers", 26, "num_attention_heads", 8, "num_key_value_heads", 4,
          "head_dim", 256, "max_position_embeddings", 8192, "sliding_window", 4096,
          "tie_word_embeddings", true);
      case "gemma3_text" -> Map.of("vocab_size", 262208, "hidden_size", 2304,
          "intermediate_size", 9216, "num_hidden_layers", 26, "num_attention_heads", 8,
          "num_key_value_heads", 4, "head_dim", 256, "max_position_embeddings", 131072,
          "sliding_window", 4096, "tie_word_embeddings", true);
      case "phi3" -> Map.of("vocab_size", 32064, "hidden_size", 3072, "intermediate_size", 8192,
          "num_hidden_layers", 32, "num_attention_heads", 32, "max_position_embeddings", 4096);
      case "olmo2", "granite" -> Map.of("vocab_size", type.equals("olmo2") ? 50304 : 32000,
          "hidden_size", 4096, "intermediate_size", 11008, "num_hidden_layers", 32,
          "num_attention_heads", 32, "max_position_embeddings", 2048);
      case "starcoder2" -> Map.of("vocab_size", 49152, "hidden_size", 3072, "intermediate_size",
          12288, "num_hidden_layers", 30, "num_attention_heads", 24, "num_key_value_heads", 2,
          "max_position_embeddings", 4096, "tie_word_embeddings", true);
      case "mixtral" -> Map.of("vocab_size", 32000, "hidden_size", 4096, "intermediate_size",
          14336, "num_hidden_layers", 32, "num_attention_heads", 32, "num_key_value_heads", 8,
          "max_position_embeddings", 4096 * 32, "num_local_experts", 8, "num_experts_per_tok",
          2);
      case "qwen3_moe" -> Map.ofEntries(Map.entry("vocab_size", 151936),
          Map.entry("hidden_size", 2048), Map.entry("intermediate_size", 6144),
          Map.entry("num_hidden_layers", 24), Map.entry("num_attention_heads", 32),
          Map.entry("num_key_value_heads", 4), Map.entry("max_position_embeddings", 32768),
          Map.entry("sliding_window", 4096), Map.entry("moe_intermediate_size", 768),
          Map.entry("num_experts_per_tok", 8), Map.entry("num_experts", 128),
          Map.entry("decoder_sparse_step", 1));
      case "gpt_oss" -> Map.ofEntries(Map.entry("num_hidden_layers", 36),
          Map.entry("num_local_experts", 128), Map.entry("vocab_size", 201088),
          Map.entry("hidden_size", 2880), Map.entry("intermediate_size", 2880),
          Map.entry("head_dim", 64), Map.entry("num_attention_heads", 64),
          Map.entry("num_key_value_heads", 8), Map.entry("sliding_window", 128),
          Map.entry("max_position_embeddings", 131072), Map.entry("num_experts_per_tok", 4),
          Map.entry("attention_bias", true));
      case "deepseek_v3" -> Map.ofEntries(Map.entry("vocab_size", 129280),
          Map.entry("hidden_size", 7168), Map.entry("intermediate_size", 18432),
          Map.entry("moe_intermediate_size", 2048), Map.entry("num_hidden_layers", 61),
          Map.entry("num_attention_heads", 128), Map.entry("num_key_value_heads", 128),
          Map.entry("n_shared_experts", 1), Map.entry("n_routed_experts", 256),
          Map.entry("kv_lora_rank", 512), Map.entry("q_lora_rank", 1536),
          Map.entry("qk_rope_head_dim", 64), Map.entry("v_head_dim", 128),
          Map.entry("qk_nope_head_dim", 128), Map.entry("num_experts_per_tok", 8),
          Map.entry("first_k_dense_replace", 3), Map.entry("max_position_embeddings", 4096));
      default -> Map.of();
    };
  }

  /**
   * The config's fields that are neither {@link #NEUTRAL} nor known to its family, sorted.
   *
   * @param root the config object (the text config for Gemma 3)
   * @param type the {@code model_type}
   * @return the unknown field names
   */
  static List<String> unknownFields(JsonNode root, String type) {
    Set<String> known = KNOWN.getOrDefault(type, Set.of());
    TreeSet<String> out = new TreeSet<>();
    root.fieldNames().forEachRemaining(k -> {
      if (!NEUTRAL.contains(k) && !known.contains(k)) {
        out.add(k);
      }
    });
    return new ArrayList<>(out);
  }

  /**
   * Reads one of the families.
   *
   * @param type the {@code model_type}
   * @param f the fields, with the family's defaults
   * @param c the fields every family has
   * @return the spec
   */
  static ModelSpec read(String type, HfFields f, HfConfigReader.Common c) {
    if (type.equals("deepseek_v3")) {
      return deepseek(f, c);
    }
    int kv = f.positive("num_key_value_heads", c.heads());
    int headDim = headDim(f, type, c);
    boolean tied = f.bool("tie_word_embeddings", false);
    boolean gptOss = type.equals("gpt_oss");
    // GPT-OSS: attention_bias puts a bias on Q, K, V and the output projection.
    boolean attentionBias = gptOss && f.bool("attention_bias", true);
    if (!gptOss) {
      refuse(f, "attention_bias");
    }
    refuse(f, "mlp_bias");
    Architecture.Mlp mlp = type.startsWith("gemma") ? Architecture.Mlp.GEGLU
        : type.equals("starcoder2") ? Architecture.Mlp.GELU : Architecture.Mlp.SWIGLU;
    AttentionShape.QkNorm qk = switch (type) {
      case "qwen3", "qwen3_moe", "gemma3_text" -> AttentionShape.QkNorm.PER_HEAD;
      case "olmo2" -> AttentionShape.QkNorm.WHOLE;
      default -> AttentionShape.QkNorm.NONE;
    };
    boolean gemma2 = type.equals("gemma2");
    AttentionShape shape = new AttentionShape(headDim, type.equals("qwen2"), qk,
        type.startsWith("gemma") ? 4 : 2,
        gemma2 ? softcap(f, "attn_logit_softcapping", 50.0) : 0,
        gemma2 ? softcap(f, "final_logit_softcapping", 30.0) : 0, 0, 0, 0, gptOss);
    shape = HfWindows.of(type, f, c.layers(), shape);
    MoeShape moe = HfMoe.routed(type) ? HfMoe.read(type, f, c.layers()) : MoeShape.DENSE;
    // An MoE model's ffn is its expert size, the inner size of every MLP it has.
    int ffn = moe.routed() ? moe.expertFfn() : f.positive("intermediate_size");
    boolean starcoder = type.equals("starcoder2");
    Architecture arch = new Architecture(mlp, starcoder ? Architecture.Norm.LAYER
        : Architecture.Norm.RMS, Architecture.Positions.ROTARY, 0,
        starcoder && f.bool("use_bias", true) || attentionBias, tied, shape, moe, 0,
        HfNumerics.read(type, f));
    return checked(f, new ModelSpec(c.name(), starcoder ? ModelSpec.Family.GPT
        : ModelSpec.Family.LLAMA, c.layers(), c.hidden(), c.heads(), kv, ffn, c.vocab(),
        c.seq(), HfConfigReader.DEFAULT_BATCH, c.dtype(), arch));
  }

  /** DeepSeek-V3: latent attention, experts with dense blocks, multi-token prediction. */
  private static ModelSpec deepseek(HfFields f, HfConfigReader.Common c) {
    refuse(f, "attention_bias");
    int kv = f.positive("num_key_value_heads", c.heads());
    MoeShape moe = HfDeepseek.moe(f, c.layers());
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, f.bool("tie_word_embeddings", false),
        AttentionShape.latent(HfDeepseek.mla(f)), moe, HfDeepseek.mtp(f),
        HfNumerics.read("deepseek_v3", f));
    return checked(f, new ModelSpec(c.name(), ModelSpec.Family.LLAMA, c.layers(), c.hidden(),
        c.heads(), kv, moe.expertFfn(), c.vocab(), c.seq(), HfConfigReader.DEFAULT_BATCH,
        c.dtype(), arch));
  }

  /** The spec, once its parameter count is known to fit in a long. */
  private static ModelSpec checked(HfFields f, ModelSpec spec) {
    try {
      spec.parameterCount();
    } catch (ArithmeticException e) {
      throw new InputException(f.where() + ": the model's parameter count does not fit in a "
          + "64-bit integer; check its sizes (hidden_size, the expert count and size, "
          + "num_hidden_layers)", e);
    }
    return spec;
  }

  /**
   * {@code head_dim}: given or defaulted (Qwen3, Gemma, GPT-OSS), given (Qwen3-MoE, Mixtral),
   * else {@code hidden / heads}; 0 means the latter, as does Mixtral's {@code head_dim} when it
   * equals {@code hidden / heads} (transformers writes it into saved configs).
   */
  private static int headDim(HfFields f, String type, HfConfigReader.Common c) {
    boolean optional = type.equals("qwen3_moe") || type.equals("mixtral");
    if (!type.equals("qwen3") && !type.startsWith("gemma") && !type.equals("gpt_oss")
        && !optional) {
      return 0;
    }
    JsonNode n = f.root().get("head_dim");
    if (n != null && !n.isNull() && (!n.isIntegralNumber() || !n.canConvertToInt()
        || n.asInt() <= 0 || n.asInt() > MAX_HEAD_DIM)) {
      throw new InputException(f.where() + ": field 'head_dim' must be a positive integer up to "
          + MAX_HEAD_DIM + ", got " + n);
    }
    if (optional && (n == null || n.isNull())) {
      return 0;
    }
    int d = f.positive("head_dim");
    boolean derived = c.hidden() % c.heads() == 0 && d == c.hidden() / c.heads();
    return type.equals("mixtral") && derived ? 0 : d;
  }

  /** Gemma 2's soft caps: the default when absent, none when null. */
  private static double softcap(HfFields f, String key, double dflt) {
    if (!f.root().has(key)) {
      return dflt;
    }
    return f.positiveOrOff(key);
  }

  /** A bias switch meshplan does not model when true. */
  private static void refuse(HfFields f, String key) {
    if (f.bool(key, false)) {
      throw new InputException(f.where() + ": field '" + key + "' true is not supported for "
          + "this model_type (its published models have no such biases)");
    }
  }
}
