package io.meshplan.intraop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Solves the ILP exactly by the reductions of PBQP solvers (Scholz and Eckstein, LCTES'02; Hames
 * and Scholz, Euro-Par'06), then solves the irreducible core, if any, by exact variable
 * elimination when its tables stay small, by cutset conditioning (each branch reduced and
 * eliminated again) when the branches stay within a work budget, and by CP-SAT otherwise. When
 * CP-SAT stops before proving its answer, its bound on the core is the bound of the whole
 * problem, since the reductions are exact.
 *
 * <ul>
 *   <li>R0: a node without edges takes its cheapest strategy.
 *   <li>R1: a node with one neighbour {@code y} is folded into {@code y}'s costs: {@code c_y[j] +=
 *       min_i (c_x[i] + R_xy[i][j])}.
 *   <li>R2: a node with two neighbours {@code y, z} becomes an edge between them: {@code R_yz[j][k]
 *       += min_i (c_x[i] + R_xy[i][j] + R_xz[i][k])}.
 *   <li>A node with one strategy is folded into all its neighbours.
 * </ul>
 *
 * <p>Each reduction keeps the optimum, and the eliminated nodes are chosen afterwards in reverse
 * order from the recorded arg-min tables. Nodes are reduced in ascending id order and ties take the
 * lowest strategy index, so the result is deterministic. The reductions ignore the memory bound;
 * when the optimum of the relaxation fits in memory it is optimal for the bounded problem too, and
 * otherwise the bounded problem is handled by Lagrangian relaxation with threshold mixing of the
 * bracketing plans (see {@code lagrangian}), which reports a proven lower bound.
 */
public final class ReducingIlpSolver implements IlpSolver {
  /**
   * The most table evaluations one variable-elimination step may take before conditioning is
   * tried instead.
   */
  static final long MAX_ELIMINATION_WORK = 20_000_000L;

  private final double timeLimitSeconds;
  private final int workers;
  private final int smallForCpSat;
  private final long maxEliminationWork;
  private final long maxConditioningWork;
  private final boolean heuristicCore;

  /**
   * Creates the solver.
   *
   * @param timeLimitSeconds CP-SAT's time limit for the core or the bounded problem
   * @param workers CP-SAT search workers
   */
  public ReducingIlpSolver(double timeLimitSeconds, int workers) {
    this(timeLimitSeconds, workers, SMALL_FOR_CPSAT);
  }

  /**
   * Creates the solver with a chosen size below which CP-SAT closes a Lagrangian gap.
   *
   * @param timeLimitSeconds CP-SAT's time limit for the core or the bounded problem
   * @param workers CP-SAT search workers
   * @param smallForCpSat problems with at most this many nodes get CP-SAT after the Lagrangian
   *     search (0: never, so the Lagrangian plan and bound are returned as they are)
   */
  ReducingIlpSolver(double timeLimitSeconds, int workers, int smallForCpSat) {
    this(timeLimitSeconds, workers, smallForCpSat, MAX_ELIMINATION_WORK, MAX_CONDITIONING_WORK);
  }

  /**
   * Creates the solver with chosen work limits for the exact core solvers (tests use small ones
   * to reach conditioning and CP-SAT on small problems).
   *
   * @param timeLimitSeconds CP-SAT's time limit for the core or the bounded problem
   * @param workers CP-SAT search workers
   * @param smallForCpSat problems with at most this many nodes get CP-SAT after the Lagrangian
   *     search
   * @param maxEliminationWork the most table evaluations of one elimination step
   * @param maxConditioningWork the most table evaluations conditioning may spend on one core
   */
  ReducingIlpSolver(double timeLimitSeconds, int workers, int smallForCpSat,
      long maxEliminationWork, long maxConditioningWork) {
    this(timeLimitSeconds, workers, smallForCpSat, maxEliminationWork, maxConditioningWork,
        false);
  }

