package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Jamba ({@code model_type} {@code jamba}; transformers' {@code configuration_jamba.py} at 161d2be
 * and {@code modeling_jamba.py} at 97bb61d): each layer a mixer, attention where {@code i %
 * attn_layer_period == attn_layer_offset} and Mamba-1 elsewhere ({@link Mamba1Shape}: inner
 * {@code mamba_expand x hidden_size}, {@code mamba_d_state}, {@code mamba_d_conv}, {@code
 * mamba_dt_rank} or {@code "auto"}, {@code ceil(hidden_size / 16)}, with the step's, B's and C's
 * RMSNorms), and an MLP, a mixture of {@code num_experts} SwiGLU experts ({@code
 * num_experts_per_tok} per token) where {@code i % expert_layer_period == expert_layer_offset}
 * and a dense SwiGLU MLP elsewhere, both of {@code intermediate_size}; read as two sublayers per
 * layer ({@link HybridPattern}). Attention has no position encoding.
 */
final class HfJamba {
  /** The family: the defaults of JambaConfig (Jamba-v0.1's sizes), and its own fields. */
  static final HfFamily FAMILY = new HfFamily("jamba", "Jamba", ModelSpec.Family.GPT, false,
      Map.ofEntries(Map.entry("vocab_size", 65536), Map.entry("hidden_size", 4096),
          Map.entry("intermediate_size", 14336), Map.entry("num_hidden_layers", 32),
          Map.entry("num_attention_heads", 32), Map.entry("num_key_value_heads", 8),
          Map.entry("max_position_embeddings", 262144), Map.entry("num_experts", 16),
          Map.entry("num_experts_per_tok", 2), Map.entry("expert_layer_period", 2),
          Map.entry("expert_layer_offset", 1), Map.entry("attn_layer_period", 8),
          Map.entry("attn_layer_offset", 4), Map.entry("mamba_d_state", 16),
          Map.entry("mamba_d_conv", 4), Map.entry("mamba_expand", 2),
          Map.entry("mamba_conv_bias", true), Map.entry("mamba_proj_bias", false)),
      Optional.of(Set.of("num_experts", "num_experts_per_tok", "expert_layer_period",
          "expert_layer_offset", "attn_layer_period", "attn_layer_offset", "mamba_d_state",
          "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias",
          "use_mamba_kernels", "output_router_logits", "router_aux_loss_coef", "sliding_window",
          "num_logits_to_keep", "attention_dropout")),
      HfJamba::read, Optional.empty());

  private HfJamba() {}

  private static ModelSpec read(String type, HfFields f, HfConfigReader.Common c) {
    // JambaMLP and its experts are SwiGLU (ACT2FN[hidden_act], silu as released); attention
    // runs over the whole sequence (sliding_window null as released).
    HfNumerics.checkActivation(type, f, "hidden_act");
    HfWindows.refuseWindow(f, type);
    int layers = c.layers();
    int attnPeriod = f.positive("attn_layer_period");
    int attnOffset = offset(f, "attn_layer_offset", attnPeriod);
    int expertPeriod = f.positive("expert_layer_period");
    int expertOffset = offset(f, "expert_layer_offset", expertPeriod);
    int sublayers = Math.multiplyExact(2, layers);
    if (sublayers > ModelSpec.MAX_LAYERS) {
      throw new InputException(f.where() + ": " + layers + " layers are more than meshplan "
          + "plans");
    }
    StringBuilder p = new StringBuilder();
    boolean experts = false;
    for (int i = 0; i < layers; i++) {
      boolean moe = i % expertPeriod == expertOffset;
      experts |= moe;
      p.append(i % attnPeriod == attnOffset ? HybridPattern.ATTENTION : HybridPattern.SELECTIVE)
          .append(moe ? HybridPattern.MOE : HybridPattern.MLP);
    }
    long inner = (long) f.positive("mamba_expand") * c.hidden();
    if (inner > Integer.MAX_VALUE / 4) {
      throw new InputException(f.where() + ": mamba_expand x hidden_size is " + inner
          + ", too large");
    }
    Mamba1Shape mamba = new Mamba1Shape((int) inner, f.positive("mamba_d_state"),
        f.positive("mamba_d_conv"), dtRank(f, c.hidden()), f.bool("mamba_conv_bias", true),
        f.bool("mamba_proj_bias", false), true);
    MoeShape moe = experts ? new MoeShape(f.positive("num_experts"),
        f.positive("num_experts_per_tok"), f.positive("intermediate_size"), 0, false)
        : MoeShape.DENSE;
    double eps = f.positiveOrOff("rms_norm_eps");
    int heads = c.heads();
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, f.bool("tie_word_embeddings", false),
        new AttentionShape(c.hidden() % heads == 0 ? c.hidden() / heads : 1, false,
            AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        moe, 0, Numerics.rotary(10_000, eps > 0 ? eps : 1e-6),
        HybridPattern.parse(p.toString(), sublayers, null, null, false, mamba));
    return new ModelSpec(c.name(), ModelSpec.Family.GPT, sublayers, c.hidden(), heads,
        f.positive("num_key_value_heads"), f.positive("intermediate_size"), c.vocab(), c.seq(),
        HfConfigReader.DEFAULT_BATCH, c.dtype(), arch);
  }

  /** A layer offset, below its period. */
  private static int offset(HfFields f, String key, int period) {
    JsonNode n = f.root().get(key);
    int v = n == null || n.isNull() ? (int) f.defaults().get(key)
        : n.isIntegralNumber() && n.canConvertToInt() ? n.asInt() : -1;
    if (v < 0 || v >= period) {
      throw new InputException(f.where() + ": field '" + key + "' must be 0 to " + (period - 1)
          + ", got " + n);
    }
    return v;
  }

  /** {@code mamba_dt_rank}: a positive integer, or "auto" for {@code ceil(hidden / 16)}. */
  private static int dtRank(HfFields f, int hidden) {
    JsonNode n = f.root().get("mamba_dt_rank");
    if (n == null || n.isNull() || n.isTextual() && n.asText().equals("auto")) {
      return (hidden + 15) / 16;
    }
    return f.positive("mamba_dt_rank");
  }
}
