package io.meshplan.export;

import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.Mla;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.plan.ParallelConfig;
import java.util.List;
import java.util.Optional;

/**
 * The DeepSeek-V3 671B flavor of torchtitan's main branch (DeepSeek-AI, "DeepSeek-V3 Technical
 * Report", arXiv:2412.19437), restated from the snapshot at {@link TorchtitanMain#COMMIT}; file
 * names and lines are that commit's, under {@code torchtitan/models/deepseek_v3/}.
 *
 * <ul>
 *   <li>flavor: {@code __init__.py:533-605} ({@code _671b}): 61 blocks of dim 7168, 128 heads of
 *       latent attention (q_lora 1536, kv_lora 512, qk_nope 128, qk_rope 64, v 128, both latents
 *       RMS-normed, {@code __init__.py:132, 152}), {@code n_dense_layers = 3} first blocks with a
 *       dense FFN of 18432 ({@code __init__.py:226-232}), the other 58 with 256 experts of 2048, 8
 *       per token, and {@code num_shared_experts = 1}, one FFN of {@code moe_hidden_dim x
 *       num_shared_experts} = 2048 ({@code __init__.py:258-263}); vocabulary 129,280, untied.
 *       Only this flavor has DeepSeek-V3's dimensions: 16B and 236B are DeepSeek-MoE and
 *       DeepSeek-V2 ({@code __init__.py:389-530}). This is meshplan's {@code deepseek-v3}.
 *   <li>routing: the flavor sets DeepSeek-V3's router itself ({@code __init__.py:566-571}:
 *       sigmoid scores, 8 groups of which 4 are kept, route scale 2.5, scores renormalised over
 *       the top 8) and the auxiliary-loss-free balance of a per-expert bias ({@code
 *       load_balance_coeff} 1e-3 by default, {@code models/common/config_utils.py:311-322},
 *       updated by {@code register_moe_load_balancing_hook}, {@code __init__.py:640}), so the
 *       file keeps them. meshplan prices a router as a few operations per token and expert
 *       whichever it is ({@link MoeShape} does not say how a model routes). Experts are dropless
 *       ({@code non_blocking_capacity_factor} unset, {@code __init__.py:573-574}).
 *   <li>positions: YaRN-scaled RoPE over a cache of {@code 4096 x 4} = 16,384 positions ({@code
 *       __init__.py:575-584}); the scaling changes no cost meshplan prices.
 *   <li>multi-token prediction: {@code model_registry(..., num_mtp_layers=N)} ({@code
 *       __init__.py:616-629}) adds {@code N} modules built from the last block ({@code
 *       __init__.py:291-316}, an expert block in this flavor) sharing the embedding and head; the
 *       recipe sets none, and {@code config_registry.py:76-82} shows the loss such a model needs,
 *       {@code MTPLoss} (scale 0.3 by default, {@code mtp.py:327}). {@code mtp.py:197-206}
 *       raises {@code NotImplementedError} under pipeline or context parallelism: a model with
 *       modules has no torchtitan file with either.
 *   <li>recipe: {@code config_registry.py:209-245} ({@code deepseek_v3_671b}); parallelism is
 *       {@code parallelize_deepseekv3} ({@code parallelize.py:21-85}), the Qwen3 flavors' FSDP and
 *       expert-parallel composition ({@link TorchtitanExperts}), and the pipeline is {@code
 *       pipeline_llm} ({@code __init__.py:639}), llama3's split.
 * </ul>
 */
final class TorchtitanDeepseekV3 {
  /** The flavor's key ({@code __init__.py:612}). */
  static final String FLAVOR = "671B";

  /** The flavor's recipe ({@code config_registry.py:209}). */
  static final String RECIPE = "deepseek_v3_671b";

  /** The flavor's RoPE cache ({@code __init__.py:577}), in tokens. */
  static final int MAX_CONTEXT = 4096 * 4;