  private ReducingIlpSolver(double timeLimitSeconds, int workers, int smallForCpSat,
      long maxEliminationWork, long maxConditioningWork, boolean heuristicCore) {
    this.heuristicCore = heuristicCore;
    this.timeLimitSeconds = timeLimitSeconds;
    this.workers = workers;
    this.smallForCpSat = smallForCpSat;
    this.maxEliminationWork = maxEliminationWork;
    this.maxConditioningWork = maxConditioningWork;
  }

  /**
   * This solver with the core that the exact steps leave solved by restarted iterated
   * conditional modes ({@link LocalSearch#restartedModes}) instead of CP-SAT, and conditioning
   * given a sixteenth of its budget ({@link SolverOptions.Kind#FAST}).
   *
   * @return the solver
   */
  ReducingIlpSolver heuristicCore() {
    return new ReducingIlpSolver(timeLimitSeconds, workers, smallForCpSat, maxEliminationWork,
        maxConditioningWork / 16, true);
  }

  private static final class Edge {
    final int a;
    final int b;
    final int sb;
    final double[] m;

    Edge(int a, int b, int sb, double[] m) {
      this.a = a;
      this.b = b;
      this.sb = sb;
      this.m = m;
    }

    double get(int from, int i, int j) {
      return from == a ? m[i * sb + j] : m[j * sb + i];
    }

    /**
     * The costs seen from node {@code from} laid out with the other node's strategy major:
     * entry {@code j * sFrom + i} is {@code get(from, i, j)}, so a minimum over {@code from}'s
     * strategies reads consecutive entries.
     */
    double[] fromRows(int from, int sFrom, int sOther) {
      double[] t = new double[sFrom * sOther];
      for (int i = 0; i < sFrom; i++) {
        for (int j = 0; j < sOther; j++) {
          t[j * sFrom + i] = get(from, i, j);
        }
      }
      return t;
    }
  }

  private record Step(int kind, int x, int y, int z, int[] table) {}

  /** What the reductions leave: folded costs and edges, the steps to undo, the core nodes. */
  private static final class Reduced {
    final double[][] cost;
    final List<Map<Integer, Edge>> adj;
    final Deque<Step> steps = new ArrayDeque<>();
    final List<Integer> core = new ArrayList<>();
    long work;

    Reduced(double[][] cost, List<Map<Integer, Edge>> adj) {
      this.cost = cost;
      this.adj = adj;
    }
  }

  @Override
  public IlpSolution solve(IlpProblem p) {
    long start = System.nanoTime();
    Reduced r = reduce(p);
    SolveStatus status = SolveStatus.OPTIMAL;
    double coreGap = 0;
    int[] coreChoice = new int[0];
    if (!r.core.isEmpty()) {
      IlpProblem cp = coreProblem(r);
      IlpSolution cs = solveCore(cp);
      if (!cs.hasSolution()) {
        return finish(p, cs.status(), null, start, r.core.size(), 0);
      }
      status = cs.status();
      coreChoice = cs.choice();
      // A core bound that CP-SAT could not give (NaN) falls back to the separable one.
      double coreBound = Double.isNaN(cs.bound()) ? separableBound(cp) : cs.bound();
      coreGap = Math.max(0, cs.objective() - coreBound);
    }
    int[] choice = backSubstitute(r, coreChoice);
    Evaluation ev = SolutionEvaluator.evaluate(p, choice);
    if (!ev.feasible() && p.memory() != null
        && SolutionEvaluator.evaluate(p.withoutMemory(), choice).feasible()) {
      return lagrangian(p, choice, ev.objective() - coreGap, start);
    }
    if (!ev.feasible()) {
      return finish(p, SolveStatus.INFEASIBLE, null, start, r.core.size(), 0);
    }
    return finish(p, status, choice, start, r.core.size(), coreGap);
  }

