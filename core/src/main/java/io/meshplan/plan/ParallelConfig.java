package io.meshplan.plan;

import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * A Megatron-LM style parallel configuration (Narayanan et al., SC'21): tensor, pipeline and data
 * parallel sizes, the interleaved schedule's model chunks, batch sizes and the memory options. Every
 * plan that uses one logical mesh shape and equal stages can be written as one of these; the
 * simulator evaluates both.
 *
 * @param tensorParallel tensor-parallel size t (GPUs that split each layer)
 * @param pipelineParallel pipeline-parallel size p (stages)
 * @param dataParallel data-parallel size d (replicas)
 * @param virtualStages model chunks per pipeline stage (1 = plain 1F1B; more = interleaved 1F1B)
 * @param microBatchSize sequences per microbatch on one replica
 * @param globalBatchSize sequences per iteration over all replicas
 * @param recompute activation recomputation
 * @param sequenceParallel Korthikanti et al.'s sequence parallelism in the tensor-parallel group
 * @param zeroStage the ZeRO stage over the data-parallel group (Rajbhandari et al. SC'20): 0
 *     nothing sharded, 1 optimizer state sharded (Megatron-LM's {@code
 *     --use-distributed-optimizer}), 3 weights, gradients and optimizer state sharded (FSDP); the
 *     same values as {@link StagePlan#zeroStage}
 */
public record ParallelConfig(
    int tensorParallel,
    int pipelineParallel,
    int dataParallel,
    int virtualStages,
    int microBatchSize,
    int globalBatchSize,
    Recompute recompute,
    boolean sequenceParallel,
    int zeroStage) {

  /** Validates the sizes on their own; see {@link #check} for the fit to a model and cluster. */
  public ParallelConfig {
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(pipelineParallel, "pipeline-parallel size");
    Require.positive(dataParallel, "data-parallel size");
    Require.positive(virtualStages, "virtual stages");
    Require.positive(microBatchSize, "micro batch");
    Require.positive(globalBatchSize, "global batch");
    Require.nonNull(recompute, "recompute");
    Require.that(zeroStage == 0 || zeroStage == 1 || zeroStage == 3, "ZeRO stage must be 0, 1"
        + " or 3, got " + zeroStage);
  }

  /**
   * A configuration whose only sharding is Megatron-LM's distributed optimizer, or none.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param distributedOptimizer ZeRO stage 1 when true, else 0
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, boolean distributedOptimizer) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, distributedOptimizer ? 1 : 0);
  }

  /**
   * Whether the optimizer state, and only it, is sharded: Megatron-LM's distributed optimizer.
   *
   * @return ZeRO stage 1
   */
  public boolean distributedOptimizer() {
    return zeroStage == 1;
  }

  /**
   * The same configuration with another ZeRO stage.
   *
   * @param stage 0, 1 or 3
   * @return the configuration
   */
  public ParallelConfig withZeroStage(int stage) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, stage);
  }

  /**
   * The GPUs this configuration occupies.
   *
   * @return t * p * d
   * @throws InputException when the product overflows an int
   */
  public int gpus() {
    try {
      return Math.multiplyExact(Math.multiplyExact(tensorParallel, pipelineParallel),
          dataParallel);
    } catch (ArithmeticException e) {
      throw new InputException("tensor-parallel size " + tensorParallel
          + " x pipeline-parallel size " + pipelineParallel + " x data-parallel size "
          + dataParallel + " is too large");
    }
  }

  /**
   * The microbatches each pipeline runs per iteration.
   *
   * @return global batch / (micro batch * d)
   */
  public int microbatches() {
    return globalBatchSize / (microBatchSize * dataParallel);
  }

  /**
   * Checks the configuration against a model and a cluster the way Megatron-LM does at start-up.
   *
   * @param gpus the cluster's GPU count
   * @param layers the model's transformer layers
   * @param heads the model's attention heads
   * @param kvHeads the model's key/value heads
   * @throws InputException naming the flag that disagrees
   */
  public void check(int gpus, int layers, int heads, int kvHeads) {
    if (gpus() != gpus) {
      throw new InputException("tensor-parallel size " + tensorParallel
          + " x pipeline-parallel size " + pipelineParallel + " x data-parallel size "
          + dataParallel + " = " + gpus() + " GPUs, but the cluster has " + gpus
          + "; make the product equal the cluster's GPU count");
    }
    long perStep = (long) microBatchSize * dataParallel;
    if (globalBatchSize % perStep != 0) {
      throw new InputException("global batch " + globalBatchSize + " is not a multiple of "
          + "micro batch " + microBatchSize + " x data-parallel size " + dataParallel + " = "
          + perStep);
    }
    long chunks = (long) pipelineParallel * virtualStages;
    if (layers % chunks != 0) {
      throw new InputException("the model's " + layers + " layers are not divisible by "
          + "pipeline-parallel size " + pipelineParallel
          + (virtualStages > 1 ? " x virtual stages " + virtualStages : "")
          + "; Megatron-LM gives every " + (virtualStages > 1 ? "model chunk" : "stage")
          + " the same number of layers");
    }
    if (virtualStages > 1 && pipelineParallel < 2) {
      throw new InputException("virtual stages " + virtualStages
          + " needs pipeline-parallel size of at least 2");
    }
    if (virtualStages > 1 && microbatches() % pipelineParallel != 0) {
      throw new InputException("the interleaved schedule (virtual stages " + virtualStages
          + ") needs the " + microbatches() + " microbatches per pipeline to be a multiple of "
          + "pipeline-parallel size "
          + pipelineParallel);
    }
    if (heads % tensorParallel != 0 || kvHeads % tensorParallel != 0 && tensorParallel
        % kvHeads != 0) {
      throw new InputException("tensor-parallel size " + tensorParallel
          + " does not divide the model's " + heads
          + " attention heads" + (kvHeads != heads ? " and " + kvHeads + " key/value heads" : ""));
    }
    if (sequenceParallel && tensorParallel == 1) {
      throw new InputException("sequence parallelism needs tensor-parallel size of at "
          + "least 2");
    }
  }

  /**
   * Checks overlaps against this configuration as Megatron-LM does at start-up
   * ({@code validate_args}): the tensor-parallel overlap needs sequence parallelism, the
   * parameter gather's overlap the distributed optimizer.
   *
   * @param o the overlaps
   * @throws InputException naming the flag that is missing
   */
  public void checkOverlaps(Overlaps o) {
    if (o.tensorComm() && !sequenceParallel) {
      throw new InputException("--tp-comm-overlap needs --sequence-parallel, as in Megatron-LM");
    }
    if (o.paramGather() && zeroStage != 1) {
      throw new InputException("--overlap-param-gather needs the distributed optimizer "
          + "(--distributed-optimizer or --zero-stage 1), as in Megatron-LM");
    }
  }
}
