package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Qwen3-Next ({@code model_type} {@code qwen3_next}; transformers' {@code
 * configuration_qwen3_next.py} at 249ef81 and {@code modeling_qwen3_next.py} at 7515843): each
 * layer a mixer, Gated DeltaNet ({@link GdnShape}) or gated full attention on every {@code full_attention_interval}-th layer (or
 * as {@code layer_types} lists them), and a mixture of {@code num_experts} SwiGLU experts of
 * {@code moe_intermediate_size}, {@code num_experts_per_tok} per token, beside a shared expert of
 * {@code shared_expert_intermediate_size} scaled by its sigmoid gate. Read as two sublayers per
 * layer ({@link HybridPattern}: {@code GE} or {@code *E}). The attention has {@code head_dim} per
 * head, an RMSNorm on each query and key head and rotary positions on {@code
 * partial_rotary_factor} of each head; its {@code q_proj} is twice as wide, the second half the
 * output gate.
 *
 * <p>Refused in one line: dense MLP layers ({@code mlp_only_layers}, a {@code
 * decoder_sparse_step} other than 1), which the released model has none of.
 */
final class HfQwen3Next {
  /** The family: the defaults of Qwen3NextConfig (Qwen3-Next-80B-A3B's sizes). */
  static final HfFamily FAMILY = new HfFamily("qwen3_next", "Qwen3-Next", ModelSpec.Family.LLAMA,
      false, Map.ofEntries(Map.entry("vocab_size", 151936), Map.entry("hidden_size", 2048),
          Map.entry("num_hidden_layers", 48), Map.entry("num_attention_heads", 16),
          Map.entry("num_key_value_heads", 2), Map.entry("head_dim", 256),
          Map.entry("max_position_embeddings", 32768), Map.entry("full_attention_interval", 4),
          Map.entry("linear_num_key_heads", 16), Map.entry("linear_num_value_heads", 32),
          Map.entry("linear_key_head_dim", 128), Map.entry("linear_value_head_dim", 128),
          Map.entry("linear_conv_kernel_dim", 4), Map.entry("num_experts", 512),
          Map.entry("num_experts_per_tok", 10), Map.entry("moe_intermediate_size", 512),
          Map.entry("shared_expert_intermediate_size", 512), Map.entry("decoder_sparse_step", 1),
          Map.entry("intermediate_size", 5120)),
      Optional.of(Set.of("head_dim", "full_attention_interval", "layer_types",
          "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
          "linear_value_head_dim", "linear_conv_kernel_dim", "num_experts", "num_experts_per_tok",
          "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
          "mlp_only_layers", "norm_topk_prob", "output_router_logits", "router_aux_loss_coef",
          "partial_rotary_factor", "attention_bias", "attention_dropout")),
      HfQwen3Next::read, Optional.empty());

  private HfQwen3Next() {}

  private static ModelSpec read(String type, HfFields f, HfConfigReader.Common c) {
    // Qwen3NextMLP and its experts are SwiGLU (ACT2FN[hidden_act], silu as released).
    HfNumerics.checkActivation(type, f, "hidden_act");
    JsonNode dense = f.root().get("mlp_only_layers");
    if (dense != null && !dense.isNull() && !(dense.isArray() && dense.isEmpty())
        || f.positive("decoder_sparse_step") != 1) {
      throw new InputException(f.where() + ": mlp_only_layers or decoder_sparse_step names "
          + "dense MLP layers, which meshplan does not read for Qwen3-Next (the released model "
          + "has none)");
    }
    if (f.bool("attention_bias", false)) {
      throw new InputException(f.where() + ": field 'attention_bias' is true; Qwen3-Next is "
          + "read without attention biases (as released)");
    }
    int layers = c.layers();
    StringBuilder pattern = new StringBuilder();
    JsonNode types = f.root().get("layer_types");
    int interval = f.positive("full_attention_interval");
    for (int i = 0; i < layers; i++) {
      boolean full;
      if (types != null && !types.isNull()) {
        if (!types.isArray() || types.size() != layers) {
          throw new InputException(f.where() + ": field 'layer_types' must list the " + layers
              + " layers");
        }
        String t = types.get(i).asText("");
        if (!t.equals("full_attention") && !t.equals("linear_attention")) {
          throw new InputException(f.where() + ": layer_types[" + i + "] must be "
              + "full_attention or linear_attention, got "
              + io.meshplan.util.Words.clipped(types.get(i).toString()));
        }
        full = t.equals("full_attention");
      } else {
        full = (i + 1) % interval == 0;
      }
      pattern.append(full ? HybridPattern.ATTENTION : HybridPattern.GDN)
          .append(HybridPattern.MOE);
    }
    GdnShape gdn = new GdnShape(f.positive("linear_num_key_heads"),
        f.positive("linear_num_value_heads"), f.positive("linear_key_head_dim"),
        f.positive("linear_value_head_dim"), f.positive("linear_conv_kernel_dim"), 64);
    int sublayers = Math.multiplyExact(2, layers);
    if (sublayers > ModelSpec.MAX_LAYERS) {
      throw new InputException(f.where() + ": " + layers + " layers are more than meshplan "
          + "plans");
    }
    HybridPattern hp = HybridPattern.parse(pattern.toString(), sublayers, null, gdn, true);
    MoeShape moe = new MoeShape(f.positive("num_experts"), f.positive("num_experts_per_tok"),
        f.positive("moe_intermediate_size"), f.positive("shared_expert_intermediate_size"),
        false).withSharedGate();
    double rotary = f.positiveOrOff("partial_rotary_factor");
    if (rotary > 1) {
      throw new InputException(f.where() + ": field 'partial_rotary_factor' must be at most 1, "
          + "got " + rotary);
    }
    JsonNode scaling = f.root().get("rope_scaling");
    if (scaling != null && !scaling.isNull()) {
      // The released config has none, and this reader prices plain RoPE: a scaling would be
      // taken for one it did not apply.
      throw new InputException(f.where() + ": field 'rope_scaling' is "
          + io.meshplan.util.Words.clipped(scaling.toString()) + "; meshplan reads Qwen3-Next "
          + "with plain RoPE (as released: null)");
    }
    double theta = f.positiveOrOff("rope_theta");
    double eps = f.positiveOrOff("rms_norm_eps");
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, f.bool("tie_word_embeddings", false),
        new AttentionShape(f.positive("head_dim"), false, AttentionShape.QkNorm.PER_HEAD, 2, 0, 0,
            0, 0, 0),
        moe, 0, Numerics.rotary(theta > 0 ? theta : 10_000, eps > 0 ? eps : 1e-6)
            .withRotary(rotary > 0 ? rotary : 0.25, false), hp);
    return new ModelSpec(c.name(), ModelSpec.Family.LLAMA, sublayers, c.hidden(), c.heads(),
        f.positive("num_key_value_heads"), moe.expertFfn(), c.vocab(), c.seq(),
        HfConfigReader.DEFAULT_BATCH, c.dtype(), arch);
  }
}
