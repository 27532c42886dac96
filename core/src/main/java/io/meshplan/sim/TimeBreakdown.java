package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * Where the iteration time of one device group goes, in seconds. The four main parts partition the
 * iteration: {@code compute + exposedCommunication + bubble + optimizer == iteration time} (up to
 * rounding). Of the compute, {@code recompute} is the recomputation; of the exposed communication,
 * {@code tensorParallel}, {@code pipeline} and {@code dataParallel} are the parts.
 *
 * @param computeSeconds forward and backward passes, without their exposed tensor-parallel
 *     communication, seconds
 * @param exposedCommunicationSeconds communication nothing else hides: collectives inside the
 *     passes, waits for a pipeline transfer in flight, and the gradient reduction and parameter
 *     all-gather after the last backward, seconds
 * @param bubbleSeconds idle time: waiting for another stage's compute, and after this group is done
 *     until the slowest group finishes, seconds
 * @param optimizerSeconds optimizer steps, seconds
 * @param recomputeSeconds the recomputation inside {@code computeSeconds}, seconds
 * @param tensorParallelSeconds exposed tensor-parallel communication, seconds
 * @param pipelineSeconds exposed pipeline send/receive, seconds
 * @param dataParallelSeconds exposed gradient reduction and parameter gather: after the last
 *     backward, and under ZeRO-2 and ZeRO-3 also inside every microbatch's passes, seconds
 * @param hiddenCommunicationSeconds communication that ran under the passes' compute, and the
 *     parameter gather under the next iteration's first forward; not part of the iteration's
 *     partition ({@link Overlap}), seconds
 * @param overlapSlowdownSeconds the compute time lost to that communication, inside {@code
 *     computeSeconds}, seconds
 * @param exchangeSeconds exposed expert-parallel all-to-alls and context-parallel K/V exchange,
 *     a part of the exposed communication beside the other three, seconds
 */
public record TimeBreakdown(double computeSeconds, double exposedCommunicationSeconds,
    double bubbleSeconds, double optimizerSeconds, double recomputeSeconds,
    double tensorParallelSeconds, double pipelineSeconds, double dataParallelSeconds,
    double hiddenCommunicationSeconds, double overlapSlowdownSeconds, double exchangeSeconds) {

  /** Checks every part. */
  public TimeBreakdown {
    Require.nonNegative(computeSeconds, "computeSeconds");
    Require.nonNegative(exposedCommunicationSeconds, "exposedCommunicationSeconds");
    Require.nonNegative(bubbleSeconds, "bubbleSeconds");
    Require.nonNegative(optimizerSeconds, "optimizerSeconds");
    Require.nonNegative(recomputeSeconds, "recomputeSeconds");
    Require.nonNegative(tensorParallelSeconds, "tensorParallelSeconds");
    Require.nonNegative(pipelineSeconds, "pipelineSeconds");
    Require.nonNegative(dataParallelSeconds, "dataParallelSeconds");
    Require.nonNegative(hiddenCommunicationSeconds, "hiddenCommunicationSeconds");
    Require.nonNegative(overlapSlowdownSeconds, "overlapSlowdownSeconds");
    Require.nonNegative(exchangeSeconds, "exchangeSeconds");
  }

  /**
   * The sum of the four main parts.
   *
   * @return seconds
   */
  public double totalSeconds() {
    return computeSeconds + exposedCommunicationSeconds + bubbleSeconds + optimizerSeconds;
  }
}
