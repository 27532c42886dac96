package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The timing of one device group (pipeline stage) in a simulated iteration.
 *
 * @param group the group
 * @param busyComputeSeconds total length of its forward and backward events, seconds
 * @param computeEndSeconds when its last backward ends, seconds
 * @param endSeconds when its last event (optimizer or parameter gather) ends, seconds
 * @param breakdown where the iteration time goes on this group; sums to the iteration time
 * @param peakInFlightMicrobatches the largest number of (chunk, microbatch) pairs whose forward has
 *     started and whose backward has not ended, read from the events
 * @param peakActivationBytes the largest activation memory per GPU over time, bytes
 */
public record GroupTiming(int group, double busyComputeSeconds, double computeEndSeconds,
    double endSeconds, TimeBreakdown breakdown, int peakInFlightMicrobatches,
    double peakActivationBytes) {

  /** Checks the numbers. */
  public GroupTiming {
    Require.that(group >= 0, () -> "group must be >= 0, got " + group);
    Require.nonNegative(busyComputeSeconds, "busyComputeSeconds");
    Require.nonNegative(computeEndSeconds, "computeEndSeconds");
    Require.nonNegative(endSeconds, "endSeconds");
    Require.nonNull(breakdown, "breakdown");
    Require.that(peakInFlightMicrobatches >= 0, "peakInFlightMicrobatches must be >= 0");
    Require.nonNegative(peakActivationBytes, "peakActivationBytes");
  }
}
