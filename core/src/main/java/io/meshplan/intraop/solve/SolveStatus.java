package io.meshplan.intraop.solve;

/** The outcome of a solve. */
public enum SolveStatus {
  /** Proven optimal. */
  OPTIMAL,
  /** A feasible solution, not proven optimal (time limit). */
  FEASIBLE,
  /** Proven to have no feasible solution. */
  INFEASIBLE,
  /** No solution found within the limits, and infeasibility not proven. */
  UNKNOWN
}
