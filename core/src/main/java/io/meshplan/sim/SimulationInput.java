package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.List;

/**
 * What the {@link PipelineSimulator} needs: the virtual stages in pipeline order, the schedule, the
 * number of microbatches, the price of a pipeline transfer, and the numbers that turn a time into
 * throughput and utilization.
 * <p>With {@code v = schedule.chunks()} and {@code p = stages.size() / v} device groups, virtual
 * stage {@code k} runs on group {@code k mod p} as its chunk {@code k / p} (Narayanan et al.,
 * SC'21, section 2.2.2). All chunks of one group must agree on devices, data and tensor
 * parallelism.
 *
 * @param stages the virtual stages in pipeline order
 * @param schedule the pipeline schedule
 * @param microbatches microbatches per iteration (per data-parallel replica)
 * @param p2p the price of a transfer between groups
 * @param totalGpus GPUs the job occupies (at least the sum of the groups' devices), for the per-GPU
 *     numbers
 * @param peakFlopsPerGpu dense peak of one GPU in the training precision, FLOP/s
 * @param tokensPerIteration tokens of the global batch (global batch size times sequence length)
 * @param ceilingFlopsPerGpu the fastest math one GPU can do in this job, FLOP/s: the dense peak,
 *     or the FP8 peak when GEMMs run in FP8 (MFU stays against {@code peakFlopsPerGpu})
 */
public record SimulationInput(List<StageCost> stages, Schedule schedule, int microbatches,
    P2pCost p2p, int totalGpus, double peakFlopsPerGpu, double tokensPerIteration,
    double ceilingFlopsPerGpu) {

  /**
   * A pipeline whose math runs no faster than the dense peak.
   *
   * @param stages the virtual stages in pipeline order
   * @param schedule the pipeline schedule
   * @param microbatches microbatches per iteration (per data-parallel replica)
   * @param p2p the price of a transfer between groups
   * @param totalGpus GPUs the job occupies
   * @param peakFlopsPerGpu dense peak of one GPU in the training precision, FLOP/s
   * @param tokensPerIteration tokens of the global batch
   */
  public SimulationInput(List<StageCost> stages, Schedule schedule, int microbatches,
      P2pCost p2p, int totalGpus, double peakFlopsPerGpu, double tokensPerIteration) {
    this(stages, schedule, microbatches, p2p, totalGpus, peakFlopsPerGpu, tokensPerIteration,
        peakFlopsPerGpu);
  }

  /** Copies the list and checks the sizes and the consistency of each group's chunks. */
  public SimulationInput {
    stages = List.copyOf(Require.nonNull(stages, "stages"));
    Require.nonNull(schedule, "schedule");
    Require.nonNull(p2p, "p2p");
    Require.that(!stages.isEmpty(), "the pipeline needs at least one stage");
    Require.positive(microbatches, "microbatches");
    Require.positive(totalGpus, "totalGpus");
    Require.that(peakFlopsPerGpu > 0 && Double.isFinite(peakFlopsPerGpu),
        () -> "peakFlopsPerGpu must be finite and positive, got " + peakFlopsPerGpu);
    Require.that(tokensPerIteration > 0 && Double.isFinite(tokensPerIteration),
        () -> "tokensPerIteration must be finite and positive, got " + tokensPerIteration);
    Require.that(ceilingFlopsPerGpu >= peakFlopsPerGpu && Double.isFinite(ceilingFlopsPerGpu),
        () -> "ceilingFlopsPerGpu must be finite and at least the peak, got " + ceilingFlopsPerGpu);
    int chunks = schedule.chunks();
    int virtual = stages.size();
    Require.that(virtual % chunks == 0, () -> virtual + " virtual stages cannot be split into "
        + chunks + " chunks per device group");
    int groups = virtual / chunks;
    long devices = 0;
    for (int k = 0; k < virtual; k++) {
      StageCost first = stages.get(k % groups);
      StageCost s = stages.get(k);
      if (s.devices() != first.devices() || s.dataParallel() != first.dataParallel()
          || s.tensorParallel() != first.tensorParallel()) {
        throw new IllegalArgumentException("virtual stage " + k + " runs on group "
            + (k % groups) + " but its parallelism (dp " + s.dataParallel() + ", tp "
            + s.tensorParallel() + ") differs from virtual stage " + (k % groups) + " (dp "
            + first.dataParallel() + ", tp " + first.tensorParallel() + ")");
      }
      if (k < groups) {
        devices += s.devices();
      }
    }
    long used = devices;
    Require.that(used <= totalGpus, () -> "the stages use " + used + " GPUs but totalGpus is "
        + totalGpus);
  }

  /**
   * The number of device groups (pipeline depth).
   *
   * @return groups
   */
  public int groups() {
    return stages.size() / schedule.chunks();
  }
}
