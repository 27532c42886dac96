package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.List;

/**
 * Cutset conditioning (Pearl, Probabilistic Reasoning in Intelligent Systems, 1988) for a
 * memory-free core whose variable-elimination tables are too large: the node with the most
 * neighbours (ties: lowest id) is fixed to each of its finite-cost strategies in turn, which
 * removes it from the graph and lets the reductions run again; each branch is solved exactly
 * (reductions, then elimination, then conditioning again). The cheapest branch wins, the lowest
 * strategy on ties. The work is that of the branches, so a core whose elimination needs one table
 * of {@code s^4} entries around a node of degree 4 costs {@code s} branches of {@code s^3}.
 *
 * <p>All branches together may spend a budget of table evaluations; one conditioning object
 * spends it once.
 */
final class CutsetConditioning {
  private final long maxEliminationWork;
  private long budget;

  /**
   * Prepares one search.
   *
   * @param maxEliminationWork the most table evaluations of one elimination step
   * @param budget the most table evaluations of the reductions and eliminations of all branches
   */
  CutsetConditioning(long maxEliminationWork, long budget) {
    this.maxEliminationWork = maxEliminationWork;
    this.budget = budget;
  }

  /**
   * Solves a memory-free problem by conditioning.
   *
   * @param q a memory-free problem
   * @return an optimal choice (of infinite cost when there is no plan), or null when the budget
   *     runs out
   */
  int[] solve(IlpProblem q) {
    int n = q.nodeCount();
    int r = mostConnected(q);
    int[] best = null;
    double bestObj = Double.POSITIVE_INFINITY;
    long before = budget;
    int branches = 0;
    for (int s = 0; s < q.size(r); s++) {
      if (q.nodeCosts()[r][s] == Double.POSITIVE_INFINITY) {
        continue;
      }
      IlpProblem sub = fix(q, r, s);
      budget -= sub.edges().stream().mapToLong(IlpEdge::entries).sum();
      int[] x = exact(sub);
      if (x == null) {
        return null;
      }
      // Branches cost about the same: give up early when all of them would not fit the budget.
      if (branches++ == 0 && (double) (before - budget) * q.size(r) > before) {
        return null;
      }
      x[r] = s;
      double obj = SolutionEvaluator.evaluate(q, x).objective();
      if (best == null || obj < bestObj) {
        best = x;
        bestObj = obj;
      }
    }
    // Every strategy of r forbidden: no plan, which the caller's evaluation reports.
    return best == null ? new int[n] : best;
  }

  /** The node with the most edges, the lowest id on ties. */
  private static int mostConnected(IlpProblem q) {
    int n = q.nodeCount();
    int[] degree = new int[n];
    for (IlpEdge e : q.edges()) {
      degree[e.u()]++;
      degree[e.v()]++;
    }
    int r = 0;
    for (int v = 1; v < n; v++) {
      if (degree[v] > degree[r]) {
        r = v;
      }
    }
    return r;
  }

  /**
   * Solves a memory-free problem exactly: reductions, then elimination, then conditioning.
   *
   * @return an optimal choice, or null when the budget runs out
   */
  private int[] exact(IlpProblem q) {
    PbqpReductions r = PbqpReductions.reduce(q);
    budget -= r.work();
    if (budget < 0) {
      return null;
    }
    if (r.coreSize() == 0) {
      return r.backSubstitute(new int[0]);
    }
    IlpProblem cp = r.coreProblem();
    VariableElimination ve = new VariableElimination(Math.min(maxEliminationWork, budget), budget);
    int[] x = ve.solve(cp);
    if (x != null) {
      budget -= ve.plannedWork();
    } else {
      x = solve(cp);
      if (x == null) {
        return null;
      }
    }
    return r.backSubstitute(x);
  }

  /** The same problem with node r restricted to its strategy s (r keeps one strategy). */
  private static IlpProblem fix(IlpProblem q, int r, int s) {
    double[][] c = q.nodeCosts().clone();
    c[r] = new double[] {c[r][s]};
    List<IlpEdge> edges = new ArrayList<>(q.edges().size());
    for (IlpEdge e : q.edges()) {
      if (e.u() == r) {
        int sv = q.size(e.v());
        double[] row = new double[sv];
        for (int j = 0; j < sv; j++) {
          row[j] = e.cost(s, j, sv);
        }
        edges.add(new IlpEdge(e.u(), e.v(), row));
      } else if (e.v() == r) {
        int sv = q.size(r);
        int su = q.size(e.u());
        double[] col = new double[su];
        for (int i = 0; i < su; i++) {
          col[i] = e.cost(i, s, sv);
        }
        edges.add(new IlpEdge(e.u(), e.v(), col));
      } else {
        edges.add(e);
      }
    }
    return new IlpProblem(c, edges, null);
  }
}
