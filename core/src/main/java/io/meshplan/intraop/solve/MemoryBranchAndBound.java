package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Function;

/**
 * Exact branch and bound for a small memory-bound ILP. It branches only on the nodes whose
 * strategies differ in the bytes they keep live ("memory nodes"), the ones whose choice moves
 * memory most first, and on a node's groups of strategies that keep the same bytes on every item
 * rather than on single strategies (on a 2x4 mesh a matrix's 16 layouts keep one of 4 sizes); a
 * branch keeps the members of its group, and the memory-free solve chooses among them exactly.
 * Once every memory node is held to a group, memory is decided and the rest of the problem is the
 * memory-free ILP, which the exact reductions solve. At every branch node:
 *
 * <ul>
 *   <li>memory: with the free nodes at their smallest bytes, a checked step over the budget prunes
 *       the branch;
 *   <li>bound: the memory-free optimum with the held nodes restricted (exact reductions, or their
 *       proven bound when a core needed CP-SAT) is a lower bound on every plan below; the branch is
 *       pruned when it cannot beat the best plan by more than a relative 1e-9;
 *   <li>Lagrangian bound: with a penalty given, its scale is re-optimized for the branch by
 *       cutting planes ({@link #ascend}), every scale giving a proven bound;
 *   <li>leaf: when that memory-free optimum also fits in memory it is the branch's optimum.
 * </ul>
 *
 * Groups are tried with the memory-free optimum's group first, then by their cheapest node cost,
 * so the search is deterministic. Work is capped by a count of memory-free solves and a deadline; a
 * search cut short returns its best plan without claiming optimality. This is the scheme of Land
 * and Doig (Econometrica, 1960) with the relaxation of the issue that asks for it: the exact
 * pairwise problem instead of the LP.
 */
final class MemoryBranchAndBound {
  /** The most penalized solves one branch spends raising its Lagrangian bound. */
  static final int DUAL_STEPS = 4;

