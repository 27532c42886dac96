package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpProblem;

/**
 * Solves an {@link IlpProblem}. Implementations: {@link CpSatIlpSolver} (OR-Tools CP-SAT), {@link
 * ReducingIlpSolver} (exact PBQP reductions, then CP-SAT on the core), and {@link
 * ExhaustiveIlpSolver} (the reference for tiny problems).
 */
public interface IlpSolver {
  /**
   * Solves a problem.
   *
   * @param problem the problem
   * @return the solution; ties between equal objectives are broken deterministically
   */
  IlpSolution solve(IlpProblem problem);
}
