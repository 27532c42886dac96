package io.meshplan.sweep;

/** What became of a sweep point. */
public enum PointStatus {
  /** A plan (or Megatron-LM configuration) was found. */
  OK,
  /** Nothing fits in the GPUs' memory; the result says how much would be needed. */
  INFEASIBLE,
  /** The point ran past its time limit; the result carries a lower bound on the iteration time. */
  TIMED_OUT,
  /** The planner refused the combination (for example a global batch it cannot split). */
  REJECTED;

  /**
   * The name written to CSV and JSON Lines.
   *
   * @return e.g. "timed_out"
   */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
