package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.SolutionEvaluator;

/**
 * The reference solver: tries every assignment, in lexicographic order of strategy indices, and
 * keeps the first of the cheapest feasible ones. Only for tiny problems (tests).
 */
public final class ExhaustiveIlpSolver implements IlpSolver {
  private final long maxAssignments;

  /**
   * Creates the solver.
   *
   * @param maxAssignments refuse problems with more assignments than this
   */
  public ExhaustiveIlpSolver(long maxAssignments) {
    this.maxAssignments = maxAssignments;
  }

  @Override
  public IlpSolution solve(IlpProblem p) {
    long start = System.nanoTime();
    int n = p.nodeCount();
    long total = 1;
    for (int v = 0; v < n; v++) {
      total *= p.size(v);
      if (total > maxAssignments) {
        throw new IllegalArgumentException("too many assignments for exhaustive search");
      }
    }
    int[] cur = new int[n];
    int[] best = null;
    double bestObj = Double.POSITIVE_INFINITY;
    for (long k = 0; k < total; k++) {
      Evaluation e = SolutionEvaluator.evaluate(p, cur);
      if (e.feasible() && e.objective() < bestObj) {
        bestObj = e.objective();
        best = cur.clone();
      }
      for (int v = n - 1; v >= 0; v--) {
        if (++cur[v] < p.size(v)) {
          break;
        }
        cur[v] = 0;
      }
    }
    double secs = (System.nanoTime() - start) / 1e9;
    if (best == null) {
      return new IlpSolution(SolveStatus.INFEASIBLE, new int[0], Double.POSITIVE_INFINITY,
          Double.POSITIVE_INFINITY, secs, n);
    }
    return new IlpSolution(SolveStatus.OPTIMAL, best, bestObj, bestObj, secs, n);
  }
}
