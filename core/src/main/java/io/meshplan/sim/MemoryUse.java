package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * Peak memory of one GPU by category, in bytes. {@link #totalBytes()} is the peak.
 *
 * @param weightsBytes parameters, bytes
 * @param gradientsBytes gradient buffers, bytes
 * @param optimizerStateBytes optimizer state, bytes
 * @param activationsBytes activations of the microbatches in flight at the worst moment, bytes
 * @param temporariesBytes transient buffers, bytes
 */
public record MemoryUse(double weightsBytes, double gradientsBytes, double optimizerStateBytes,
    double activationsBytes, double temporariesBytes) {

  /** Checks every size. */
  public MemoryUse {
    Require.nonNegative(weightsBytes, "weightsBytes");
    Require.nonNegative(gradientsBytes, "gradientsBytes");
    Require.nonNegative(optimizerStateBytes, "optimizerStateBytes");
    Require.nonNegative(activationsBytes, "activationsBytes");
    Require.nonNegative(temporariesBytes, "temporariesBytes");
  }

  /**
   * The peak: the sum of the categories.
   *
   * @return bytes per GPU
   */
  public double totalBytes() {
    return weightsBytes + gradientsBytes + optimizerStateBytes + activationsBytes
        + temporariesBytes;
  }
}
