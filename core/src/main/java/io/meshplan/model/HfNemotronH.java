package io.meshplan.model;

import io.meshplan.util.InputException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Nemotron-H ({@code model_type} {@code nemotron_h}): a hybrid of Mamba-2, attention and MLP
 * layers, one per symbol of {@code hybrid_override_pattern} ({@link HybridPattern}), as
 * transformers' {@code modeling_nemotron_h.py} (at 897753a) and Megatron-Core's hybrid stack
 * build them. The Mamba-2 mixer ({@link MambaShape}) has {@code mamba_num_heads} heads of {@code
 * mamba_head_dim}, a state of {@code ssm_state_size}, {@code n_groups} groups (its gated norm
 * normalizes each group's {@code inner / n_groups} channels), a convolution of {@code
 * conv_kernel} taps (with a bias when {@code use_conv_bias}) and chunks of {@code chunk_size};
 * attention has {@code attention_head_dim} per head and no position encoding; the MLP is two
 * matrices with squared ReLU ({@code mlp_hidden_act} {@code relu2}); norms are RMSNorm.
 *
 * <p>Nemotron 3's mixture-of-experts layers ({@code E}) are read from {@code n_routed_experts}
 * squared-ReLU experts of {@code moe_intermediate_size}, {@code num_experts_per_tok} per token,
 * beside a shared expert of {@code moe_shared_expert_intermediate_size}, routed within {@code
 * topk_group} of {@code n_group} groups, in the latent width {@code moe_latent_size} where given
 * (Nemotron 3 Super's LatentMoE, {@link MoeShape#latent}). {@code num_nextn_predict_layers}
 * multi-token prediction modules, each of the layers {@code mtp_hybrid_override_pattern} lists
 * (Nemotron 3 Super's {@code *E}: an attention and an expert layer; {@link HybridPattern#mtp}).
 * Refused, each in one line: prediction modules without their pattern, or with a layer the
 * model's own pattern lacks, {@code E} layers without
 * {@code n_routed_experts}, an MLP activation other than {@code relu2}, and attention or MLP
 * biases (the released configs have none).
 */
final class HfNemotronH {
  /** The family: no defaults (every size is required), and its own fields. */
  static final HfFamily FAMILY = new HfFamily("nemotron_h", "Nemotron-H", ModelSpec.Family.GPT,
      false, Map.of(), Optional.of(Set.of("hybrid_override_pattern", "mamba_num_heads",
          "mamba_head_dim", "ssm_state_size", "n_groups", "conv_kernel", "chunk_size", "expand",
          "use_conv_bias", "use_bias", "mamba_proj_bias", "mlp_bias", "attention_bias",
          "mlp_hidden_act", "hidden_act", "mamba_hidden_act", "attention_head_dim", "head_dim",
          "layer_norm_epsilon", "residual_in_fp32", "rescale_prenorm_residual", "time_step_min",
          "time_step_max", "time_step_floor",
          "time_step_limit", "mamba_dt_rank", "n_routed_experts", "num_logits_to_keep",
          "sliding_window", "attention_dropout", "hidden_dropout", "use_mamba_kernels",
          "moe_intermediate_size", "moe_shared_expert_intermediate_size", "num_experts_per_tok",
          "n_group", "topk_group", "routed_scaling_factor", "norm_topk_prob", "moe_latent_size",
          "n_shared_experts", "moe_shared_expert_overlap", "num_nextn_predict_layers",
          "mtp_hybrid_override_pattern", "norm_eps", "mamba_ssm_cache_dtype")),
      HfNemotronH::read, Optional.empty());

  private HfNemotronH() {}

  private static ModelSpec read(String type, HfFields f, HfConfigReader.Common c) {
    // The Mamba-2 mixer gates with SiLU (Transformers' NemotronHMamba2Mixer reads
    // mamba_hidden_act); no sliding window is priced on its attention layers.
    HfNumerics.checkActivation(type, f, "mamba_hidden_act");
    HfWindows.refuseWindow(f, type);
    String act = f.given("mlp_hidden_act") ? f.string("mlp_hidden_act") : "relu2";
    if (!act.equals("relu2")) {
      throw new InputException(f.where() + ": field 'mlp_hidden_act' is "
          + io.meshplan.util.Words.clipped(act) + "; Nemotron-H's MLP layers are read with "
          + "relu2 (squared ReLU) only");
    }
    int mtp = HfDeepseek.mtp(f);
    if (f.bool("attention_bias", false) || f.bool("mlp_bias", false)) {
      throw new InputException(f.where() + ": attention_bias or mlp_bias is true; meshplan "
          + "reads Nemotron-H's attention and MLP layers without biases (as released)");
    }
    MambaShape mamba = new MambaShape(f.positive("mamba_num_heads"), f.positive("mamba_head_dim"),
        f.positive("ssm_state_size"), f.positive("n_groups"), f.positive("conv_kernel"),
        f.positive("chunk_size"), f.positive("n_groups"), f.bool("use_conv_bias", true),
        f.bool("use_bias", false) || f.bool("mamba_proj_bias", false));
    HybridPattern hp;
    // Read before the try: a missing or mistyped field's refusal already names the file.
    String pattern = f.string("hybrid_override_pattern");
    try {
      hp = HybridPattern.parse(pattern, c.layers(), mamba);
    } catch (InputException e) {
      throw new InputException(f.where() + ": " + e.getMessage(), e);
    }
    if (mtp > 0) {
      // Nemotron 3 Super: each prediction module's layers (Megatron-Bridge's bridge maps
      // mtp_hybrid_override_pattern to Megatron-Core's; nemotron_h_bridge.py at 067f987).
      if (!f.given("mtp_hybrid_override_pattern")) {
        throw new InputException(f.where() + ": num_nextn_predict_layers is " + mtp + " but "
            + "mtp_hybrid_override_pattern, the prediction module's layers, is absent");
      }
      String layers = f.string("mtp_hybrid_override_pattern");
      HybridPattern.requireModuleLayers(f.where() + ": mtp_hybrid_override_pattern", layers);
      try {
        // HybridPattern refuses a layer of a kind the model's own pattern lacks.
        hp = hp.withMtp(layers);
      } catch (IllegalArgumentException e) {
        throw new InputException(f.where() + ": mtp_hybrid_override_pattern: " + e.getMessage(),
            e);
      }
    } else if (f.given("mtp_hybrid_override_pattern")) {
      // Unused without prediction modules (the bridge builds none: num_nextn_predict_layers 0).
      f.string("mtp_hybrid_override_pattern");
    }
    MoeShape moe = MoeShape.DENSE;
    if (hp.first(HybridPattern.MOE) >= 0) {
      // Nemotron 3's expert layers (Megatron-Bridge's bridge: n_routed_experts,
      // moe_intermediate_size, moe_shared_expert_intermediate_size, num_experts_per_tok,
      // n_group and topk_group), squared-ReLU experts of two matrices as its MLP layers.
      if (!f.given("n_routed_experts")) {
        throw new InputException(f.where() + ": hybrid_override_pattern has mixture-of-experts"
            + " layers (E) but n_routed_experts is absent");
      }
      moe = new MoeShape(f.positive("n_routed_experts"), f.positive("num_experts_per_tok"),
          f.positive("moe_intermediate_size"),
          f.given("moe_shared_expert_intermediate_size")
              ? f.positive("moe_shared_expert_intermediate_size") : 0, false);
      int[] group = HfMoe.groupLimit(f, moe.experts(), moe.topK());
      if (group[0] > 1) {
        moe = moe.withGroupLimit(group[0], group[1]);
      }
      if (f.given("moe_latent_size")) {
        // Nemotron 3 Super's LatentMoE (MoeShape#latent).
        moe = moe.withLatent(f.positive("moe_latent_size"));
      }
    }
    int kv = f.positive("num_key_value_heads", c.heads());
    int headDim = f.positive("attention_head_dim", f.positive("head_dim", 0 < c.heads()
        && c.hidden() % c.heads() == 0 ? c.hidden() / c.heads() : 1));
    double eps = f.positiveOrOff("layer_norm_epsilon");
    Architecture arch = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, f.bool("tie_word_embeddings", false),
        new AttentionShape(headDim, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        moe, mtp, Numerics.rotary(10_000, eps > 0 ? eps : 1e-5), hp);
    return new ModelSpec(c.name(), ModelSpec.Family.GPT, c.layers(), c.hidden(), c.heads(), kv,
        moe.routed() ? moe.expertFfn() : f.positive("intermediate_size"), c.vocab(), c.seq(),
        HfConfigReader.DEFAULT_BATCH,
        c.dtype(), arch);
  }
}
