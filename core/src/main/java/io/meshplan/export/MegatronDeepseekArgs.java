package io.meshplan.export;

import io.meshplan.framework.MegatronArg;
import io.meshplan.model.Mla;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Megatron-LM's arguments for the blocks DeepSeek-V3 (DeepSeek-AI, arXiv:2412.19437) adds to a
 * mixture-of-experts decoder: multi-head latent attention, dense blocks among the expert blocks
 * (also Qwen3-MoE's {@code mlp_only_layers}) and multi-token prediction. The rules are
 * Megatron-LM's at commit d98e8a6 (NVIDIA/Megatron-LM main, 2026-08-22), restated in {@code
 * MegatronMoeConformanceTest}:
 *
 * <ul>
 *   <li>{@code --multi-latent-attention} is {@code TransformerConfig.multi_latent_attention}
 *       ({@code megatron/core/transformer/transformer_config.py:288}), an option through the
 *       argument factory ({@code megatron/training/arguments.py:2373-2374}); it makes the model's
 *       config an {@code MLATransformerConfig} ({@code megatron/training/argument_utils.py:292-293})
 *       and excludes {@code --group-query-attention} ({@code arguments.py:1973-1974}), which the
 *       latent attention's one key/value latent shared by all heads does not need.
 *   <li>the sizes: {@code --q-lora-rank} (unset is {@code None}, queries projected directly,
 *       {@code multi_latent_attention.py:508}), {@code --kv-lora-rank}, {@code --qk-head-dim} (the
 *       part without rotary positions), {@code --qk-pos-emb-head-dim} (the rotary part) and {@code
 *       --v-head-dim} ({@code arguments.py:3548-3557}); Megatron-LM's defaults (None, 32, 128, 64,
 *       128) are never relied on.
 *   <li>{@code --qk-layernorm} gives the query and key/value latents their RMSNorms (the q and kv
 *       up-projections become layer-norm linears, {@code
 *       megatron/core/models/gpt/gpt_layer_specs.py:244-255}); without it they are identities, and
 *       {@link Mla#parameters} counts the two norms.
 *   <li>positions: the model's own RoPE. With YaRN (DeepSeek-V3's {@code config.json}: factor
 *       40, original length 4096, betas 32 and 1, mscale 1, mscale_all_dim 1) it is MLA's default
 *       rope type, stated as {@code --rope-type yarn} ({@code arguments.py:2906-2909}) with {@code
 *       --rotary-scaling-factor}, {@code --mscale} and {@code --mscale-all-dim} ({@code
 *       arguments.py:3558-3563}); the original length and the betas are {@code
 *       MLATransformerConfig}'s defaults, 4096, 32 and 1 ({@code transformer_config.py:3318-3325}),
 *       which no argument sets, so another YaRN is refused ({@link MegatronModelArgs#missing}).
 *       Plain RoPE is {@code --rope-type rope} with {@code --no-rope-fusion}: the fused MLA rope
 *       works only with YaRN ({@code transformer_config.py:3345-3346}).
 *   <li>{@code --kv-channels} is written only when the hidden size is not a multiple of the
 *       heads, which {@code arguments.py:1331-1333} asserts when it is unset; latent attention
 *       sets its own head sizes ({@code multi_latent_attention.py:163-169}), so the value (the
 *       value head size) shapes nothing.
 *   <li>dense blocks: {@code --moe-layer-freq} as a list expression of one 0 (dense) or 1
 *       (experts) per block, run-length encoded ({@code "[0]*3+[1]*58"}); {@code arguments.py:
 *       245-253} evaluates it (digits, brackets, {@code *} and {@code +} only) and {@code
 *       gpt_layer_specs.py:651-657} asserts its length is the number of blocks. The dense blocks'
 *       MLP is {@code --ffn-hidden-size}, the experts' {@code --moe-ffn-hidden-size}.
 *   <li>multi-token prediction: {@code --mtp-num-layers} ({@code transformer_config.py:68}), all
 *       on the last pipeline stage without a custom layout ({@code
 *       megatron/core/transformer/multi_token_prediction.py:788-831, 864-882}), where meshplan prices them;
 *       rotary positions ({@code arguments.py:882-886}); full recomputation of one layer at a time
 *       ({@code multi_token_prediction.py:1621-1627}), which is the only full recomputation the
 *       export writes. Each module's block is built from the last decoder block's spec ({@code
 *       gpt_builders.py:80-84}), so a model whose last block is dense is refused: meshplan prices
 *       the module's block as an expert block. The loss weight is 0.1 ({@code
 *       --mtp-loss-scaling-factor}, Megatron-LM's default, {@code transformer_config.py:75}),
 *       DeepSeek-V3's for its last 4.8T tokens (section 4.2); meshplan does not price it.
 * </ul>
 *
 * <p>The router stays Megatron-LM's softmax top-k with the auxiliary loss, which is what meshplan
 * prices: {@link MoeShape} does not say how a model routes, and DeepSeek-V2, with the same latent
 * attention, dense first blocks and shared experts, used that router. DeepSeek-V3's own (sigmoid
 * scores, an expert bias instead of most of the loss, top-k within 4 of 8 groups, scaling 2.5,
 * section 2.1.2) costs the same few operations per token and expert; its flags ({@code
 * --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-num-groups 8
 * --moe-router-group-topk 4 --moe-router-topk-scaling-factor 2.5
 * --moe-router-load-balancing-type seq_aux_loss --moe-aux-loss-coeff 1e-4}) can be given to the
 * file when it runs: {@code megatron_launch} passes its own arguments after the file's, and
 * Megatron-LM's parser keeps the last value of an option.
 */
