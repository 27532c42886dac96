package io.meshplan.export;

import io.meshplan.model.ModelSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rules of torchtitan's release v0.2.2, the last that reads a TOML job config, restated from
 * its source (tag {@code v0.2.2} of pytorch/torchtitan). Line numbers below are that tag's.
 *
 * <ul>
 *   <li>llama3 flavors: {@code torchtitan/models/llama3/__init__.py:51-98} ({@code 8B}, {@code
 *       70B}, {@code 405B}); the vocabulary is {@code TransformerModelArgs}' default 128,256
 *       ({@code models/llama3/model/args.py:33}); the SwiGLU width follows {@code
 *       FeedForward.__init__} ({@code models/llama3/model/model.py:332-336}).
 *   <li>pipeline split: {@code pipeline_llm} ({@code torchtitan/distributed/pipeline_parallel.py:59-109})
 *       counts {@code ceil((n_layers + first_stage_less_layers + last_stage_less_layers) /
 *       layers_per_stage)} virtual stages, which must divide by the pipeline degree, with one stage
 *       per rank for single-stage schedules (1F1B) and at least two for multi-stage ones; {@code
 *       generate_llm_fqn_per_model_part} (lines 236-345) then spreads the effective layers,
 *       the first stage's and last stage's less-layers counting as layers there.
 *   <li>degrees: {@code ParallelDims._validate} ({@code torchtitan/distributed/parallel_dims.py:53})
 *       asserts that {@code dp_replicate * dp_shard * cp * tp * pp} is the world size.
 *   <li>sequence: {@link #seqDivisor}; context parallelism as {@link TorchtitanContext} states it.
 * </ul>
 */
final class TorchtitanV022 {
  /** The release these rules are from. */
  static final String VERSION = "v0.2.2";

  /** The vocabulary of every llama3 flavor ({@code models/llama3/model/args.py:33}). */
  static final int VOCAB = 128_256;

  /**
   * One llama3 flavor of {@code models/llama3/__init__.py}.
   *
   * @param name the flavor's key, for example {@code 70B}
   * @param hfAssets the {@code hf_assets_path} of the release's own train config for the flavor
   *     ({@code models/llama3/train_configs/llama3_*.toml:20})
   * @param layers {@code n_layers}
   * @param dim {@code dim}
   * @param heads {@code n_heads}
   * @param kvHeads {@code n_kv_heads}
   * @param ffnMultiplier {@code ffn_dim_multiplier}
   * @param multipleOf {@code multiple_of}
   */
  record Flavor(String name, String hfAssets, int layers, int dim, int heads, int kvHeads,
      double ffnMultiplier, int multipleOf) {
    /**
     * The SwiGLU hidden width {@code FeedForward} builds ({@code model.py:332-336}): two thirds of
     * four times the model width, times the multiplier, rounded up to {@code multiple_of}.
     *
     * @return the width
     */
    int ffn() {
      int h = (int) (2.0 * (4 * dim) / 3);
      h = (int) (ffnMultiplier * h);
      return multipleOf * ((h + multipleOf - 1) / multipleOf);
    }

    /** Whether a model has this flavor's dimensions exactly. */
    boolean matches(ModelSpec m) {
      return m.layers() == layers && m.hidden() == dim && m.heads() == heads
          && m.kvHeads() == kvHeads && m.ffn() == ffn() && m.vocab() == VOCAB;
    }
  }

  /** The llama3 flavors ({@code models/llama3/__init__.py:51-98}) a full model can take. */
  static final List<Flavor> FLAVORS = List.of(
      new Flavor("8B", "./assets/hf/Llama-3.1-8B", 32, 4096, 32, 8, 1.3, 1024),
      new Flavor("70B", "./assets/hf/Llama-3.1-70B", 80, 8192, 64, 8, 1.3, 4096),
      new Flavor("405B", "./assets/hf/Llama-3.1-405B", 126, 16384, 128, 8, 1.2, 4096));

  private TorchtitanV022() {}

  /**
   * The flavor with a model's dimensions.
   *
   * @param m the model
   * @return the flavor, or empty when none has its dimensions
   */
  static Optional<Flavor> flavor(ModelSpec m) {
    return FLAVORS.stream().filter(f -> f.matches(m)).findFirst();
  }

  /**
   * The divisor {@code parallelize_llama} asks of the sequence ({@code
   * models/llama3/infra/parallelize.py:69-74}, {@code ParallelDims.seq_len_divisor} at {@code
   * distributed/parallel_dims.py:365-372}): the tensor degree times {@code 2 x cp}, with or
   * without context parallelism.
   *
   * @param tp the tensor-parallel degree
   * @param cp the context-parallel degree
   * @return {@code tp x 2 cp}
   */
  static long seqDivisor(int tp, int cp) {
    return (long) tp * 2 * cp;
  }

  /**
   * The number of virtual stages {@code pipeline_llm} builds ({@code pipeline_parallel.py:75-77}).
   *
   * @param layers {@code n_layers}
   * @param layersPerStage {@code pipeline_parallel_layers_per_stage}
   * @param firstLess {@code pipeline_parallel_first_stage_less_layers}
   * @param lastLess {@code pipeline_parallel_last_stage_less_layers}
   * @return the ceiling of the effective layers over the layers per stage
   */
  static int virtualStages(int layers, int layersPerStage, int firstLess, int lastLess) {
    return (layers + firstLess + lastLess + layersPerStage - 1) / layersPerStage;
  }

  /**
   * The ValueError {@code pipeline_llm} raises for a split ({@code pipeline_parallel.py:85-108}).
   *
   * @param stages the virtual stages of {@link #virtualStages}
   * @param pp {@code pipeline_parallel_degree}
   * @param singleStage whether the schedule is a single-stage one (1F1B, GPipe)
   * @return the error, or empty when torchtitan accepts the split
   */
  static Optional<String> stageError(int stages, int pp, boolean singleStage) {
    if (stages % pp != 0) {
      return Optional.of("Number of virtual stages (" + stages
          + ") must be divisible by pipeline parallel size (" + pp + ")");
    }
    int perRank = stages / pp;
    if (singleStage && perRank != 1) {
      return Optional.of("Single stage schedule requires exactly 1 stage per rank, but got "
          + perRank + " stages per rank");
    }
    if (!singleStage && perRank < 2) {
      return Optional.of("Multi-stage schedule requires at least 2 stages per rank, but got "
          + perRank + " stages per rank");
    }
    return Optional.empty();
  }

  /**
   * The transformer layers of each stage as {@code generate_llm_fqn_per_model_part} assigns them
   * ({@code pipeline_parallel.py:266-343}): the effective layers spread evenly, the remainder on
   * the first stages, the first stage giving {@code firstLess} of its share to the embedding and
   * the last {@code lastLess} to the norm and head.
   *
   * @param stages the number of stages, at least 2
   * @param layers {@code n_layers}
   * @param firstLess the input weight
   * @param lastLess the output weight
   * @return the transformer layers per stage, or empty where the function raises a ValueError
   */
  static Optional<List<Integer>> layersOfStages(int stages, int layers, int firstLess,
      int lastLess) {
    int effective = layers + firstLess + lastLess;
    if (stages < 2 || stages > effective) {
      return Optional.empty();
    }
    int each = effective / stages;
    int extra = effective % stages;
    if (each == 0 || firstLess > each || lastLess > each) {
      return Optional.empty();
    }
    List<Integer> out = new ArrayList<>();
    int left = layers;
    for (int s = 0; s < stages; s++) {
      int share = each + (s < extra ? 1 : 0)
          - (s == 0 ? firstLess : s == stages - 1 ? lastLess : 0);
      int taken = Math.min(Math.max(share, 0), left);
      out.add(taken);
      left -= taken;
    }
    return Optional.of(out);
  }
}
