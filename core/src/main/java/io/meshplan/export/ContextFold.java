package io.meshplan.export;

import io.meshplan.plan.ParallelConfig;

/**
 * The configuration a framework without context parallelism runs on the same GPUs: each group of
 * {@code CP} GPUs that split one sequence becomes {@code CP} data-parallel replicas that each keep
 * whole sequences, so the data-parallel size is {@code DP x CP} and everything else stays.
 */
final class ContextFold {
  private ContextFold() {}

  /**
   * A configuration with its context-parallel GPUs folded into data parallelism.
   *
   * @param c the configuration
   * @return {@code c} itself without context parallelism, else the same GPUs as {@code DP x CP}
   *     replicas (the global batch may then not divide; {@link ExportInput} checks it)
   */
  static ParallelConfig fold(ParallelConfig c) {
    if (c.contextParallel() == 1) {
      return c;
    }
    return new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
        Math.multiplyExact(c.dataParallel(), c.contextParallel()), c.virtualStages(),
        c.microBatchSize(), c.globalBatchSize(), c.recompute(), c.sequenceParallel(),
        c.zeroStage(), c.firstStageLayers(), c.lastStageLayers(), c.expertParallel(),
        c.expertTensorParallel());
  }
}