  /** The flavor's latent attention ({@code __init__.py:552-561}). */
  static final Mla ATTENTION = new Mla(1536, 512, 128, 64, 128);

  /** The flavor's expert blocks after its dense ones ({@code __init__.py:544-549}). */
  static final MoeShape EXPERTS = new MoeShape(256, 8, 2048, 2048, false)
      .withDenseLayers(List.of(0, 1, 2), 18432);

  private TorchtitanDeepseekV3() {}

  /**
   * Whether a model has the 671B flavor's dimensions and blocks exactly, with any number of
   * multi-token prediction modules.
   *
   * @param m the model
   * @return whether {@code model_registry("671B", num_mtp_layers=m.arch().mtpDepth())} builds it
   */
  static boolean matches(ModelSpec m) {
    Architecture a = m.arch();
    MoeShape moe = a.moe();
    return m.family() == ModelSpec.Family.LLAMA && m.layers() == 61 && m.hidden() == 7168
        && m.heads() == 128 && m.kvHeads() == 128 && m.ffn() == 2048 && m.vocab() == 129_280
        && a.mlp() == Architecture.Mlp.SWIGLU && a.norm() == Architecture.Norm.RMS
        && a.positions() == Architecture.Positions.ROTARY && !a.biases() && !a.tiedEmbeddings()
        && a.attn().equals(AttentionShape.latent(ATTENTION))
        && moe.experts() == EXPERTS.experts() && moe.topK() == EXPERTS.topK()
        && moe.expertFfn() == EXPERTS.expertFfn() && moe.sharedFfn() == EXPERTS.sharedFfn()
        && moe.expertBiases() == EXPERTS.expertBiases()
        && moe.denseLayers().equals(EXPERTS.denseLayers())
        && moe.denseFfn() == EXPERTS.denseFfn() && moe.latent() == 0
        // torchtitan's prediction layers each have their own weights (num_mtp_layers).
        && !a.mtpShared();
  }

  /**
   * What torchtitan cannot run of a DeepSeek-V3 input: multi-token prediction under a pipeline or
   * context parallelism, then the experts' rules ({@link TorchtitanExperts#missing}).
   *
   * @param input an input whose model {@link #matches}
   * @param shard the {@code data_parallel_shard_degree} written
   * @return the reason, or empty
   */
  static Optional<String> missing(ExportInput input, int shard) {
    ParallelConfig c = input.config();
    int mtp = input.model().arch().mtpDepth();
    if (mtp > 0 && (c.pipelineParallel() > 1 || c.contextParallel() > 1)) {
      boolean pp = c.pipelineParallel() > 1;
      return Optional.of("torchtitan " + TorchtitanMain.VERSION + " does not support"
          + " multi-token prediction with " + (pp ? "pipeline" : "context") + " parallelism"
          + " (models/deepseek_v3/mtp.py:" + (pp ? "197-201" : "202-206") + "); "
          + input.model().name() + " has " + mtp + " module" + (mtp == 1 ? "" : "s") + " and "
          + (pp ? "pipeline degree " + c.pipelineParallel()
              : "context degree " + c.contextParallel())
          + ": use --pp 1 --cp 1, or a model without multi-token prediction");
    }
    return TorchtitanExperts.missing(input, shard, "DeepSeek-V3", 1,
        "models/deepseek_v3/__init__.py:573-574", MAX_CONTEXT);
  }

  /**
   * The {@code model_registry} call of a model's flavor.
   *
   * @param m a model that {@link #matches}
   * @return for example {@code model_registry("671B", attn_backend="flex", num_mtp_layers=1)}
   */
  static String registry(ModelSpec m) {
    int mtp = m.arch().mtpDepth();
    // The recipe's FlexAttention, stated: main runs context parallelism only under it.
    return "model_registry(\"" + FLAVOR + "\", attn_backend=\"flex\""
        + (mtp > 0 ? ", num_mtp_layers=" + mtp : "") + ")";
  }
}
