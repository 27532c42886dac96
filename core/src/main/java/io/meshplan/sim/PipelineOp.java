package io.meshplan.sim;

/**
 * One compute op in a device group's schedule: the forward or backward pass of one microbatch
 * through one of the group's model chunks.
 *
 * @param chunk the model chunk on the group, 0-based (always 0 without interleaving); the virtual
 *     stage is {@code chunk * groups + group}
 * @param microbatch the microbatch, 0-based
 * @param forward true for the forward pass, false for the backward pass
 */
public record PipelineOp(int chunk, int microbatch, boolean forward) {
  /** Checks the indices. */
  public PipelineOp {
    if (chunk < 0 || microbatch < 0) {
      throw new IllegalArgumentException("chunk and microbatch must be >= 0, got " + chunk + ", "
          + microbatch);
    }
  }

  /**
   * A forward op.
   *
   * @param chunk the chunk
   * @param microbatch the microbatch
   * @return the op
   */
  public static PipelineOp forward(int chunk, int microbatch) {
    return new PipelineOp(chunk, microbatch, true);
  }

  /**
   * A backward op.
   *
   * @param chunk the chunk
   * @param microbatch the microbatch
   * @return the op
   */
  public static PipelineOp backward(int chunk, int microbatch) {
    return new PipelineOp(chunk, microbatch, false);
  }

  @Override
  public String toString() {
    return (forward ? "F" : "B") + microbatch + (chunk == 0 ? "" : "c" + chunk);
  }
}
