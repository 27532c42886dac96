package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * How a training run was split, in Megatron-LM's terms.
 *
 * @param tensorParallel tensor-parallel size
 * @param pipelineParallel pipeline-parallel size
 * @param dataParallel data-parallel size; 0 when the log leaves it to the world size (torchtitan's
 *     {@code data_parallel_shard_degree = -1}), resolved against the cluster
 * @param virtualStages model chunks per pipeline stage (1 without interleaving)
 * @param microBatch sequences per microbatch on one replica
 * @param localBatch sequences per iteration on one data-parallel replica; the global batch is
 *     {@code localBatch * dataParallel}
 * @param recompute {@code none}, {@code selective} or {@code full}
 * @param sequenceParallel Megatron-LM's sequence parallelism
 * @param zeroStage 0, 1 (distributed optimizer) or 3 (FSDP)
 * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
 */
public record RunParallel(int tensorParallel, int pipelineParallel, int dataParallel,
    int virtualStages, int microBatch, int localBatch, String recompute, boolean sequenceParallel,
    int zeroStage, boolean overlapGradReduce) {
  /** Validates the sizes. */
  public RunParallel {
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(pipelineParallel, "pipeline-parallel size");
    Require.that(dataParallel >= 0, "data-parallel size must be >= 0");
    Require.positive(virtualStages, "virtual stages");
    Require.positive(microBatch, "micro batch");
    Require.positive(localBatch, "local batch");
    Require.that(recompute.equals("none") || recompute.equals("selective")
        || recompute.equals("full"), "recompute must be none, selective or full");
  }
}
