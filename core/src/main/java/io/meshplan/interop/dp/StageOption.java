package io.meshplan.interop.dp;

import io.meshplan.util.Require;

/**
 * One way to run a layer range as a pipeline stage on a submesh (for example with one logical mesh
 * shape and its intra-op plan).
 *
 * @param latencySeconds forward plus backward of one microbatch, seconds
 * @param staticBytes weights, gradients, optimizer state and temporaries per GPU, bytes
 * @param activationBytes activations kept for one microbatch until its backward, bytes per GPU
 * @param tag the caller's index into its own list of candidates; the DP only carries it
 */
public record StageOption(double latencySeconds, double staticBytes, double activationBytes,
    int tag) {

  /** Checks the numbers. */
  public StageOption {
    Require.nonNegative(latencySeconds, "latencySeconds");
    Require.nonNegative(staticBytes, "staticBytes");
    Require.nonNegative(activationBytes, "activationBytes");
  }

  /**
   * Memory per GPU when {@code inFlight} microbatches are in flight (1F1B).
   *
   * @param inFlight microbatches in flight
   * @return bytes per GPU
   */
  public double memoryBytes(int inFlight) {
    return staticBytes + inFlight * activationBytes;
  }
}