  /**
   * Applies R0, R1, R2 and the folding of single-strategy nodes until none applies, in ascending
   * node order; counts the table evaluations in {@code work}.
   */
  private static Reduced reduce(IlpProblem p) {
    int n = p.nodeCount();
    double[][] cost = new double[n][];
    List<Map<Integer, Edge>> adj = new ArrayList<>(n);
    for (int v = 0; v < n; v++) {
      cost[v] = p.nodeCosts()[v].clone();
      adj.add(new HashMap<>());
    }
    for (IlpEdge e : p.edges()) {
      Edge ed = new Edge(e.u(), e.v(), p.size(e.v()), e.costs());
      adj.get(e.u()).put(e.v(), ed);
      adj.get(e.v()).put(e.u(), ed);
    }
    Reduced red = new Reduced(cost, adj);
    Deque<Step> steps = red.steps;
    boolean[] alive = new boolean[n];
    java.util.Arrays.fill(alive, true);
    TreeSet<Integer> work = new TreeSet<>();
    for (int v = 0; v < n; v++) {
      if (reducible(v, adj, cost)) {
        work.add(v);
      }
    }
    while (!work.isEmpty()) {
      int x = work.pollFirst();
      if (!alive[x] || !reducible(x, adj, cost)) {
        continue;
      }
      Map<Integer, Edge> nb = adj.get(x);
      int sx = cost[x].length;
      if (nb.isEmpty()) {
        steps.push(new Step(0, x, -1, -1, new int[] {argmin(cost[x])}));
      } else if (sx == 1) {
        for (var en : new TreeMap<>(nb).entrySet()) {
          int y = en.getKey();
          Edge ed = en.getValue();
          for (int j = 0; j < cost[y].length; j++) {
            cost[y][j] += ed.get(x, 0, j);
          }
          red.work += cost[y].length;
          adj.get(y).remove(x);
          work.add(y);
        }
        nb.clear();
        steps.push(new Step(0, x, -1, -1, new int[] {0}));
      } else if (nb.size() == 1) {
        int y = nb.keySet().iterator().next();
        Edge ed = nb.get(y);
        int sy = cost[y].length;
        int[] table = new int[sy];
        double[] cx = cost[x];
        double[] t = ed.fromRows(x, sx, sy);
        for (int j = 0; j < sy; j++) {
          double best = Double.POSITIVE_INFINITY;
          int arg = 0;
          int o = j * sx;
          for (int i = 0; i < sx; i++) {
            double c = cx[i] + t[o + i];
            if (c < best) {
              best = c;
              arg = i;
            }
          }
          table[j] = arg;
          cost[y][j] += best;
        }
        red.work += (long) sx * sy;
        adj.get(y).remove(x);
        nb.clear();
        steps.push(new Step(1, x, y, -1, table));
        work.add(y);
      } else {
        int[] ys = nb.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        int y = ys[0];
        int z = ys[1];
        Edge exy = nb.get(y);
        Edge exz = nb.get(z);
        int sy = cost[y].length;
        int sz = cost[z].length;
        Edge eyz = adj.get(y).get(z);
        if (eyz == null) {
          eyz = new Edge(y, z, sz, new double[sy * sz]);
          adj.get(y).put(z, eyz);
          adj.get(z).put(y, eyz);
        }
        int[] table = new int[sy * sz];
        double[] cx = cost[x];
        double[] ty = exy.fromRows(x, sx, sy);
        double[] tz = exz.fromRows(x, sx, sz);
        double[] colY = new double[sx];
        boolean yFirst = eyz.a == y;
        for (int j = 0; j < sy; j++) {
          int oy = j * sx;
          for (int i = 0; i < sx; i++) {
            colY[i] = cx[i] + ty[oy + i];
          }
          for (int k = 0; k < sz; k++) {
            double best = Double.POSITIVE_INFINITY;
            int arg = 0;
            int oz = k * sx;
            for (int i = 0; i < sx; i++) {
              double c = colY[i] + tz[oz + i];
              if (c < best) {
                best = c;
                arg = i;
              }
            }
            table[j * sz + k] = arg;
            if (yFirst) {
              eyz.m[j * sz + k] += best;
            } else {
              eyz.m[k * eyz.sb + j] += best;
            }
          }
        }
        red.work += (long) sx * sy * sz;
        adj.get(y).remove(x);
        adj.get(z).remove(x);
        nb.clear();
        steps.push(new Step(2, x, y, z, table));
        work.add(y);
        work.add(z);
      }
      alive[x] = false;
    }
    for (int v = 0; v < n; v++) {
      if (alive[v]) {
        red.core.add(v);
      }
    }
    return red;
  }

