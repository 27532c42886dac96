package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.List;
import java.util.Map;

/**
 * A Hugging Face {@code config.json}'s {@link Numerics}: the rotary base ({@code rope_theta}, or
 * {@code rope_parameters.rope_theta} as transformers v5 writes it; GPT-NeoX's {@code
 * rotary_emb_base}), the RoPE scaling ({@code rope_scaling} or {@code rope_parameters}: {@code
 * llama3}, {@code yarn}, {@code linear}, anything else by its name), the rotating share of a head
 * (GPT-NeoX's {@code rotary_pct}, {@code partial_rotary_factor}), the norm epsilon ({@code
 * rms_norm_eps}, GPT-NeoX's {@code layer_norm_eps}, StarCoder2's {@code norm_epsilon}; OPT's
 * LayerNorms keep PyTorch's 1e-5), the dropout ({@code attention_dropout} and the family's hidden
 * one: OPT's {@code dropout}, GPT-NeoX's {@code hidden_dropout}, StarCoder2's {@code
 * residual_dropout}, Phi-3's {@code resid_pdrop}), GPT-NeoX's {@code use_parallel_residual} and
 * Granite's multipliers.
 *
 * <p>A field a config leaves out takes the default of its family's transformers configuration
 * class ({@code src/transformers/models/<family>/configuration_<family>.py} at
 * huggingface/transformers 008e574): {@code rms_norm_eps} 1e-6 for llama, mistral, qwen2,
 * qwen3, qwen3_moe, gemma2, gemma3_text, granite and deepseek_v3, 1e-5 for mixtral, phi3, olmo2,
 * olmoe, gpt_oss, starcoder2 and gpt_neox; the rotary base 10,000, but 1,000,000 for mixtral and
 * gemma3_text and 150,000 for gpt_oss; GPT-NeoX's {@code rotary_pct} 0.25 and parallel
 * residual; OPT's dropout 0.1; Granite's multipliers 1.0; no dropout elsewhere.
 */
final class HfNumerics {
  /** {@code rms_norm_eps} (or its family's name) when a config leaves it out. */
  private static final Map<String, Double> EPS = Map.ofEntries(Map.entry("llama", 1e-6),
      Map.entry("mistral", 1e-6), Map.entry("qwen2", 1e-6), Map.entry("qwen3", 1e-6),
      Map.entry("qwen3_moe", 1e-6), Map.entry("gemma2", 1e-6), Map.entry("gemma3_text", 1e-6),
      Map.entry("granite", 1e-6), Map.entry("deepseek_v3", 1e-6), Map.entry("mixtral", 1e-5),
      Map.entry("phi3", 1e-5), Map.entry("olmo2", 1e-5), Map.entry("olmoe", 1e-5),
      Map.entry("gpt_oss", 1e-5), Map.entry("llama4_text", 1e-5),
      Map.entry("starcoder2", 1e-5), Map.entry("gpt_neox", 1e-5), Map.entry("opt", 1e-5));

  private HfNumerics() {}

  /** Transformers' names of the GeLU activations (activations.py's ACT2CLS). */
  private static final java.util.Set<String> GELU = java.util.Set.of("gelu", "gelu_new",
      "gelu_pytorch_tanh", "gelu_fast", "gelu_python", "gelu_accurate", "gelu_10", "quick_gelu");

  /**
   * Refuses a config's activation field that is not a name, or names another activation than
   * the one meshplan builds the family's layer with ({@link #activation}); absent or null passes.
   *
   * @param type the {@code model_type}
   * @param f the config's fields
   * @param key the field ({@code hidden_act}, or a hybrid's {@code mamba_hidden_act})
   * @throws InputException naming the field
   */
  static void checkActivation(String type, HfFields f, String key) {
    JsonNode n = f.root().get(key);
    if (n != null && !n.isNull() && !n.isTextual()) {
      throw new InputException(f.where() + ": field '" + key + "' must be an activation's"
          + " name, got " + io.meshplan.util.Words.clipped(n.toString()));
    }
    if (n != null && n.isTextual()) {
      activation(type, f, key, n.asText());
    }
  }