  private final IlpProblem p;
  private final Function<IlpProblem, IlpSolution> relaxed;
  private final long maxSolves;
  private final int[] order;
  /**
   * Per branched node, its strategies grouped by the bytes they keep live (equal on every one of
   * the node's items), each group in ascending strategy order; null for the other nodes.
   */
  private final int[][][] classes;
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
   * @param penalty a Lagrangian penalty per node and strategy (a multiplier times the bytes the
   *     strategy keeps live at the penalized steps), or null; the search scales it per branch
   * @param penaltyOffset the same multiplier times the budget times the number of those steps
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
    classes = memoryClasses(p, order);
  }

  /**
   * Groups each listed node's strategies by the bytes they keep live on every item of the node:
   * strategies of one group are alike for memory, so the search branches on the groups, and the
   * memory-free solve chooses among a group's members exactly.
   */
  private static int[][][] memoryClasses(IlpProblem p, int[] nodes) {
    MemoryConstraint m = p.memory();
    List<List<Integer>> itemsOf = new ArrayList<>();
    for (int v = 0; v < p.nodeCount(); v++) {
      itemsOf.add(new ArrayList<>());
    }
    for (int it = 0; it < m.itemCount(); it++) {
      itemsOf.get(m.itemNode()[it]).add(it);
    }
    int[][][] out = new int[p.nodeCount()][][];
    for (int v : nodes) {
      Map<List<Double>, List<Integer>> groups = new LinkedHashMap<>();
      for (int i = 0; i < p.size(v); i++) {
        List<Double> key = new ArrayList<>();
        for (int it : itemsOf.get(v)) {
          key.add(m.itemBytes()[it][i]);
        }
        groups.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
      }
      out[v] = groups.values().stream()
          .map(g -> g.stream().mapToInt(Integer::intValue).toArray()).toArray(int[][]::new);
    }
    return out;
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
    branch(0, fixed, 1);
    return new Result(best, bestObj, !cut, solves);
  }

  private void branch(int depth, int[] fixed, double tStart) {
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
    double tNext = tStart;
    if (penalty != null) {
      OptionalDouble dual = ascend(fixed, r.bound(), x, tStart);
      if (dual.isEmpty()) {
        return;
      }
      tNext = dual.getAsDouble();
    }
    branchOnGroups(depth, fixed, x, tNext);
  }

  /**
   * Holds the node of this depth to each of its groups in turn: the group of the memory-free
   * optimum {@code x} first, then by their cheapest node cost, then by index; groups of only
   * forbidden strategies are skipped.
   */
  private void branchOnGroups(int depth, int[] fixed, int[] x, double tNext) {
    int v = order[depth];
    int[][] groups = classes[v];
    double[] c = p.nodeCosts()[v];
    double[] cheapest = new double[groups.length];
    int first = -1;
    Integer[] tries = new Integer[groups.length];
    for (int k = 0; k < groups.length; k++) {
      tries[k] = k;
      cheapest[k] = Double.POSITIVE_INFINITY;
      for (int i : groups[k]) {
        cheapest[k] = Math.min(cheapest[k], c[i]);
        if (i == x[v]) {
          first = k;
        }
      }
    }
    int firstGroup = first;
    Arrays.sort(tries, Comparator.comparingInt((Integer k) -> k == firstGroup ? 0 : 1)
        .thenComparingDouble(k -> cheapest[k]).thenComparingInt(k -> k));
    for (int k : tries) {
      if (cheapest[k] == Double.POSITIVE_INFINITY) {
        continue;
      }
      fixed[v] = k;
      branch(depth + 1, fixed, tNext);
      fixed[v] = -1;
      if (cut) {
        return;
      }
    }
  }

  /**
   * Raises the branch's Lagrangian bound {@code L(t) = min_x (c(x) + t (P(x) - offset))} over the
   * scale {@code t >= 0} of the penalty (P the penalty of a plan, {@code t = 1} the multiplier the
   * caller gave), with the fixed nodes held. {@code L} is concave and every evaluation is a proven
   * lower bound, so the search is Kelley's cutting planes (Kelley, J. SIAM 1960) on one variable:
   * the scale grows four-fold while the slope {@code P(x) - offset} stays positive, and then moves
   * to where the tangents of the two bracketing evaluations cross. It stops as soon as a bound
   * prunes the branch, when the crossing (an upper estimate of the best bound any scale can give)
   * cannot prune it, or after {@link #DUAL_STEPS} solves. Every penalized plan that fits memory is
   * also offered as an incumbent.
   *
   * @param fixed the group each held node is restricted to (-1 for free)
   * @param bound0 the bound at scale 0 (the memory-free optimum with the fixed nodes held)
   * @param x0 that optimum's plan
   * @param tStart the first scale to try (the parent's best)
   * @return the scale of the best bound found (for the children), or empty when the
   *     branch is pruned
   */
  private OptionalDouble ascend(int[] fixed, double bound0, int[] x0, double tStart) {
    double ta = 0;
    double la = bound0;
    double ga = penaltyOf(x0) - penaltyOffset;
    if (!(ga > 0)) {
      // L(t) <= L(0) + t * ga <= L(0): no scale raises the bound.
      return OptionalDouble.of(tStart);
    }
    double th = Double.NaN;
    double lh = 0;
    double gh = 0;
    double bestT = tStart;
    double bestL = la;
    double t = tStart > 0 ? tStart : 1;
    for (int k = 0; k < DUAL_STEPS; k++) {
      if (solves >= maxSolves || System.nanoTime() > deadline) {
        break;
      }
      solves++;
      IlpSolution q = relaxed.apply(restrictPenalized(fixed, t));
      if (!q.hasSolution()) {
        break;
      }
      int[] y = expand(fixed, q.choice());
      offer(y);
      double lt = q.bound() - t * penaltyOffset;
      if (lt >= bestObj - 1e-9 * Math.abs(bestObj)) {
        return OptionalDouble.empty();
      }
      if (lt > bestL) {
        bestL = lt;
        bestT = t;
      }
      double g = penaltyOf(y) - penaltyOffset;
      if (g > 0) {
        ta = t;
        la = lt;
        ga = g;
      } else {
        th = t;
        lh = lt;
        gh = g;
      }
      if (Double.isNaN(th)) {
        t *= 4;
        continue;
      }
      // The tangents at ta (rising) and th (falling) cross above the concave L's maximum.
      double cross = (lh - la + ga * ta - gh * th) / (ga - gh);
      double upper = la + ga * (cross - ta);
      if (upper < bestObj - 1e-9 * Math.abs(bestObj) || !(cross > ta && cross < th)) {
        break;
      }
      t = cross;
    }
    return OptionalDouble.of(bestT);
  }

  /** Keeps a plan as the incumbent when it fits memory and is cheaper. */
  private void offer(int[] y) {
    Evaluation ey = SolutionEvaluator.evaluate(p, y);
    if (ey.feasible() && ey.objective() < bestObj) {
      best = y;
      bestObj = ey.objective();
    }
  }

  /** The penalty of a whole plan: the sum of its nodes' entries (0 without a penalty). */
  private double penaltyOf(int[] x) {
    double s = 0;
    for (int v = 0; v < x.length; v++) {
      s += penalty[v][x[v]];
    }
    return s;
  }

  /** Whether every checked step fits with the unfixed nodes at their fewest bytes. */
  private boolean fitsAtLeast(int[] fixed) {
    MemoryConstraint m = p.memory();
    double[] at = SolutionEvaluator.memoryAtSteps(m, it -> {
      int v = m.itemNode()[it];
      return fixed[v] >= 0 ? m.itemBytes()[it][classes[v][fixed[v]][0]] : minBytes[it];
    });
    for (double a : at) {
      if (a > m.budget()) {
        return false;
      }
    }
    return true;
  }

  /** A plan of the full problem from a choice of the restricted one. */
  private int[] expand(int[] fixed, int[] choice) {
    int[] x = choice.clone();
    for (int v = 0; v < x.length; v++) {
      if (fixed[v] >= 0) {
        x[v] = classes[v][fixed[v]][choice[v]];
      }
    }
    return x;
  }

  /** {@link #restrict} with the Lagrangian penalty, scaled by {@code t}, added to the costs. */
  private IlpProblem restrictPenalized(int[] fixed, double t) {
    int n = p.nodeCount();
    double[][] c = new double[n][];
    for (int v = 0; v < n; v++) {
      double[] base = p.nodeCosts()[v];
      c[v] = new double[base.length];
      for (int i = 0; i < base.length; i++) {
        c[v][i] = base[i] + t * penalty[v][i];
      }
    }
    return restrict(fixed, c);
  }

  /** The memory-free problem with each fixed node held to the strategies of its group. */
  private IlpProblem restrict(int[] fixed) {
    return restrict(fixed, p.nodeCosts());
  }

  /**
   * The memory-free problem with costs {@code c} in which each fixed node keeps only the members
   * of its group (renumbered from 0 in ascending order).
   */
  private IlpProblem restrict(int[] fixed, double[][] c) {
    int n = p.nodeCount();
    double[][] rc = new double[n][];
    for (int v = 0; v < n; v++) {
      if (fixed[v] < 0) {
        rc[v] = c[v];
      } else {
        int[] keep = classes[v][fixed[v]];
        rc[v] = new double[keep.length];
        for (int i = 0; i < keep.length; i++) {
          rc[v][i] = c[v][keep[i]];
        }
      }
    }
    List<IlpEdge> edges = new ArrayList<>(p.edges().size());
    for (IlpEdge e : p.edges()) {
      int u = e.u();
      int v = e.v();
      if (fixed[u] < 0 && fixed[v] < 0) {
        edges.add(e);
        continue;
      }
      int sv = p.size(v);
      int[] ku = fixed[u] < 0 ? null : classes[u][fixed[u]];
      int[] kv = fixed[v] < 0 ? null : classes[v][fixed[v]];
      int ru = ku == null ? p.size(u) : ku.length;
      int rv = kv == null ? sv : kv.length;
      double[] r = new double[ru * rv];
      for (int i = 0; i < ru; i++) {
        int row = ku == null ? i : ku[i];
        for (int j = 0; j < rv; j++) {
          r[i * rv + j] = e.cost(row, kv == null ? j : kv[j], sv);
        }
      }
      edges.add(new IlpEdge(u, v, r));
    }
    return new IlpProblem(rc, edges, null);
  }
}
