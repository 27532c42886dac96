package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The reader of the Hugging Face decoder families {@link HfConfigReader} reads besides LLaMA,
 * Mistral, GPT-NeoX and OPT: the layer design each modeling file builds. Their defaults and the
 * fields meshplan knows are registered with each family ({@link HfRegistry}); a field outside that
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

  /** The families' own known fields, by {@code model_type} ({@link HfFamily#known}). */
  static final Map<String, Set<String>> KNOWN = HfRegistry.ALL.stream()
      .filter(f -> f.known().isPresent())
      .collect(java.util.stream.Collectors.toUnmodifiableMap(HfFamily::modelType,
          f -> f.known().orElseThrow()));

  private HfFamilies() {}

  /**
   * The transformers defaults of a family's size fields, for fields the config leaves out.
   *
   * @param type the {@code model_type}
   * @return field to default ({@link HfFamily#defaults})
   */
  static Map<String, Object> defaults(String type) {
    return HfRegistry.find(type).map(HfFamily::defaults).orElse(Map.of());
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
    if (type.equals("deepseek_v3") || type.equals("deepseek_v2") || type.equals("kimi_k2")) {
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
    if (type.equals("olmoe")) {
      // A clamp of the projections, an elementwise pass: checked, not priced.
      f.positiveOrOff("clip_qkv");
    }
    Architecture.Mlp mlp = type.startsWith("gemma") ? Architecture.Mlp.GEGLU
        : type.equals("starcoder2") ? Architecture.Mlp.GELU : Architecture.Mlp.SWIGLU;
    AttentionShape.QkNorm qk = switch (type) {
      case "qwen3", "qwen3_moe", "gemma3_text" -> AttentionShape.QkNorm.PER_HEAD;
      case "olmo2", "olmoe" -> AttentionShape.QkNorm.WHOLE;
      case "llama4_text" -> f.bool("use_qk_norm", true) ? AttentionShape.QkNorm.L2
          : AttentionShape.QkNorm.NONE;
      default -> AttentionShape.QkNorm.NONE;
    };
    // Gemma 2 caps its logits by default; Gemma 3's config can too (null as released), and
    // its attention applies a cap where one is given: both are priced.
    boolean gemma2 = type.equals("gemma2");
    boolean capped = gemma2 || type.equals("gemma3_text");
    AttentionShape shape = new AttentionShape(headDim, type.equals("qwen2"), qk,
        type.startsWith("gemma") ? 4 : 2,
        capped ? softcap(f, "attn_logit_softcapping", gemma2 ? 50.0 : 0) : 0,
        capped ? softcap(f, "final_logit_softcapping", gemma2 ? 30.0 : 0) : 0, 0, 0, 0, gptOss);
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
  static int headDim(HfFields f, String type, HfConfigReader.Common c) {
    // InternLM2's remote code derives the head from hidden / heads whatever the config says.
    if (type.equals("internlm2")) {
      return 0;
    }
    // A family whose configuration class defaults head_dim takes its default; the others read
    // it where the config gives it, as transformers' attention classes do (getattr(config,
    // "head_dim", hidden_size // num_attention_heads): Qwen2Attention in modeling_qwen2.py at
    // 00d4b3d, whose attention is Llama's, as Mistral's, Phi-3's, Granite's, OLMo 2's,
    // StarCoder2's, Mixtral's and Qwen3-MoE's are), and hidden / heads otherwise.
    boolean defaulted = type.equals("qwen3") || type.startsWith("gemma")
        || type.equals("gpt_oss") || type.equals("llama4_text");
    JsonNode n = f.root().get("head_dim");
    if (n != null && !n.isNull() && (!n.isIntegralNumber() || !n.canConvertToInt()
        || n.asInt() <= 0 || n.asInt() > MAX_HEAD_DIM)) {
      throw new InputException(f.where() + ": field 'head_dim' must be a positive integer up to "
          + MAX_HEAD_DIM + ", got " + n);
    }
    if (!defaulted && (n == null || n.isNull())) {
      return 0;
    }
    int d = f.positive("head_dim");
    if (d % 2 != 0) {
      throw new InputException(f.where() + ": field 'head_dim' must be even (rotary embeddings"
          + " rotate pairs), got " + d);
    }
    boolean derived = c.hidden() % c.heads() == 0 && d == c.hidden() / c.heads();
    return !defaulted && derived ? 0 : d;
  }

  /** Gemma 2's soft caps: the default when absent, none when null. */
  private static double softcap(HfFields f, String key, double dflt) {
    if (!f.root().has(key)) {
      return dflt;
    }
    return f.positiveOrOff(key);
  }

  /** A bias switch meshplan does not model when true. */
  static void refuse(HfFields f, String key) {
    if (f.bool(key, false)) {
      throw new InputException(f.where() + ": field '" + key + "' true is not supported for "
          + "this model_type (its published models have no such biases)");
    }
  }
}
