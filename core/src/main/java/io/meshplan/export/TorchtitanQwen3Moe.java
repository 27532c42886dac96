package io.meshplan.export;

import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.plan.ParallelConfig;
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
 *   <li>{@code num_experts % ep == 0} ({@code models/common/decoder.py:201-208}); {@code ep}
 *       divides {@code dp_shard x cp x tp} ({@code distributed/parallel_dims.py:187-192}); the
 *       experts' FSDP group is {@code efsdp = dp_shard x cp x tp / ep} ({@code
 *       config/configs.py:282-290}), kept even at size 1 ({@code parallel_dims.py:205-208}).
 *   <li>expert tensor parallelism: with {@code ep > 1} the routed experts are whole experts
 *       sharded over the EP ranks, and without EP they are tensor-parallel like the dense layers
 *       ({@code models/common/MOE_SHARDING.md}, table "Configurations"); main has no {@code
 *       expert_tensor_parallel_degree}. So meshplan's expert tensor size is 1 with EP and the
 *       tensor size without it.
 *   <li>the training sequence is at most the RoPE cache ({@code models/common/decoder.py:216-225}).
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
          && moe.sharedFfn() == 0 && !moe.expertBiases();
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
   * What torchtitan cannot run of a Qwen3 MoE input's experts and sequence.
   *
   * @param input an input whose model has a flavor
   * @param shard the {@code data_parallel_shard_degree} written
   * @return the reason, or empty
   */
  static Optional<String> missing(ExportInput input, int shard) {
    ParallelConfig c = input.config();
    MoeShape moe = input.model().arch().moe();
    String at = " (torchtitan " + TorchtitanMain.VERSION + " ";
    if (moe.capacityFactor() > 0) {
      return Optional.of("torchtitan's Qwen3 experts are dropless (no capacity factor is set in"
          + " models/qwen3/__init__.py:147, 189); it has no capacity factor "
          + moe.capacityFactor());
    }
    if (input.model().seq() > MAX_CONTEXT) {
      return Optional.of("torchtitan's Qwen3 flavors hold RoPE for " + MAX_CONTEXT + " tokens"
          + at + "models/common/decoder.py:216-225); the sequence is " + input.model().seq());
    }
    long sparse = (long) shard * c.contextParallel() * c.tensorParallel();
    if (moe.experts() % c.expertParallel() != 0 || sparse % c.expertParallel() != 0) {
      return Optional.of("torchtitan needs expert_parallel_degree " + c.expertParallel()
          + " to divide the " + moe.experts() + " experts and dp_shard x cp x tp = " + sparse
          + at + "models/common/decoder.py:201-208, distributed/parallel_dims.py:187-192)");
    }
    int etp = expertTensor(c);
    if (c.expertTensorParallel() != etp) {
      return Optional.of("torchtitan has no expert tensor-parallel degree" + at
          + "models/common/MOE_SHARDING.md): its experts are "
          + (c.expertParallel() > 1 ? "whole on each of the " + c.expertParallel()
              + " expert-parallel ranks" : "tensor-parallel over the " + c.tensorParallel()
              + " tensor ranks") + ", which is expert tensor size " + etp + ", not "
          + c.expertTensorParallel());
    }
    return Optional.empty();
  }

  /**
   * The expert tensor-parallel size torchtitan has for a layout.
   *
   * @param c the configuration
   * @return 1 with expert parallelism, the tensor size without it
   */
  static int expertTensor(ParallelConfig c) {
    return c.expertParallel() > 1 ? 1 : c.tensorParallel();
  }

  /**
   * The model with its experts dropless, and the configuration with the expert tensor size
   * torchtitan has, for the nearest input.
   *
   * @param input the input
   * @return the input torchtitan's experts can run, or the input itself
   */
  static ExportInput nearest(ExportInput input) {
    ModelSpec m = input.model();
    MoeShape moe = m.arch().moe();
    ModelSpec dropless = moe.capacityFactor() == 0 ? m : new ModelSpec(m.name(), m.family(),
        m.layers(), m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(),
        m.dtype(), m.arch().withMoe(new MoeShape(moe.experts(), moe.topK(), moe.expertFfn(),
            moe.sharedFfn(), moe.expertBiases(), 0, moe.imbalance())));
    ParallelConfig c = input.config();
    return new ExportInput(dropless, input.cluster(), c.withExperts(c.expertParallel(),
        expertTensor(c)), input.attention(), input.overlaps(), input.gpipe());
  }
}
