package io.meshplan.export;

import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import java.util.List;
import java.util.Optional;

/**
 * The Qwen3 mixture-of-experts flavors of torchtitan's main branch and its expert-parallel rules,
 * restated from the snapshot at {@link TorchtitanMain#COMMIT}; file names and lines are that
 * commit's.
 *
 * <ul>
 *   <li>flavors: {@code models/qwen3/__init__.py:516-595}: {@code 30B-A3B} (48 layers, dim 2048,
 *       32 heads) and {@code 235B-A22B} (94 layers, dim 4096, 64 heads), both with 4 key/value
 *       heads of 128, a per-head RMSNorm on queries and keys, 128 experts of which 8 per token
 *       (softmax scores, renormalised over the top 8), no shared expert, no biases, vocabulary
 *       151,936, untied embeddings, and a RoPE cache of 40,960 positions; the expert widths are 768
 *       and 1536. These are meshplan's {@code qwen3-30b-a3b} and {@code qwen3-235b-a22b}.
 *   <li>recipe: {@code models/qwen3/config_registry.py:305-337} ({@code qwen3_30b_a3b}); the
 *       235B flavor has no recipe, so its file starts from the 30B one (same tokenizer, vocabulary
 *       and loss) with its own model and {@code hf_assets_path}.
 *   <li>experts are dropless: {@code non_blocking_capacity_factor} is unset in the flavors
 *       ({@code __init__.py:147, 189}), so no token is dropped; a capacity factor has no form.
 *   <li>the expert-parallel rules, the expert tensor size and the RoPE limit are main's for
 *       every mixture-of-experts model: {@link TorchtitanExperts}.
 * </ul>
 */
final class TorchtitanQwen3Moe {
  /** The vocabulary of both flavors ({@code models/qwen3/__init__.py:523, 564}). */
  static final int VOCAB = 151_936;

  /** The RoPE cache of both flavors ({@code __init__.py:549, 590}), in tokens. */
  static final int MAX_CONTEXT = 40_960;

  /** The only recipe of a Qwen3 MoE flavor ({@code models/qwen3/config_registry.py:305}). */
  static final String RECIPE = "qwen3_30b_a3b";

  /**
   * One Qwen3 MoE flavor.
   *
   * @param name the flavor's key
   * @param hfAssets where {@code scripts/download_hf_assets.py} puts its tokenizer
   * @param layers {@code n_layers}
   * @param dim {@code dim}
   * @param heads {@code n_heads}
   * @param moeFfn {@code moe_hidden_dim}, one expert's inner width
   */
  record Flavor(String name, String hfAssets, int layers, int dim, int heads, int moeFfn) {
    /** Whether a model has this flavor's dimensions and block exactly. */
    boolean matches(ModelSpec m) {
      Architecture a = m.arch();
      AttentionShape at = a.attn();
      MoeShape moe = a.moe();
      return m.family() == ModelSpec.Family.LLAMA && m.layers() == layers && m.hidden() == dim
          && m.heads() == heads && m.kvHeads() == 4 && m.vocab() == VOCAB
          && a.mlp() == Architecture.Mlp.SWIGLU && a.norm() == Architecture.Norm.RMS
          && a.positions() == Architecture.Positions.ROTARY && !a.biases()
          && !a.tiedEmbeddings() && at.headDim() == 128
          && at.qkNorm() == AttentionShape.QkNorm.PER_HEAD
          && at.beyondLlama().equals(List.of("head_dim 128", "q/k norms")) && at.window() == 0
          && moe.experts() == 128 && moe.topK() == 8 && moe.expertFfn() == moeFfn
          && moe.sharedFfn() == 0 && !moe.expertBiases() && moe.latent() == 0;
    }
  }

  /** The flavors ({@code models/qwen3/__init__.py:608-609}). */
  static final List<Flavor> FLAVORS = List.of(
      new Flavor("30B-A3B", "./assets/hf/Qwen3-30B-A3B", 48, 2048, 32, 768),
      new Flavor("235B-A22B", "./assets/hf/Qwen3-235B-A22B", 94, 4096, 64, 1536));

  private TorchtitanQwen3Moe() {}

  /**
   * The flavor with a model's dimensions and block.
   *
   * @param m the model
   * @return the flavor, or empty when none has them
   */
  static Optional<Flavor> flavor(ModelSpec m) {
    return FLAVORS.stream().filter(f -> f.matches(m)).findFirst();
  }

  /**
   * What torchtitan cannot run of a Qwen3 MoE input's experts and sequence ({@link
   * TorchtitanExperts#missing}).
   *
   * @param input an input whose model has a flavor
   * @param shard the {@code data_parallel_shard_degree} written
   * @return the reason, or empty
   */
  static Optional<String> missing(ExportInput input, int shard) {
    return TorchtitanExperts.missing(input, shard, "Qwen3", FLAVORS.size(), "models/qwen3/__init__.py:147, 189",
        MAX_CONTEXT);
  }
}
