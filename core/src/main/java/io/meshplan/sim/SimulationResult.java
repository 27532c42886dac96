package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.List;

/**
 * The outcome of simulating one training iteration.
 *
 * <p>The breakdown is that of the <em>critical group</em>: the device group whose last event ends
 * last (the lowest index among equals). Its parts add up to the iteration time (see {@link
 * TimeBreakdown}). Throughput numbers: {@code tokensPerSecond = tokensPerIteration /
 * iterationSeconds}; {@code tflopsPerGpu = modelFlops / iterationSeconds / totalGpus / 1e12} with
 * {@code modelFlops = sum over virtual stages of modelFlopsPerMicrobatch * microbatches *
 * dataParallel}; {@code hardwareTflopsPerGpu} the same with recomputation; {@code mfu = modelFlops
 * / (iterationSeconds * totalGpus * peakFlopsPerGpu)} (Chowdhery et al., PaLM, appendix B).
 *
 * @param schedule the schedule's name
 * @param microbatches microbatches per iteration
 * @param iterationSeconds time of one iteration, seconds
 * @param criticalGroup the group the breakdown is from
 * @param breakdown the critical group's breakdown, seconds
 * @param tokensPerSecond tokens per second
 * @param modelFlopsPerIteration model FLOPs of one iteration over all GPUs
 * @param tflopsPerGpu model TFLOP/s per GPU (10^12 FLOP/s)
 * @param hardwareTflopsPerGpu hardware TFLOP/s per GPU, with recomputation
 * @param mfu model FLOPs utilization, between 0 and 1
 * @param peakMemoryBytesPerGpu the largest peak memory of any GPU, bytes
 * @param memoryGroup the group with that peak
 * @param memory that group's peak by category, bytes per GPU
 * @param stages per-group results, by group index
 * @param timeline the events and per-group timings
 * @param commBytes bytes all GPUs of the pipeline send in one iteration, by axis: the sum over
 *     groups of {@link StageResult#commBytesPerGpu()} times the group's devices
 */
public record SimulationResult(String schedule, int microbatches, double iterationSeconds,
    int criticalGroup, TimeBreakdown breakdown, double tokensPerSecond,
    double modelFlopsPerIteration, double tflopsPerGpu, double hardwareTflopsPerGpu, double mfu,
    double peakMemoryBytesPerGpu, int memoryGroup, MemoryUse memory, List<StageResult> stages,
    Timeline timeline, CommVolume commBytes) {

  /** Copies the list and checks the numbers. */
  public SimulationResult {
    Require.nonNull(schedule, "schedule");
    stages = List.copyOf(stages);
    Require.nonNegative(iterationSeconds, "iterationSeconds");
    Require.nonNull(breakdown, "breakdown");
    Require.nonNegative(tokensPerSecond, "tokensPerSecond");
    Require.nonNegative(modelFlopsPerIteration, "modelFlopsPerIteration");
    Require.nonNegative(tflopsPerGpu, "tflopsPerGpu");
    Require.nonNegative(hardwareTflopsPerGpu, "hardwareTflopsPerGpu");
    Require.nonNegative(mfu, "mfu");
    Require.nonNegative(peakMemoryBytesPerGpu, "peakMemoryBytesPerGpu");
    Require.nonNull(memory, "memory");
    Require.nonNull(timeline, "timeline");
    Require.nonNull(commBytes, "commBytes");
  }

  /**
   * The mean communication volume per GPU of the pipeline: {@link #commBytes()} over the GPUs
   * the stages use.
   *
   * @return bytes per GPU per iteration, by axis
   */
  public CommVolume commBytesPerGpu() {
    long gpus = 0;
    for (StageResult s : stages) {
      gpus += s.devices();
    }
    return commBytes.times(1.0 / gpus);
  }
}
