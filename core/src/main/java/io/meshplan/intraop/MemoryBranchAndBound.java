package io.meshplan.intraop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * Exact branch and bound for a small memory-bound ILP. It branches only on the nodes whose
 * strategies differ in the bytes they keep live ("memory nodes"), the ones whose choice moves
 * memory most first; once they are all fixed, memory is decided and the rest of the problem is
 * the memory-free ILP, which the exact reductions solve. At every branch node:
 *
 * <ul>
 *   <li>memory: with the unfixed nodes at their smallest bytes, a checked step over the budget
 *       prunes the branch;
 *   <li>bound: the memory-free optimum with the fixed nodes held (exact reductions, or their proven
 *       bound when a core needed CP-SAT) is a lower bound on every plan below; the branch is pruned
 *       when it cannot beat the best plan by more than a relative 1e-9;
 *   <li>leaf: when that memory-free optimum also fits in memory it is the branch's optimum.
 * </ul>
 *
 * Strategies are tried in the order of the memory-free optimum's choice first, then ascending
 * node cost, so the search is deterministic. Work is capped by a count of memory-free solves and a
 * deadline; a search cut short returns its best plan without claiming optimality. This is the
 * scheme of Land and Doig (Econometrica, 1960) with the relaxation of the issue that asks for it:
 * the exact pairwise problem instead of the LP.
 */
final class MemoryBranchAndBound {
  private final IlpProblem p;
  private final Function<IlpProblem, IlpSolution> relaxed;
  private final long maxSolves;
  private final int[] order;
  private final double[] minBytes;
  private final double[][] penalty;
  private final double penaltyOffset;
  private int[] best;
  private double bestObj;
  private long solves;
  private boolean cut;
  private long deadline;

  /**
   * The outcome.
   *
   * @param choice the best plan found (the start when nothing better was found)
   * @param objective its objective
   * @param proven whether the search finished, so the plan is optimal
   * @param solves memory-free solves spent
   */
  record Result(int[] choice, double objective, boolean proven, long solves) {}

  /**
   * Prepares the search.
   *
   * @param p the problem, with memory rows
   * @param relaxed an exact solver for memory-free problems (its bound is proven)
   * @param maxSolves the most memory-free solves to spend
   */
  MemoryBranchAndBound(IlpProblem p, Function<IlpProblem, IlpSolution> relaxed, long maxSolves,
      double[][] penalty, double penaltyOffset) {
    this.p = p;
    this.relaxed = relaxed;
    this.maxSolves = maxSolves;
    this.penalty = penalty;
    this.penaltyOffset = penaltyOffset;
    MemoryConstraint m = p.memory();
    minBytes = new double[m.itemCount()];
    for (int it = 0; it < m.itemCount(); it++) {
      minBytes[it] = Arrays.stream(m.itemBytes()[it]).min().orElse(0);
    }
    order = memoryMovers(p);
  }

