package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.Arrays;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Handles a binding memory bound by Lagrangian relaxation (Fisher, Management Science 1981): the
 * memory rows of chosen steps are moved into the objective with one multiplier {@code mu >= 0},
 * and the penalized problem, which keeps the pairwise structure, is solved exactly by the
 * memory-free solver given. A row joins the chosen set only when a plan fits every chosen row but
 * breaks another, so plans below the multiplier stay infeasible for the chosen rows. A
 * cutting-plane search on {@code mu} (Kelley; bisection as a fallback) brackets the critical
 * multiplier; every evaluation also gives a valid lower bound {@code min_x (obj(x) + mu * sum_t
 * (mem_t(x) - M))}. The two bracketing plans are then mixed by a node threshold ({@link
 * #mixedThreshold}), which finds the block-wise plans a single multiplier cannot; the best plan is
 * improved by feasible single-node moves, and the last infeasible plan of the search is repaired by
 * the moves that free the most memory per unit of cost ({@link LocalSearch}). It is OPTIMAL when
 * the bound meets it; otherwise small problems go to {@link MemoryBranchAndBound} (exact when it
 * finishes within its budget) and then, if it did not, to CP-SAT with the plan as a hint to close
 * the gap (under a deterministic-time limit), and large ones get a large-neighbourhood search
 * around their largest memory movers ({@link WindowSearch}) and are returned as FEASIBLE with the
 * bound.
 *
 * <p>One object runs one search: it keeps the multiplier bracket, the chosen rows and the best
 * plan as it goes.
 */
final class LagrangianMemory {
  /**
   * CP-SAT's deterministic-time limit when closing a small problem's gap, so that the answer does
   * not depend on the machine's load (with one worker).
   */
  static final double CLOSE_GAP_WORK = 20.0;

  /**
   * The most memory-free solves the branch and bound of a small problem may spend before CP-SAT
   * takes over ({@link MemoryBranchAndBound}).
   */
  static final long BRANCH_AND_BOUND_SOLVES = 5_000;

  /** Nodes in one window of the large-neighbourhood search of large problems. */
  static final int WINDOW_NODES = 64;

  /** The most memory-free solves one window's branch and bound may spend. */
  static final long WINDOW_SOLVES = 5_000;

  /** The most multipliers the search evaluates. */
  private static final int MAX_ITERATIONS = 60;

  private final IlpProblem p;
  private final MemoryConstraint m;
  private final int n;
  private final Function<IlpProblem, IlpSolution> relaxed;
  private final double timeLimitSeconds;
  private final int workers;
  private final int smallForCpSat;
  private final long start;

  private final TreeSet<Integer> rows = new TreeSet<>();
  private double[][] w;
  private int[] best;
  private double bestObj = Double.POSITIVE_INFINITY;
  private double bound;
  /** The largest multiplier whose plan breaks the chosen rows (0: none yet). */
  private double lo;
  /** The smallest multiplier whose plan fits (0: none yet). */
  private double hi;
  private double mu;
  private int[] lastInfeasible;
  private int[] feasibleAtHi;
  private double objLo;
  private double objHi;

  /**
   * Prepares one search.
   *
   * @param p the problem, with its memory bound
   * @param relaxed an exact solver for memory-free problems (its bound is proven unless CP-SAT
   *     stopped early on a core)
   * @param timeLimitSeconds the time limit of the whole solve, seconds
   * @param workers CP-SAT search workers
   * @param smallForCpSat problems with at most this many nodes get the branch and bound and
   *     CP-SAT to close the gap; larger ones get the window search
   * @param start when the solve started ({@link System#nanoTime()})
   */
  LagrangianMemory(IlpProblem p, Function<IlpProblem, IlpSolution> relaxed,
      double timeLimitSeconds, int workers, int smallForCpSat, long start) {
    this.p = p;
    this.m = p.memory();
    this.n = p.nodeCount();
    this.relaxed = relaxed;
    this.timeLimitSeconds = timeLimitSeconds;
    this.workers = workers;
    this.smallForCpSat = smallForCpSat;
    this.start = start;
  }

  /**
   * Searches from the optimum of the memory-free relaxation.
   *
   * @param relaxedChoice the relaxation's optimal plan, which fits no memory bound
   * @param relaxedBound the relaxation's proven bound (its optimum unless CP-SAT stopped early on
   *     its core)
   * @return the best plan found, OPTIMAL when the bound meets it
   */
  IlpSolution solve(int[] relaxedChoice, double relaxedBound) {
    addViolated(m, relaxedChoice, rows);
    w = weights(p, rows);
    bound = relaxedBound;
    // Start where a whole-budget change of memory weighs like the largest single cost.
    double maxCoef = Math.max(bound, p.maxFiniteCost());
    mu = Math.max(maxCoef, 1e-12) / Math.max(1.0, m.budget());
    lastInfeasible = relaxedChoice;
    for (int iter = 0; iter < MAX_ITERATIONS && !timeUp(); iter++) {
      if (!iterate()) {
        break;
      }
    }
    if (best != null && lo > 0 && gapOpen()) {
      mixBracket();
    }
    if (best == null) {
      return wholeByCpSat(relaxedChoice);
    }
    if (gapOpen()) {
      polish();
    }
    if (gapOpen() && n > smallForCpSat) {
      searchWindows();
    }
    if (gapClosed()) {
      return optimal();
    }
    if (n <= smallForCpSat) {
      Optional<IlpSolution> closed = closeSmallGap();
      if (closed.isPresent()) {
        return closed.get();
      }
    }
    return new IlpSolution(SolveStatus.FEASIBLE, best, bestObj, bound, seconds(), n);
  }

  /**
   * Solves the problem penalized at the current multiplier, keeps its plan and bound, and moves
   * the multiplier.
   *
   * @return false when the search is done
   */
  private boolean iterate() {
    IlpSolution penalizedSolution = relaxed.apply(penalized(p, w, mu));
    int[] x = penalizedSolution.choice();
    double penalizedObj = penalizedSolution.bound();
    bound = Math.max(bound, penalizedObj - mu * rows.size() * m.budget());
    Evaluation e = SolutionEvaluator.evaluate(p, x);
    boolean repeat;
    if (e.feasible()) {
      if (e.objective() < bestObj) {
        bestObj = e.objective();
        best = x;
      }
      repeat = feasibleAtHi != null && Arrays.equals(x, feasibleAtHi);
      feasibleAtHi = x;
      objHi = e.objective();
      hi = mu;
    } else {
      repeat = lo > 0 && Arrays.equals(x, lastInfeasible);
      lastInfeasible = x;
      objLo = e.objective();
      if (addedRow(x)) {
        return true;
      }
      lo = mu;
    }
    return nextMultiplier(repeat);
  }

  /**
   * Chooses a new row when a plan fits every chosen row but breaks another; a new row changes the
   * penalty, so the bracket is rebuilt for the new weights.
   *
   * @return whether a row was added
   */
  private boolean addedRow(int[] x) {
    int before = rows.size();
    if (!violatesAny(m, x, rows)) {
      addViolated(m, x, rows);
    }
    if (rows.size() == before) {
      return false;
    }
    w = weights(p, rows);
    lastInfeasible = x;
    lo = 0;
    hi = 0;
    feasibleAtHi = null;
    return true;
  }

  /**
   * Moves the multiplier: four-fold up or down until both sides of the bracket are known, then
   * to where Kelley's cutting planes cross.
   *
   * @param repeat whether the last plan repeats the previous one on its side of the bracket
   * @return false when the search is done
   */
  private boolean nextMultiplier(boolean repeat) {
    if (best != null && gapClosed()) {
      return false;
    }
    if (hi == 0) {
      mu *= 4;
      return true;
    }
    if (lo == 0) {
      mu = hi / 4;
      return true;
    }
    if (repeat || hi / lo < 1 + 1e-6) {
      return false;
    }
    // Kelley's cutting plane on the one-dimensional dual: the next multiplier is where the
    // lines obj(x) + mu * g(x) of the bracketing plans cross.
    double gLo = excess(m, lastInfeasible, rows);
    double gHi = excess(m, feasibleAtHi, rows);
    double cross = gLo > gHi ? (objHi - objLo) / (gLo - gHi) : Double.NaN;
    mu = cross > lo * 1.0005 && cross < hi / 1.0005 ? cross : Math.sqrt(lo * hi);
    return true;
  }

  /** Keeps the threshold mix of the bracketing plans when it is cheaper. */
  private void mixBracket() {
    double exLo = SolutionEvaluator.evaluate(p, lastInfeasible).peakMemoryBytes() - m.budget();
    double exHi = SolutionEvaluator.evaluate(p, feasibleAtHi).peakMemoryBytes() - m.budget();
    int[] mixed = mixedThreshold(new double[] {lo, hi, exLo, exHi});
    if (mixed != null) {
      double obj = SolutionEvaluator.evaluate(p, mixed).objective();
      if (obj < bestObj) {
        bestObj = obj;
        best = mixed;
      }
    }
  }

  /** No multiplier gave a plan that fits: the whole problem goes to CP-SAT. */
  private IlpSolution wholeByCpSat(int[] relaxedChoice) {
    IlpSolution full = new CpSatIlpSolver(
        Math.max(1.0, timeLimitSeconds - (System.nanoTime() - start) / 1e9), workers,
        relaxedChoice).solve(p);
    return new IlpSolution(full.status(), full.choice(), full.objective(), full.bound(),
        seconds(), n);
  }

  /** Improves the best plan by single-node moves and repairs the last plan that did not fit. */
  private void polish() {
    LocalSearch ls = new LocalSearch(p);
    best = ls.improve(best, deadline());
    bestObj = SolutionEvaluator.evaluate(p, best).objective();
    int[] repaired = ls.repair(lastInfeasible, deadline());
    if (repaired != null) {
      Evaluation re = SolutionEvaluator.evaluate(p, repaired);
      if (re.feasible() && re.objective() < bestObj) {
        best = repaired;
        bestObj = re.objective();
      }
    }
  }

  /** The large-neighbourhood search of large problems around their largest memory movers. */
  private void searchWindows() {
    best = new WindowSearch(p, WINDOW_NODES, WINDOW_SOLVES, relaxed, scaled(w, hi),
        hi * rows.size() * m.budget()).improve(best, deadline());
    bestObj = SolutionEvaluator.evaluate(p, best).objective();
  }

  /**
   * The branch and bound of a small problem and, when it does not finish, CP-SAT from the best
   * plan. The Lagrangian penalty at the smallest multiplier whose plan fits strengthens the bound
   * of every branch (none when the search found no such multiplier).
   *
   * @return the answer, or empty when CP-SAT found nothing better than the best plan
   */
  private Optional<IlpSolution> closeSmallGap() {
    double[][] pen = scaled(w, hi);
    MemoryBranchAndBound.Result bb = new MemoryBranchAndBound(p, relaxed,
        BRANCH_AND_BOUND_SOLVES, pen, hi * rows.size() * m.budget()).solve(best, deadline());
    if (bb.objective() < bestObj) {
      best = bb.choice();
      bestObj = bb.objective();
    }
    if (bb.proven()) {
      return Optional.of(optimal());
    }
    IlpSolution full = new CpSatIlpSolver(
        Math.max(1.0, timeLimitSeconds - (System.nanoTime() - start) / 1e9), workers, best,
        CLOSE_GAP_WORK).solve(p);
    if (full.hasSolution() && full.objective() <= bestObj) {
      return Optional.of(new IlpSolution(full.status(), full.choice(), full.objective(),
          Math.max(bound, full.bound()), seconds(), n));
    }
    return Optional.empty();
  }

  /**
   * Mixes the two plans that bracket the critical multiplier. In a model of repeated identical
   * blocks every block makes the same choice at one multiplier, so the plans on either side of it
   * differ by whole blocks' worth of memory, and the cheapest feasible plan lies between them: some
   * blocks as in the memory-light plan, the rest as in the cheap one. Nodes with id below a
   * threshold {@code t} get the high multiplier and the others the low one; each such penalized
   * problem is still pairwise and is solved exactly by the reductions, so the border between the
   * two parts is priced exactly. The smallest fitting threshold is searched by false position on
   * the peak excess over the budget (Illinois variant; Dowell and Jarratt, BIT 1971), which is
   * about linear in {@code t} for repeated blocks, with bisection whenever an interpolated step
   * would not shrink the bracket by a quarter.
   *
   * @param bracket the multiplier whose plan does not fit, the one whose plan fits, and their
   *     plans' peak excess over the budget (bytes)
   * @return the feasible plan at the smallest fitting threshold found, improved by single-node
   *     moves, or null when time runs out first
   */
  private int[] mixedThreshold(double[] bracket) {
    double muLo = bracket[0];
    double muHi = bracket[1];
    int low = 0;
    int high = n;
    double exLow = bracket[2];
    double exHigh = bracket[3];
    int[] feasible = null;
    double[] muOf = new double[n];
    boolean bisect = false;
    while (high - low > 1) {
      if (System.nanoTime() - start > timeLimitSeconds * 1e9) {
        break;
      }
      int t = (low + high) >>> 1;
      if (!bisect && exLow > 0 && exHigh <= 0) {
        double guess = low + (high - low) * exLow / (exLow - exHigh);
        t = (int) Math.max(low + 1, Math.min(high - 1, Math.round(guess)));
      }
      for (int v = 0; v < n; v++) {
        muOf[v] = v < t ? muHi : muLo;
      }
      int[] x = relaxed.apply(penalizedByNode(p, w, muOf)).choice();
      Evaluation e = SolutionEvaluator.evaluate(p, x);
      double excess = e.peakMemoryBytes() - m.budget();
      int width = high - low;
      if (e.feasible()) {
        high = t;
        exHigh = excess;
        feasible = x;
      } else {
        low = t;
        exLow = excess;
      }
      // Interpolate while it shrinks the bracket well; otherwise take one bisection step.
      bisect = !bisect && 4 * (high - low) > 3 * width;
    }
    if (feasible == null) {
      return null;
    }
    return new LocalSearch(p).improve(feasible, deadline());
  }

  /** Whether the best plan meets the bound (within a relative 1e-9). */
  private boolean gapClosed() {
    return bestObj - bound <= 1e-9 * Math.abs(bestObj);
  }

  /** Whether the best plan is above the bound by more than a relative 1e-9. */
  private boolean gapOpen() {
    return bestObj - bound > 1e-9 * Math.abs(bestObj);
  }

  private boolean timeUp() {
    return System.nanoTime() - start >= timeLimitSeconds * 1e9;
  }

  private long deadline() {
    return start + (long) (timeLimitSeconds * 1e9);
  }

  private double seconds() {
    return (System.nanoTime() - start) / 1e9;
  }

  /** The best plan, proven optimal: the bound meets it. */
  private IlpSolution optimal() {
    double secs = seconds();
    double obj = SolutionEvaluator.evaluate(p, best).objective();
    return new IlpSolution(SolveStatus.OPTIMAL, best, obj, obj, secs, 0);
  }

  /** {@code mu * w}, or null when {@code mu} is 0 (no penalty). */
  private static double[][] scaled(double[][] w, double mu) {
    if (!(mu > 0)) {
      return null;
    }
    double[][] out = new double[w.length][];
    for (int v = 0; v < w.length; v++) {
      out[v] = new double[w[v].length];
      for (int i = 0; i < w[v].length; i++) {
        out[v][i] = mu * w[v][i];
      }
    }
    return out;
  }

  private static IlpProblem penalizedByNode(IlpProblem p, double[][] w, double[] mu) {
    double[][] c = new double[p.nodeCount()][];
    for (int v = 0; v < c.length; v++) {
      c[v] = p.nodeCosts()[v].clone();
      for (int i = 0; i < c[v].length; i++) {
        c[v][i] += mu[v] * w[v][i];
      }
    }
    return new IlpProblem(c, p.edges(), null);
  }

  private static IlpProblem penalized(IlpProblem p, double[][] w, double mu) {
    double[][] c = new double[p.nodeCount()][];
    for (int v = 0; v < c.length; v++) {
      c[v] = p.nodeCosts()[v].clone();
      for (int i = 0; i < c[v].length; i++) {
        c[v][i] += mu * w[v][i];
      }
    }
    return new IlpProblem(c, p.edges(), null);
  }

  /** The summed excess of the chosen rows: sum over rows of (memory - budget), bytes. */
  private static double excess(MemoryConstraint m, int[] x, Set<Integer> rows) {
    double[] at = SolutionEvaluator.memoryAtSteps(m, x);
    double g = 0;
    for (int r : rows) {
      g += at[r] - m.budget();
    }
    return g;
  }

  /** Whether some chosen row is over budget: then the plan is infeasible for the weights too. */
  private static boolean violatesAny(MemoryConstraint m, int[] x, Set<Integer> rows) {
    double[] at = SolutionEvaluator.memoryAtSteps(m, x);
    for (int r : rows) {
      if (at[r] > m.budget()) {
        return true;
      }
    }
    return false;
  }

  /** Chooses the fullest step over budget, if any. */
  private static void addViolated(MemoryConstraint m, int[] x, Set<Integer> rows) {
    double[] at = SolutionEvaluator.memoryAtSteps(m, x);
    int worst = -1;
    for (int k = 0; k < at.length; k++) {
      if (at[k] > m.budget() && (worst < 0 || at[k] > at[worst])) {
        worst = k;
      }
    }
    if (worst >= 0) {
      rows.add(worst);
    }
  }

  /** Per node and strategy, its bytes summed over the chosen rows where they are live. */
  private static double[][] weights(IlpProblem p, NavigableSet<Integer> rows) {
    MemoryConstraint m = p.memory();
    double[][] w = new double[p.nodeCount()][];
    for (int v = 0; v < p.nodeCount(); v++) {
      w[v] = new double[p.size(v)];
    }
    for (int it = 0; it < m.itemCount(); it++) {
      int count = rows.subSet(m.stepsFrom(it), m.stepsEnd(it)).size();
      if (count > 0) {
        double[] b = m.itemBytes()[it];
        double[] wv = w[m.itemNode()[it]];
        for (int i = 0; i < b.length; i++) {
          wv[i] += count * b[i];
        }
      }
    }
    return w;
  }
}