  /**
   * Refuses an activation other than the one meshplan builds the family's MLP with: SiLU
   * (SwiGLU) for the Llama-like families, GeLU for GPT-NeoX, Gemma and StarCoder 2, ReLU for OPT.
   * A config saying {@code gelu} for a Llama was priced and exported as SwiGLU ({@code --swiglu}).
   */
  private static void activation(String type, HfFields f, String key, String act) {
    String family = switch (type) {
      case "gpt_neox", "gemma", "gemma2", "gemma3", "gemma3_text", "starcoder2" -> "gelu";
      case "opt" -> "relu";
      default -> "silu";
    };
    boolean same = switch (family) {
      case "gelu" -> GELU.contains(act);
      case "relu" -> act.equals("relu");
      default -> act.equals("silu") || act.equals("swish");
    };
    if (!same) {
      throw new InputException(f.where() + ": field '" + key + "' is '"
          + io.meshplan.util.Words.clipped(act) + "', but meshplan builds a " + type + " model's"
          + (key.startsWith("mamba") ? " Mamba mixer" : " MLP") + " with " + (family.equals("silu")
              ? (key.startsWith("mamba") ? "SiLU" : "SiLU (SwiGLU)") : family.equals("gelu")
              ? "GeLU" : "ReLU") + ", as Transformers' code for it does; another activation is"
          + " not supported");
    }
  }

  /**
   * Reads the numbers of a config.
   *
   * @param type the {@code model_type} ({@code gemma3_text} for Gemma 3's text config)
   * @param f the config's fields
   * @return the numbers
   * @throws InputException naming the field that is not a number in range
   */
  static Numerics read(String type, HfFields f) {
    JsonNode params = f.root().get("rope_parameters");
    JsonNode scaling = f.root().get("rope_scaling");
    for (String key : List.of("rope_parameters", "rope_scaling")) {
      JsonNode n = f.root().get(key);
      if (n != null && !n.isNull() && !n.isObject()) {
        throw new InputException(f.where() + ": field '" + key + "' must be an object (or null),"
            + " got " + io.meshplan.util.Words.clipped(n.toString()));
      }
    }
    for (String key : List.of("hidden_act", "hidden_activation")) {
      checkActivation(type, f, key);
    }
    // Gemma's numbers meshplan does not price but a config must still state as numbers: the
    // local layers' rotary base (in rope_theta's range) and the query scale.
    double local = number(f, f.root(), "rope_local_base_freq", 10_000);
    if (local < 1 || local > Numerics.MAX_ROPE_THETA) {
      throw new InputException(f.where() + ": field 'rope_local_base_freq' must be a number "
          + "from 1 to 10^12, got " + f.root().get("rope_local_base_freq"));
    }
    if (f.root().has("query_pre_attn_scalar") && !f.root().get("query_pre_attn_scalar").isNull()
        && !(number(f, f.root(), "query_pre_attn_scalar", 1) > 0)) {
      throw new InputException(f.where() + ": field 'query_pre_attn_scalar' must be a positive "
          + "number, got " + f.root().get("query_pre_attn_scalar"));
    }
    JsonNode rope = scaling != null && scaling.isObject() ? scaling
        : params != null && params.isObject() ? params : null;
    double theta = params != null && params.isObject() && params.has("rope_theta")
        ? number(f, params, "rope_theta", 0)
        : f.root().has("rotary_emb_base") ? number(f, f.root(), "rotary_emb_base", 0)
        : number(f, f.root(), "rope_theta", switch (type) {
          case "mixtral", "gemma3_text" -> 1_000_000;
          case "gpt_oss" -> 150_000;
          case "llama4_text" -> 500_000;
          default -> 10_000;
        });
    double eps = number(f, f.root(), type.equals("gpt_neox") ? "layer_norm_eps"
        : type.equals("starcoder2") ? "norm_epsilon" : "rms_norm_eps", EPS.getOrDefault(type,
        1e-6));
    double fraction = type.equals("gpt_neox") ? number(f, f.root(), "rotary_pct", 0.25)
        : rope != null && rope.has("partial_rotary_factor")
        ? number(f, rope, "partial_rotary_factor", 1)
        : number(f, f.root(), "partial_rotary_factor", 1);
    double attention = number(f, f.root(), "attention_dropout", 0);
    String hiddenKey = switch (type) {
      case "opt" -> "dropout";
      case "gpt_neox" -> "hidden_dropout";
      case "starcoder2" -> "residual_dropout";
      case "phi3" -> "resid_pdrop";
      default -> "";
    };
    double hidden = hiddenKey.isEmpty() ? 0 : number(f, f.root(), hiddenKey,
        type.equals("opt") ? 0.1 : 0);
    try {
      Numerics n = new Numerics(theta, fraction, rope == null ? RopeScaling.NONE
          : scaling(type, f, rope), eps, attention, hidden,
          type.equals("gpt_neox") && f.bool("use_parallel_residual", true),
          type.equals("granite") ? new Numerics.Multipliers(
              number(f, f.root(), "embedding_multiplier", 1),
              number(f, f.root(), "residual_multiplier", 1),
              number(f, f.root(), "attention_multiplier", 1),
              number(f, f.root(), "logits_scaling", 1)) : Numerics.Multipliers.NONE);
      return n;
    } catch (IllegalArgumentException e) {
      throw new InputException(f.where() + ": " + e.getMessage(), e);
    }
  }