final class MegatronDeepseekArgs {
  /** The multi-token prediction loss weight written ({@code --mtp-loss-scaling-factor}). */
  static final String MTP_LOSS_SCALE = "0.1";

  private MegatronDeepseekArgs() {}

  /**
   * What Megatron-LM cannot build of the model's blocks, if anything.
   *
   * @param m the model
   * @return the reason, empty when it can
   */
  static Optional<String> missing(ModelSpec m) {
    MoeShape moe = m.arch().moe();
    if (m.arch().mtpDepth() > 0 && moe.denseLayer(m.layers() - 1)) {
      return Optional.of("Megatron-LM builds each multi-token prediction module's block like the"
          + " last decoder block (gpt_builders.py:80-84), which in " + m.name() + " is dense;"
          + " meshplan prices the module's block with experts");
    }
    return Optional.empty();
  }

  /**
   * The MLP size of the dense blocks: the listed dense blocks' of a mixture-of-experts model
   * with them, else the model's feed-forward size.
   *
   * @param m the model
   * @return {@code --ffn-hidden-size}, elements
   */
  static int denseFfn(ModelSpec m) {
    MoeShape moe = m.arch().moe();
    return moe.denseLayers().isEmpty() ? m.ffn() : moe.denseFfn();
  }

  /**
   * The latent attention's arguments.
   *
   * @param m the model
   * @return the arguments, empty without latent attention
   */
  static List<List<String>> attention(ModelSpec m) {
    Mla mla = m.arch().attn().mla();
    List<List<String>> a = new ArrayList<>();
    if (!mla.on()) {
      return a;
    }
    a.add(List.of(MegatronArg.MULTI_LATENT_ATTENTION.flag()));
    if (mla.qLoraRank() > 0) {
      a.add(List.of(MegatronArg.Q_LORA_RANK.flag(), Integer.toString(mla.qLoraRank())));
    }
    a.add(List.of(MegatronArg.KV_LORA_RANK.flag(), Integer.toString(mla.kvLoraRank())));
    a.add(List.of(MegatronArg.QK_HEAD_DIM.flag(), Integer.toString(mla.nopeDim())));
    a.add(List.of(MegatronArg.QK_POS_EMB_HEAD_DIM.flag(), Integer.toString(mla.ropeDim())));
    a.add(List.of(MegatronArg.V_HEAD_DIM.flag(), Integer.toString(mla.valueDim())));
    a.add(List.of(MegatronArg.QK_LAYERNORM.flag()));
    if (m.arch().numerics().ropeScaling() instanceof io.meshplan.model.RopeScaling.Yarn y) {
      a.add(List.of(MegatronArg.ROPE_TYPE.flag(), "yarn"));
      a.add(List.of(MegatronArg.ROTARY_SCALING_FACTOR.flag(), io.meshplan.model.RopeScaling.num(y.factor())));
      a.add(List.of(MegatronArg.MSCALE.flag(), io.meshplan.model.RopeScaling.num(y.mscale())));
      a.add(List.of(MegatronArg.MSCALE_ALL_DIM.flag(), io.meshplan.model.RopeScaling.num(y.mscaleAllDim())));
    } else {
      a.add(List.of(MegatronArg.ROPE_TYPE.flag(), "rope"));
      a.add(List.of(MegatronArg.NO_ROPE_FUSION.flag()));
    }
    if (m.hidden() % m.heads() != 0) {
      a.add(List.of(MegatronArg.KV_CHANNELS.flag(), Integer.toString(mla.valueDim())));
    }
    return a;
  }

  /**
   * The dense blocks' pattern, when the model has dense blocks among its expert blocks.
   *
   * @param m the model
   * @return {@code --moe-layer-freq} and its list expression, empty without dense blocks
   */
  static List<List<String>> layerPattern(ModelSpec m) {
    MoeShape moe = m.arch().moe();
    if (!moe.routed() || moe.denseLayers().isEmpty()) {
      return List.of();
    }
    return List.of(List.of(MegatronArg.MOE_LAYER_FREQ.flag(), pattern(moe, m.layers())));
  }

  /**
   * The blocks' kinds as a Python list expression, one run of equal kinds per term.
   *
   * @param moe the experts and dense blocks
   * @param layers the blocks
   * @return e.g. {@code [0]*3+[1]*58} for 3 dense blocks then 58 expert blocks
   */
  static String pattern(MoeShape moe, int layers) {
    StringBuilder sb = new StringBuilder();
    int start = 0;
    for (int i = 1; i <= layers; i++) {
      if (i == layers || moe.denseLayer(i) != moe.denseLayer(start)) {
        if (sb.length() > 0) {
          sb.append('+');
        }
        sb.append(moe.denseLayer(start) ? "[0]*" : "[1]*").append(i - start);
        start = i;
      }
    }
    return sb.toString();
  }

  /**
   * The multi-token prediction arguments.
   *
   * @param m the model
   * @return the arguments, empty without multi-token prediction
   */
  static List<List<String>> mtp(ModelSpec m) {
    int depth = m.arch().mtpDepth();
    if (depth == 0) {
      return List.of();
    }
    List<List<String>> a = new java.util.ArrayList<>(List.of(
        List.of(MegatronArg.MTP_NUM_LAYERS.flag(), Integer.toString(depth)),
        List.of(MegatronArg.MTP_LOSS_SCALING_FACTOR.flag(), MTP_LOSS_SCALE)));
    if (m.arch().mtpShared()) {
      // transformer_config.py:82; multi_token_prediction.py:1960-1990, 2049: one layer's weights
      // for every depth.
      a.add(List.of(MegatronArg.MTP_USE_REPEATED_LAYER.flag()));
    }
    return a;
  }
}