  /**
   * The nodes whose layouts move memory, the most first: each node's spread of bytes between its
   * strategies, summed over its items and the checked steps they are live at; nodes of no spread
   * (a single strategy among them) are left out. Ties go to the smaller id.
   *
   * @param p a problem with memory rows
   * @return node ids
   */
  static int[] memoryMovers(IlpProblem p) {
    MemoryConstraint m = p.memory();
    double[] spread = new double[p.nodeCount()];
    for (int it = 0; it < m.itemCount(); it++) {
      double[] b = m.itemBytes()[it];
      double lo = Arrays.stream(b).min().orElse(0);
      double hi = Arrays.stream(b).max().orElse(0);
      spread[m.itemNode()[it]] += (hi - lo) * (m.stepsEnd(it) - m.stepsFrom(it));
    }
    List<Integer> nodes = new ArrayList<>();
    for (int v = 0; v < spread.length; v++) {
      if (spread[v] > 0) {
        nodes.add(v);
      }
    }
    nodes.sort(Comparator.comparingDouble((Integer v) -> -spread[v]).thenComparingInt(v -> v));
    return nodes.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * Searches.
   *
   * @param start a feasible plan (the incumbent)
   * @param deadlineNanos when to stop ({@link System#nanoTime()})
   * @return the best plan and whether it is proven optimal
   */
  Result solve(int[] start, long deadlineNanos) {
    best = start.clone();
    bestObj = SolutionEvaluator.evaluate(p, best).objective();
    deadline = deadlineNanos;
    int[] fixed = new int[p.nodeCount()];
    Arrays.fill(fixed, -1);
    branch(0, fixed);
    return new Result(best, bestObj, !cut, solves);
  }

  private void branch(int depth, int[] fixed) {
    if (cut || !fitsAtLeast(fixed)) {
      return;
    }
    if (solves >= maxSolves || System.nanoTime() > deadline) {
      cut = true;
      return;
    }
    solves++;
    IlpSolution r = relaxed.apply(restrict(fixed));
    if (!r.hasSolution()) {
      return;
    }
    if (r.bound() >= bestObj - 1e-9 * Math.abs(bestObj)) {
      return;
    }
    int[] x = expand(fixed, r.choice());
    Evaluation e = SolutionEvaluator.evaluate(p, x);
    if (e.feasible()) {
      if (e.objective() < bestObj) {
        best = x;
        bestObj = e.objective();
      }
      // The memory-free optimum fits: nothing below beats it, unless its bound was not proven.
      if (r.bound() >= e.objective() - 1e-9 * Math.abs(e.objective())) {
        return;
      }
    }
    if (depth == order.length) {
      return;
    }
    if (penalty != null) {
      solves++;
      IlpSolution q = relaxed.apply(restrictPenalized(fixed));
      if (q.hasSolution()) {
        if (q.bound() - penaltyOffset >= bestObj - 1e-9 * Math.abs(bestObj)) {
          return;
        }
        int[] y = expand(fixed, q.choice());
        Evaluation ey = SolutionEvaluator.evaluate(p, y);
        if (ey.feasible() && ey.objective() < bestObj) {
          best = y;
          bestObj = ey.objective();
        }
      }
    }
    int v = order[depth];
    Integer[] tries = new Integer[p.size(v)];
    for (int i = 0; i < tries.length; i++) {
      tries[i] = i;
    }
    double[] c = p.nodeCosts()[v];
    int first = x[v];
    Arrays.sort(tries, Comparator.comparingInt((Integer i) -> i == first ? 0 : 1)
        .thenComparingDouble(i -> c[i]).thenComparingInt(i -> i));
    for (int i : tries) {
      if (c[i] == Double.POSITIVE_INFINITY) {
        continue;
      }
      fixed[v] = i;
      branch(depth + 1, fixed);
      fixed[v] = -1;
      if (cut) {
        return;
      }
    }
  }

  /** Whether every checked step fits with the unfixed nodes at their fewest bytes. */
  private boolean fitsAtLeast(int[] fixed) {
    MemoryConstraint m = p.memory();
    double[] at = SolutionEvaluator.memoryAtSteps(m, it -> {
      int v = m.itemNode()[it];
      return fixed[v] >= 0 ? m.itemBytes()[it][fixed[v]] : minBytes[it];
    });
    for (double a : at) {
      if (a > m.budget()) {
        return false;
      }
    }
    return true;
  }

  /** A plan of the full problem from a choice of the restricted one. */
  private static int[] expand(int[] fixed, int[] choice) {
    int[] x = choice.clone();
    for (int v = 0; v < x.length; v++) {
      if (fixed[v] >= 0) {
        x[v] = fixed[v];
      }
    }
    return x;
  }

  /** {@link #restrict} with the Lagrangian penalty added to the node costs. */
  private IlpProblem restrictPenalized(int[] fixed) {
    int n = p.nodeCount();
    double[][] c = new double[n][];
    for (int v = 0; v < n; v++) {
      double[] base = p.nodeCosts()[v];
      if (fixed[v] >= 0) {
        c[v] = new double[] {base[fixed[v]] + penalty[v][fixed[v]]};
      } else {
        c[v] = new double[base.length];
        for (int i = 0; i < base.length; i++) {
          c[v][i] = base[i] + penalty[v][i];
        }
      }
    }
    return restrict(fixed, c);
  }

  /** The memory-free problem with each fixed node held at its strategy (index 0 of one). */
  private IlpProblem restrict(int[] fixed) {
    int n = p.nodeCount();
    double[][] c = new double[n][];
    for (int v = 0; v < n; v++) {
      c[v] = fixed[v] < 0 ? p.nodeCosts()[v] : new double[] {p.nodeCosts()[v][fixed[v]]};
    }
    return restrict(fixed, c);
  }

  private IlpProblem restrict(int[] fixed, double[][] c) {
    List<IlpEdge> edges = new ArrayList<>(p.edges().size());
    for (IlpEdge e : p.edges()) {
      int u = e.u();
      int v = e.v();
      if (fixed[u] < 0 && fixed[v] < 0) {
        edges.add(e);
        continue;
      }
      int sv = p.size(v);
      int ru = fixed[u] < 0 ? p.size(u) : 1;
      int rv = fixed[v] < 0 ? sv : 1;
      double[] m = e.raw();
      double[] r = new double[ru * rv];
      for (int i = 0; i < ru; i++) {
        for (int j = 0; j < rv; j++) {
          r[i * rv + j] = m[(fixed[u] < 0 ? i : fixed[u]) * sv + (fixed[v] < 0 ? j : fixed[v])];
        }
      }
      edges.add(new IlpEdge(u, v, r));
    }
    return new IlpProblem(c, edges, null);
  }
}
