package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * Memory of one pipeline stage (or model chunk) on one GPU, by category, all in bytes. Activations
 * are given per microbatch: the simulator multiplies them by the number of microbatches in flight,
 * which it reads from the schedule's events (Narayanan et al., SC'21, section 2.2; Korthikanti et
 * al., MLSys'23, for the activation sizes).
 *
 * @param weightsBytes parameters held by one GPU, bytes
 * @param gradientsBytes gradient buffers held by one GPU, bytes
 * @param optimizerStateBytes optimizer state (Adam moments, fp32 master copy) held by one GPU,
 *     bytes
 * @param activationBytesPerMicrobatch activations kept from a forward until its backward for one
 *     microbatch, bytes per GPU
 * @param temporaryBytes transient buffers of the op that runs (workspace, communication buffers),
 *     bytes per GPU
 */
public record MemoryBreakdown(double weightsBytes, double gradientsBytes,
    double optimizerStateBytes, double activationBytesPerMicrobatch, double temporaryBytes) {

  /** Checks that every size is finite and not negative. */
  public MemoryBreakdown {
    Require.nonNegative(weightsBytes, "weightsBytes");
    Require.nonNegative(gradientsBytes, "gradientsBytes");
    Require.nonNegative(optimizerStateBytes, "optimizerStateBytes");
    Require.nonNegative(activationBytesPerMicrobatch, "activationBytesPerMicrobatch");
    Require.nonNegative(temporaryBytes, "temporaryBytes");
  }

  /**
   * Weights, gradients and optimizer state: the part that does not depend on the schedule.
   *
   * @return bytes per GPU
   */
  public double persistentBytes() {
    return weightsBytes + gradientsBytes + optimizerStateBytes;
  }
}
