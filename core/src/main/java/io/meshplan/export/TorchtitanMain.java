package io.meshplan.export;

import io.meshplan.model.ModelSpec;
import java.util.Map;

/**
 * The rules of torchtitan's main branch, whose job config is a Python function returning a {@code
 * Trainer.Config} (since 2026-02), restated from the snapshot at commit {@link #COMMIT} ({@link
 * #DATE}; {@code assets/version.txt} still says 0.2.2). File names and lines below are that
 * commit's.
 *
 * <ul>
 *   <li>loading: {@code torchtitan/config/manager.py:48-158} imports {@code --module} (a short
 *       model name, or any importable module, tried with {@code .config_registry} appended and
 *       then as is) and calls its function {@code --config}; {@code --section.option} flags still
 *       override fields but are frozen ({@code config/README.md}).
 *   <li>llama3 flavors: {@code models/llama3/__init__.py:236-365} keeps the 8B, 70B and 405B
 *       dimensions of v0.2.2 ({@link TorchtitanV022#FLAVORS}); their recipes are {@code
 *       llama3_8b}, {@code llama3_70b} and {@code llama3_405b} ({@code
 *       models/llama3/config_registry.py:194, 267, 305}).
 *   <li>pipeline split: {@code distributed/pipeline_parallel.py:194-263} and {@code 357-456}
 *       repeat v0.2.2's virtual-stage count and stage-per-rank rules ({@link
 *       TorchtitanV022#stageError}); the head module is now {@code lm_head}, not {@code output}.
 *   <li>batch: {@code trainer.py:409-428}: gradient accumulation is {@code
 *       num_tokens_per_train_step / (num_tokens_per_microbatch_per_dp_rank x num_pp_microbatches x
 *       dp)}, which must divide exactly; {@code trainer.py:296-309}: the tokens of a microbatch
 *       divide by the tensor degree under sequence parallelism (times {@code 2 cp} with context
 *       parallelism).
 *   <li>{@code trainer.py:168-199}: CUDA graphs (on by default) refuse pipeline parallelism, and
 *       expert parallelism whose token dispatcher synchronises with the CPU (every flavor's
 *       all-to-all one), unless {@code training.disable_cuda_graphs} is set ({@link
 *       TorchtitanPython#cudaGraphsRefused}).
 *   <li>precision: {@code config/configs.py:94}: {@code mixed_precision_param} is bfloat16 or
 *       float32; activation checkpointing is {@code FullAC.Config}, {@code SelectiveAC.Config}
 *       (per op, meshplan's {@code op}) or {@code None} ({@code
 *       distributed/activation_checkpoint.py}; a plan's selective recomputation is Megatron-LM's,
 *       none under torchtitan's fused attention: {@link TorchtitanToml#torchtitanMode}).
 *   <li>degrees: {@code ParallelDims._validate} ({@code distributed/parallel_dims.py:166}) wants
 *       {@code dp_replicate x dp_shard x cp x tp x pp} to be the world size (line 182), and
 *       {@code ep} to divide {@code dp_shard x cp x tp} (lines 187-192).
 *   <li>context parallelism: {@link TorchtitanContext}; the experts: {@link TorchtitanExperts},
 *       with the Qwen3 flavors in {@link TorchtitanQwen3Moe} and DeepSeek-V3's in {@link
 *       TorchtitanDeepseekV3}.
 * </ul>
 */
final class TorchtitanMain {
  /** The commit of pytorch/torchtitan these rules are from. */
  static final String COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a";

  /** The commit's date. */
  static final String DATE = "2026-08-21";

  /** How the export names this version: the branch, the short commit and its date. */
  static final String VERSION = "main@" + COMMIT.substring(0, 7) + " (" + DATE + ")";

  /** The recipe function of each flavor in {@code models/llama3/config_registry.py}. */
  static final Map<String, String> RECIPES = Map.of("8B", "llama3_8b", "70B", "llama3_70b",
      "405B", "llama3_405b");

  /** The module name the exported file is imported as ({@code --module}). */
  static final String MODULE = "meshplan_torchtitan";

  /** The config function the exported file defines ({@code --config}). */
  static final String FUNCTION = "meshplan_plan";

  private TorchtitanMain() {}

  /**
   * The recipe function whose flavor has a model's dimensions.
   *
   * @param m the model
   * @return for example {@code llama3_70b}
   * @throws java.util.NoSuchElementException when no flavor has them
   */
  static String recipe(ModelSpec m) {
    return TorchtitanFlavors.of(m).orElseThrow().recipe();
  }

  /**
   * The model family a model is a flavor of, the package under {@code torchtitan/models/}.
   *
   * @param m a model with a flavor
   * @return {@code deepseek_v3} for DeepSeek-V3, {@code qwen3} for a Qwen3 mixture-of-experts
   *     flavor, else {@code llama3}
   */
  static String family(ModelSpec m) {
    return TorchtitanFlavors.of(m).map(TorchtitanFlavors.Flavor::model).orElse("llama3");
  }

  /**
   * The flavor with a model's dimensions, in its family.
   *
   * @param m a model with a flavor
   * @return for example {@code 70B}, {@code 30B-A3B} or {@code 671B}
   * @throws java.util.NoSuchElementException when no flavor has them
   */
  static String flavorName(ModelSpec m) {
    return TorchtitanFlavors.of(m).orElseThrow().name();
  }

  /**
   * The divisor {@code trainer.py:300-302} asks of a microbatch's tokens.
   *
   * @param tp the tensor-parallel degree
   * @param sequenceParallel whether sequence parallelism is on
   * @param cp the context-parallel degree
   * @return {@code (sp ? tp : 1) x (cp > 1 ? 2 cp : 1)}
   */
  static int tokenDivisor(int tp, boolean sequenceParallel, int cp) {
    return (sequenceParallel ? tp : 1) * (cp > 1 ? 2 * cp : 1);
  }

  /**
   * The gradient-accumulation steps of {@code trainer.py:409-428}.
   *
   * @param tokensPerStep {@code num_tokens_per_train_step}
   * @param tokensPerMicrobatch {@code num_tokens_per_microbatch_per_dp_rank}
   * @param ppMicrobatches {@code num_pp_microbatches} (1 without a pipeline)
   * @param dp {@code dp_replicate x dp_shard}
   * @return the steps, or -1 where torchtitan raises its ValueError (no exact division)
   */
  static long accumulation(long tokensPerStep, long tokensPerMicrobatch, int ppMicrobatches,
      int dp) {
    long perIteration = tokensPerMicrobatch * ppMicrobatches * dp;
    return tokensPerStep % perIteration != 0 ? -1 : tokensPerStep / perIteration;
  }
}