  /**
   * The RoPE forms transformers defines ({@code ROPE_INIT_FUNCTIONS} in {@code
   * modeling_rope_utils.py}: default, linear, dynamic, yarn, longrope, llama3), with Phi-3's older
   * name {@code su} for longrope and {@code mrope}, the multimodal Qwen models' sectioned rotary,
   * which transformers reads as the default.
   */
  private static final List<String> ROPE_TYPES = List.of("default", "linear", "dynamic", "yarn",
      "longrope", "llama3", "su", "mrope");

  /** The RoPE scaling object: its {@code rope_type} (or {@code type}) and that form's fields. */
  private static RopeScaling scaling(String type, HfFields f, JsonNode s) {
    JsonNode t = s.has("rope_type") ? s.get("rope_type") : s.get("type");
    if (t == null || t.isNull() || t.isTextual() && t.asText().equals("default")) {
      return RopeScaling.NONE;
    }
    if (!t.isTextual()) {
      throw new InputException(f.where() + ": rope_scaling's rope_type must be a string, got "
          + t);
    }
    String kind = t.asText();
    if (!ROPE_TYPES.contains(kind)) {
      throw new InputException(f.where() + ": rope_scaling's rope_type '"
          + io.meshplan.util.Words.clipped(kind) + "' is none transformers defines ("
          + String.join(", ", ROPE_TYPES) + ")");
    }
    if (type.equals("phi3")) {
      // configuration_phi3.py reads "su" and "yarn" as its long-context "longrope".
      number(f, s, "factor", 1);
      return new RopeScaling.Other(kind.equals("su") || kind.equals("yarn") ? "longrope" : kind);
    }
    return switch (kind) {
      case "llama3" -> new RopeScaling.Llama3(number(f, s, "factor", 0),
          number(f, s, "low_freq_factor", 1), number(f, s, "high_freq_factor", 4),
          (int) whole(f, s, "original_max_position_embeddings", 8192));
      case "yarn" -> new RopeScaling.Yarn(number(f, s, "factor", 0),
          (int) whole(f, s, "original_max_position_embeddings", 4096),
          number(f, s, "beta_fast", 32), number(f, s, "beta_slow", 1),
          number(f, s, "mscale", 1), number(f, s, "mscale_all_dim", 0),
          !s.has("truncate") || s.get("truncate").asBoolean(true));
      case "linear" -> new RopeScaling.Linear(number(f, s, "factor", 0));
      default -> {
        // dynamic, longrope, ...: read by name, but a factor given must still be a number.
        number(f, s, "factor", 1);
        yield new RopeScaling.Other(kind);
      }
    };
  }

  /** A number not below 0, or {@code dflt} when absent or null. */
  private static double number(HfFields f, JsonNode obj, String key, double dflt) {
    JsonNode n = obj.get(key);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isNumber() || !Double.isFinite(n.asDouble()) || n.asDouble() < 0) {
      throw new InputException(f.where() + ": field '" + key + "' must be a number not below 0,"
          + " got " + n);
    }
    return n.asDouble();
  }

  /** A positive whole number below 2^31, or {@code dflt} when absent or null. */
  private static double whole(HfFields f, JsonNode obj, String key, int dflt) {
    double x = number(f, obj, key, dflt);
    if (x != Math.rint(x) || x < 1 || x > Integer.MAX_VALUE) {
      throw new InputException(f.where() + ": field '" + key + "' must be a positive integer,"
          + " got " + obj.get(key));
    }
    return x;
  }
}
