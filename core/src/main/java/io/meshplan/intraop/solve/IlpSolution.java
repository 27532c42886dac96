package io.meshplan.intraop.solve;

/**
 * A solver's answer.
 *
 * @param status the outcome
 * @param choice the strategy index per node (empty unless OPTIMAL or FEASIBLE)
 * @param objective the objective of {@code choice}, recomputed in double precision
 * @param bound a proven lower bound on the optimum
 * @param seconds wall time of the solve, seconds
 * @param coreNodes the nodes left for the general solver after exact reductions
 */
public record IlpSolution(
    SolveStatus status, int[] choice, double objective, double bound, double seconds,
    int coreNodes) {
  /** Copies the choice. */
  public IlpSolution {
    choice = choice.clone();
  }

  @Override
  public int[] choice() {
    return choice.clone();
  }

  /**
   * Whether a solution is present.
   *
   * @return true for OPTIMAL or FEASIBLE
   */
  public boolean hasSolution() {
    return status == SolveStatus.OPTIMAL || status == SolveStatus.FEASIBLE;
  }
}