  /** The full choice from the core's choice, undoing the reductions in reverse order. */
  private static int[] backSubstitute(Reduced r, int[] coreChoice) {
    int[] choice = new int[r.cost.length];
    for (int k = 0; k < r.core.size(); k++) {
      choice[r.core.get(k)] = coreChoice[k];
    }
    for (Step s : r.steps) {
      choice[s.x()] = switch (s.kind()) {
        case 0 -> s.table()[0];
        case 1 -> s.table()[choice[s.y()]];
        default -> s.table()[choice[s.y()] * r.cost[s.z()].length + choice[s.z()]];
      };
    }
    return choice;
  }

  /**
   * Handles a binding memory bound by Lagrangian relaxation (Fisher, Management Science 1981): the
   * memory rows of chosen steps are moved into the objective with one multiplier {@code mu >= 0},
   * and the penalized problem, which keeps the pairwise structure, is solved exactly by the
   * reductions. A row joins the chosen set only when a plan fits every chosen row but breaks
   * another, so plans below the multiplier stay infeasible for the chosen rows. A cutting-plane
   * search on {@code mu} (Kelley; bisection as a fallback) brackets the critical multiplier; every
   * evaluation also gives a valid lower bound {@code min_x (obj(x) + mu * sum_t (mem_t(x) - M))}.
   * The two bracketing plans are then mixed by a node threshold ({@link #mixedThreshold}), which
   * finds the block-wise plans a single multiplier cannot; the best plan is improved by feasible
   * single-node moves, and the last infeasible plan of the search is repaired by the moves that
   * free the most memory per unit of cost ({@link LocalSearch}). It is OPTIMAL when the bound
   * meets it; otherwise small problems go to {@link MemoryBranchAndBound} (exact when it finishes
   * within its budget) and then, if it did not, to CP-SAT with the plan as a hint to close the gap
   * (under a deterministic-time limit), and large ones get a large-neighbourhood search around
   * their largest memory movers ({@link WindowSearch}) and are returned as FEASIBLE with the
   * bound.
   */
  private IlpSolution lagrangian(IlpProblem p, int[] relaxed, double relaxedBound, long start) {
    MemoryConstraint m = p.memory();
    int n = p.nodeCount();
    java.util.TreeSet<Integer> rows = new java.util.TreeSet<>();
    addViolated(m, relaxed, rows);
    double[][] w = weights(p, rows);
    double bestObj = Double.POSITIVE_INFINITY;
    int[] best = null;
    // The relaxation's proven bound (its optimum unless CP-SAT stopped early on its core).
    double bound = relaxedBound;
    double lo = 0;
    double hi = 0;
    // Start where a whole-budget change of memory weighs like the largest single cost.
    double maxCoef = Math.max(bound, p.maxFiniteCost());
    double mu = Math.max(maxCoef, 1e-12) / Math.max(1.0, m.budget());
    int[] lastInfeasible = relaxed;
    int[] feasibleAtHi = null;
    double objLo = 0;
    double objHi = 0;
    for (int iter = 0; iter < 60 && System.nanoTime() - start < timeLimitSeconds * 1e9; iter++) {
      IlpProblem q = penalized(p, w, mu);
      IlpSolution penalizedSolution = solveRelaxedWithBound(q);
      int[] x = penalizedSolution.choice();
      double penalizedObj = penalizedSolution.bound();
      bound = Math.max(bound, penalizedObj - mu * rows.size() * m.budget());
      Evaluation e = SolutionEvaluator.evaluate(p, x);
      boolean repeat = false;
      if (e.feasible()) {
        if (e.objective() < bestObj) {
          bestObj = e.objective();
          best = x;
        }
        repeat = feasibleAtHi != null && java.util.Arrays.equals(x, feasibleAtHi);
        feasibleAtHi = x;
        objHi = e.objective();
        hi = mu;
      } else {
        repeat = lo > 0 && java.util.Arrays.equals(x, lastInfeasible);
        lastInfeasible = x;
        objLo = e.objective();
        int before = rows.size();
        if (!violatesAny(m, x, rows)) {
          addViolated(m, x, rows);
        }
        if (rows.size() != before) {
          // A new row changes the penalty, so the bracket below is rebuilt for the new weights.
          w = weights(p, rows);
          repeat = false;
          lastInfeasible = x;
          lo = 0;
          hi = 0;
          feasibleAtHi = null;
          continue;
        }
        lo = mu;
      }
      if (best != null && bestObj - bound <= 1e-9 * Math.abs(bestObj)) {
        break;
      }
      if (hi == 0) {
        mu *= 4;
        continue;
      }
      if (lo == 0) {
        mu = hi / 4;
        continue;
      }
      if (repeat || hi / lo < 1 + 1e-6) {
        break;
      }
      // Kelley's cutting plane on the one-dimensional dual: the next multiplier is where the
      // lines obj(x) + mu * g(x) of the bracketing plans cross.
      double gLo = excess(m, lastInfeasible, rows);
      double gHi = excess(m, feasibleAtHi, rows);
      double cross = gLo > gHi ? (objHi - objLo) / (gLo - gHi) : Double.NaN;
      mu = cross > lo * 1.0005 && cross < hi / 1.0005 ? cross : Math.sqrt(lo * hi);
    }
    if (best != null && lo > 0 && bestObj - bound > 1e-9 * Math.abs(bestObj)) {
      double exLo = SolutionEvaluator.evaluate(p, lastInfeasible).peakMemoryBytes() - m.budget();
      double exHi = SolutionEvaluator.evaluate(p, feasibleAtHi).peakMemoryBytes() - m.budget();
      int[] mixed = mixedThreshold(p, w, new double[] {lo, hi, exLo, exHi}, start);
      if (mixed != null) {
        double obj = SolutionEvaluator.evaluate(p, mixed).objective();
        if (obj < bestObj) {
          bestObj = obj;
          best = mixed;
        }
      }
    }
    if (best == null) {
      IlpSolution full = new CpSatIlpSolver(
          Math.max(1.0, timeLimitSeconds - (System.nanoTime() - start) / 1e9), workers, relaxed)
          .solve(p);
      double secs = (System.nanoTime() - start) / 1e9;
      return new IlpSolution(full.status(), full.choice(), full.objective(), full.bound(), secs, n);
    }
    if (bestObj - bound > 1e-9 * Math.abs(bestObj)) {
      long deadline = start + (long) (timeLimitSeconds * 1e9);
      LocalSearch ls = new LocalSearch(p);
      best = ls.improve(best, deadline);
      bestObj = SolutionEvaluator.evaluate(p, best).objective();
      int[] repaired = ls.repair(lastInfeasible, deadline);
      if (repaired != null) {
        Evaluation re = SolutionEvaluator.evaluate(p, repaired);
        if (re.feasible() && re.objective() < bestObj) {
          best = repaired;
          bestObj = re.objective();
        }
      }
    }
    if (bestObj - bound > 1e-9 * Math.abs(bestObj) && n > smallForCpSat) {
      best = new WindowSearch(p, WINDOW_NODES, WINDOW_SOLVES, this::solveRelaxedWithBound,
          scaled(w, hi), hi * rows.size() * m.budget())
          .improve(best, start + (long) (timeLimitSeconds * 1e9));
      bestObj = SolutionEvaluator.evaluate(p, best).objective();
    }
    if (bestObj - bound <= 1e-9 * Math.abs(bestObj)) {
      return finish(p, SolveStatus.OPTIMAL, best, start, 0, 0);
    }
    if (n <= smallForCpSat) {
      // The Lagrangian penalty at the smallest multiplier whose plan fits strengthens the bound of
      // every branch (none when the search found no such multiplier).
      double[][] pen = scaled(w, hi);
      MemoryBranchAndBound.Result bb = new MemoryBranchAndBound(p, this::solveRelaxedWithBound,
          BRANCH_AND_BOUND_SOLVES, pen, hi * rows.size() * m.budget())
          .solve(best, start + (long) (timeLimitSeconds * 1e9));
      if (bb.objective() < bestObj) {
        best = bb.choice();
        bestObj = bb.objective();
      }
      if (bb.proven()) {
        return finish(p, SolveStatus.OPTIMAL, best, start, 0, 0);
      }
      IlpSolution full = new CpSatIlpSolver(
          Math.max(1.0, timeLimitSeconds - (System.nanoTime() - start) / 1e9), workers, best,
          CLOSE_GAP_WORK).solve(p);
      if (full.hasSolution() && full.objective() <= bestObj) {
        double secs = (System.nanoTime() - start) / 1e9;
        return new IlpSolution(full.status(), full.choice(), full.objective(),
            Math.max(bound, full.bound()), secs, n);
      }
    }
    double secs = (System.nanoTime() - start) / 1e9;
    return new IlpSolution(SolveStatus.FEASIBLE, best, bestObj, bound, secs, n);
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
   * @param p the problem
   * @param w the memory weights of the multiplier's rows, per node and strategy (bytes)
   * @param bracket the multiplier whose plan does not fit, the one whose plan fits, and their
   *     plans' peak excess over the budget (bytes)
   * @param start when the solve started ({@link System#nanoTime()})
   * @return the feasible plan at the smallest fitting threshold found, improved by single-node
   *     moves, or null when time runs out first
   */
  private int[] mixedThreshold(IlpProblem p, double[][] w, double[] bracket, long start) {
    int n = p.nodeCount();
    MemoryConstraint m = p.memory();
    double lo = bracket[0];
    double hi = bracket[1];
    int low = 0;
    int high = n;
    double exLow = bracket[2];
    double exHigh = bracket[3];
    int[] feasible = null;
    double[] mu = new double[n];
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
        mu[v] = v < t ? hi : lo;
      }
      int[] x = solveRelaxed(penalizedByNode(p, w, mu));
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
    return new LocalSearch(p).improve(feasible, start + (long) (timeLimitSeconds * 1e9));
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

  /** Problems up to this many nodes get CP-SAT to close a Lagrangian gap. */
  static final int SMALL_FOR_CPSAT = 200;

  /** The summed excess of the chosen rows: sum over rows of (memory - budget), bytes. */
  private static double excess(MemoryConstraint m, int[] x, java.util.Set<Integer> rows) {
    double[] at = SolutionEvaluator.memoryAtSteps(m, x);
    double g = 0;
    for (int r : rows) {
      g += at[r] - m.budget();
    }
    return g;
  }

  /** Whether some chosen row is over budget: then the plan is infeasible for the weights too. */
  private static boolean violatesAny(MemoryConstraint m, int[] x, java.util.Set<Integer> rows) {
    double[] at = SolutionEvaluator.memoryAtSteps(m, x);
    for (int r : rows) {
      if (at[r] > m.budget()) {
        return true;
      }
    }
    return false;
  }

  private static void addViolated(MemoryConstraint m, int[] x, java.util.Set<Integer> rows) {
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

  private static double[][] weights(IlpProblem p, java.util.NavigableSet<Integer> rows) {
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

  private int[] solveRelaxed(IlpProblem q) {
    return solveRelaxedWithBound(q).choice();
  }

  /** Solves a memory-free problem; its bound is the optimum unless CP-SAT stopped early. */
  private IlpSolution solveRelaxedWithBound(IlpProblem q) {
    return new ReducingIlpSolver(timeLimitSeconds, workers, smallForCpSat, maxEliminationWork,
        maxConditioningWork, heuristicCore).solve(q);
  }

  private static boolean reducible(int v, List<Map<Integer, Edge>> adj, double[][] cost) {
    return adj.get(v).size() <= 2 || cost[v].length == 1;
  }

  /**
   * The answer for a full choice; the bound is the objective less the core's proven gap (the
   * reductions are exact, so the core's gap is the whole problem's).
   */
  private IlpSolution finish(IlpProblem p, SolveStatus status, int[] choice, long start,
      int coreNodes, double coreGap) {
    double secs = (System.nanoTime() - start) / 1e9;
    if (choice == null) {
      return new IlpSolution(status, new int[0], Double.POSITIVE_INFINITY,
          Double.POSITIVE_INFINITY, secs, coreNodes);
    }
    double obj = SolutionEvaluator.evaluate(p, choice).objective();
    return new IlpSolution(status, choice, obj,
        status == SolveStatus.OPTIMAL ? obj : obj - coreGap, secs, coreNodes);
  }

  /** The problem over the core nodes (renumbered in ascending id order) with folded costs. */
  private static IlpProblem coreProblem(Reduced r) {
    List<Integer> core = r.core;
    double[][] cost = r.cost;
    Map<Integer, Integer> index = new HashMap<>();
    double[][] costs = new double[core.size()][];
    for (int k = 0; k < core.size(); k++) {
      index.put(core.get(k), k);
      costs[k] = cost[core.get(k)];
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int k = 0; k < core.size(); k++) {
      int v = core.get(k);
      for (var en : new TreeMap<>(r.adj.get(v)).entrySet()) {
        int w = en.getKey();
        if (w <= v) {
          continue;
        }
        Edge ed = en.getValue();
        int sv = cost[v].length;
        int sw = cost[w].length;
        double[] m = new double[sv * sw];
        for (int i = 0; i < sv; i++) {
          for (int j = 0; j < sw; j++) {
            m[i * sw + j] = ed.get(v, i, j);
          }
        }
        edges.add(new IlpEdge(k, index.get(w), m));
      }
    }
    edges.sort((a, b) -> a.u() != b.u() ? Integer.compare(a.u(), b.u())
        : Integer.compare(a.v(), b.v()));
    return new IlpProblem(costs, edges, null);
  }

  /**
   * Solves the memory-free core exactly by variable elimination, or by conditioning when the
   * elimination tables would be too large ({@link #condition}); CP-SAT, started from the plan of
   * restarted iterated conditional modes ({@link LocalSearch#restartedModes}), only when both
   * would take more than their work limits, and that plan is kept when CP-SAT ends with a worse
   * one.
   */
  private IlpSolution solveCore(IlpProblem cp) {
    int[] exact = new VariableElimination(maxEliminationWork).solve(cp);
    if (exact == null) {
      exact = condition(cp, new long[] {maxConditioningWork});
    }
    if (exact != null) {
      double obj = SolutionEvaluator.evaluate(cp, exact).objective();
      return new IlpSolution(SolveStatus.OPTIMAL, exact, obj, obj, 0.0, cp.nodeCount());
    }
    if (heuristicCore) {
      int[] x = LocalSearch.restartedModes(cp, RESTARTED_NODES);
      return new IlpSolution(SolveStatus.FEASIBLE, x, SolutionEvaluator.evaluate(cp, x)
          .objective(), separableBound(cp), 0.0, cp.nodeCount());
    }
    int[] start = LocalSearch.restartedModes(cp, RESTARTED_NODES);
    IlpSolution cs = new CpSatIlpSolver(timeLimitSeconds, workers, start).solve(cp);
    double startObj = SolutionEvaluator.evaluate(cp, start).objective();
    if ((cs.hasSolution() && cs.objective() <= startObj)
        || startObj == Double.POSITIVE_INFINITY) {
      return cs;
    }
    // CP-SAT stopped at its limit with a worse plan than its starting point, or with none: keep
    // the start, with the better of CP-SAT's bound and the separable one.
    double bound = separableBound(cp);
    if (Double.isFinite(cs.bound())) {
      bound = Math.max(bound, cs.bound());
    }
    return new IlpSolution(SolveStatus.FEASIBLE, start, startObj, Math.min(bound, startObj), 0.0,
        cp.nodeCount());
  }

  /**
   * A lower bound of a memory-free problem that needs no search: every node and every edge at
   * its own cheapest entry.
   */
  private static double separableBound(IlpProblem q) {
    double b = 0;
    for (double[] c : q.nodeCosts()) {
      b += java.util.Arrays.stream(c).min().orElse(0);
    }
    for (IlpEdge e : q.edges()) {
      b += java.util.Arrays.stream(e.raw()).min().orElse(0);
    }
    return b;
  }

  /**
   * The most table evaluations that conditioning may spend on one core (reductions and
   * eliminations of all branches together) before CP-SAT is used instead.
   */
  static final long MAX_CONDITIONING_WORK = 400_000_000L;

  /** The most connected nodes whose every strategy restarts the heuristic core search. */
  static final int RESTARTED_NODES = 4;

  /**
   * Cutset conditioning (Pearl, Probabilistic Reasoning in Intelligent Systems, 1988): the node
   * with the most neighbours (ties: lowest id) is fixed to each of its finite-cost strategies in
   * turn, which removes it from the graph and lets the reductions run again; each branch is
   * solved exactly ({@link #exact}). The cheapest branch wins, the lowest strategy on ties. The
   * work is that of the branches, so a core whose elimination needs one table of {@code s^4}
   * entries around a node of degree 4 costs {@code s} branches of {@code s^3}.
   *
   * @param q a memory-free problem
   * @param budget the table evaluations left; decreased as they are spent
   * @return an optimal choice (of infinite cost when there is no plan), or null when the budget
   *     runs out
   */
  private int[] condition(IlpProblem q, long[] budget) {
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
    int[] best = null;
    double bestObj = Double.POSITIVE_INFINITY;
    long before = budget[0];
    int branches = 0;
    for (int s = 0; s < q.size(r); s++) {
      if (q.nodeCosts()[r][s] == Double.POSITIVE_INFINITY) {
        continue;
      }
      IlpProblem sub = fix(q, r, s);
      budget[0] -= sub.edges().stream().mapToLong(e -> e.raw().length).sum();
      int[] x = exact(sub, budget);
      if (x == null) {
        return null;
      }
      // Branches cost about the same: give up early when all of them would not fit the budget.
      if (branches++ == 0 && (double) (before - budget[0]) * q.size(r) > before) {
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

  /**
   * Solves a memory-free problem exactly: reductions, then elimination, then conditioning.
   *
   * @return an optimal choice, or null when the budget runs out
   */
  private int[] exact(IlpProblem q, long[] budget) {
    Reduced r = reduce(q);
    budget[0] -= r.work;
    if (budget[0] < 0) {
      return null;
    }
    if (r.core.isEmpty()) {
      return backSubstitute(r, new int[0]);
    }
    IlpProblem cp = coreProblem(r);
    VariableElimination ve = new VariableElimination(
        Math.min(maxEliminationWork, budget[0]), budget[0]);
    int[] x = ve.solve(cp);
    if (x != null) {
      budget[0] -= ve.plannedWork();
    } else {
      x = condition(cp, budget);
      if (x == null) {
        return null;
      }
    }
    return backSubstitute(r, x);
  }

  /** The same problem with node r restricted to its strategy s (r keeps one strategy). */
  private static IlpProblem fix(IlpProblem q, int r, int s) {
    double[][] c = q.nodeCosts().clone();
    c[r] = new double[] {c[r][s]};
    List<IlpEdge> edges = new ArrayList<>(q.edges().size());
    for (IlpEdge e : q.edges()) {
      double[] m = e.raw();
      if (e.u() == r) {
        int sv = q.size(e.v());
        edges.add(new IlpEdge(e.u(), e.v(), java.util.Arrays.copyOfRange(m, s * sv, s * sv + sv)));
      } else if (e.v() == r) {
        int sv = q.size(r);
        int su = q.size(e.u());
        double[] col = new double[su];
        for (int i = 0; i < su; i++) {
          col[i] = m[i * sv + s];
        }
        edges.add(new IlpEdge(e.u(), e.v(), col));
      } else {
        edges.add(e);
      }
    }
    return new IlpProblem(c, edges, null);
  }

  private static int argmin(double[] c) {
    int arg = 0;
    for (int i = 1; i < c.length; i++) {
      if (c[i] < c[arg]) {
        arg = i;
      }
    }
    return arg;
  }
}
