package io.meshplan.intraop.solve;

import com.google.ortools.Loader;
import com.google.ortools.sat.BoolVar;
import com.google.ortools.sat.CpModel;
import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.CpSolverStatus;
import com.google.ortools.sat.LinearExpr;
import com.google.ortools.sat.LinearExprBuilder;
import com.google.ortools.sat.Literal;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.List;

/**
 * Solves the ILP with OR-Tools CP-SAT, as XLA's maintained auto-sharding does.
 *
 * <p>Variables: a Boolean {@code x[v][i]} per node strategy with exactly one true per node (Alpa's
 * one-hot {@code s_v}). Each edge gets Alpa's edge variables {@code e[i][j]} for its allowed pairs,
 * linked to the nodes by {@code sum_j e[i][j] = x[u][i]} and {@code sum_i e[i][j] = x[v][j]}; this
 * linearization is exact and its LP relaxation is tight on trees. A forbidden pair ({@code
 * +Infinity}) simply has no edge variable. Memory: one linear row per checked step, in bytes.
 *
 * <p>Precision: costs are scaled so that the largest finite coefficient becomes 10^9 and rounded to
 * integers, so two plans whose objectives differ by less than (number of terms) / 2 * 10^-9 of the
 * largest coefficient may be ranked either way; the reported objective is recomputed in double
 * precision. Memory coefficients are whole bytes, rounded up. Determinism: a fixed seed and, by
 * default, one search worker.
 */
public final class CpSatIlpSolver implements IlpSolver {
  private static volatile boolean loaded;

  private final double timeLimitSeconds;
  private final int workers;
  private final int[] hint;
  private final double deterministicLimit;

  /**
   * Creates the solver.
   *
   * @param timeLimitSeconds wall-time limit; the best solution found by then is returned
   * @param workers search workers (1 is deterministic)
   * @param hint a starting assignment, or null
   */
  public CpSatIlpSolver(double timeLimitSeconds, int workers, int[] hint) {
    this(timeLimitSeconds, workers, hint, 0);
  }

  /**
   * Creates the solver with a limit on CP-SAT's deterministic time as well, so that the answer
   * does not depend on the machine's speed when that limit is the one reached.
   *
   * @param timeLimitSeconds wall-time limit, seconds (a safety net)
   * @param workers search workers (1 is deterministic)
   * @param hint a starting assignment, or null
   * @param deterministicLimit CP-SAT's deterministic-time limit (its own work units, roughly
   *     seconds on a reference machine); 0 for none
   */
  CpSatIlpSolver(double timeLimitSeconds, int workers, int[] hint, double deterministicLimit) {
    this.timeLimitSeconds = timeLimitSeconds;
    this.workers = workers;
    this.hint = hint == null ? null : hint.clone();
    this.deterministicLimit = deterministicLimit;
  }

  /** Loads the native OR-Tools library once per process. */
  static void ensureLoaded() {
    if (!loaded) {
      synchronized (CpSatIlpSolver.class) {
        if (!loaded) {
          Loader.loadNativeLibraries();
          loaded = true;
        }
      }
    }
  }

  @Override
  public IlpSolution solve(IlpProblem p) {
    long start = System.nanoTime();
    ensureLoaded();
    int n = p.nodeCount();
    double maxCoef = p.maxFiniteCost();
    double scale = maxCoef > 0 ? 1e9 / maxCoef : 1.0;
    CpModel model = new CpModel();
    LinearExprBuilder obj = LinearExpr.newBuilder();
    BoolVar[][] x = addNodes(model, obj, p, scale);
    for (IlpEdge e : p.edges()) {
      addEdge(model, obj, e, x[e.u()], x[e.v()], scale);
    }
    MemoryConstraint m = p.memory();
    if (m != null) {
      addMemory(model, m, x);
    }
    model.minimize(obj);
    if (hint != null && hint.length == n) {
      addHint(model, x, hint);
    }
    CpSolver solver = newSolver();
    SolveStatus status = status(solver.solve(model));
    double secs = (System.nanoTime() - start) / 1e9;
    if (status != SolveStatus.OPTIMAL && status != SolveStatus.FEASIBLE) {
      return new IlpSolution(status, new int[0], Double.POSITIVE_INFINITY,
          Double.POSITIVE_INFINITY, secs, n);
    }
    int[] choice = choice(solver, x);
    double objective = SolutionEvaluator.evaluate(p, choice).objective();
    double bound = status == SolveStatus.OPTIMAL ? objective : solver.bestObjectiveBound() / scale;
    return new IlpSolution(status, choice, objective, bound, secs, n);
  }

  /**
   * The one-hot variables {@code x[v][i]} of every node, exactly one true per node, forbidden
   * strategies held at 0 and the others' scaled costs added to the objective.
   */
  private static BoolVar[][] addNodes(CpModel model, LinearExprBuilder obj, IlpProblem p,
      double scale) {
    int n = p.nodeCount();
    BoolVar[][] x = new BoolVar[n][];
    for (int v = 0; v < n; v++) {
      int s = p.size(v);
      x[v] = new BoolVar[s];
      List<Literal> lits = new ArrayList<>(s);
      for (int i = 0; i < s; i++) {
        x[v][i] = model.newBoolVar("x" + v + "_" + i);
        lits.add(x[v][i]);
        double c = p.nodeCosts()[v][i];
        if (c == Double.POSITIVE_INFINITY) {
          model.addEquality(x[v][i], 0);
        } else if (c != 0) {
          obj.addTerm(x[v][i], Math.round(c * scale));
        }
      }
      model.addExactlyOne(lits);
    }
    return x;
  }

  private static void addHint(CpModel model, BoolVar[][] x, int[] hint) {
    for (int v = 0; v < x.length; v++) {
      for (int i = 0; i < x[v].length; i++) {
        model.addHint(x[v][i], i == hint[v] ? 1 : 0);
      }
    }
  }

  /** CP-SAT with this solver's limits, a fixed seed and no log. */
  private CpSolver newSolver() {
    CpSolver solver = new CpSolver();
    solver.getParameters().setMaxTimeInSeconds(timeLimitSeconds);
    solver.getParameters().setNumWorkers(workers);
    if (deterministicLimit > 0) {
      solver.getParameters().setMaxDeterministicTime(deterministicLimit);
    }
    solver.getParameters().setRandomSeed(0);
    solver.getParameters().setLogSearchProgress(false);
    return solver;
  }

  private static SolveStatus status(CpSolverStatus st) {
    return switch (st) {
      case OPTIMAL -> SolveStatus.OPTIMAL;
      case FEASIBLE -> SolveStatus.FEASIBLE;
      case INFEASIBLE -> SolveStatus.INFEASIBLE;
      default -> SolveStatus.UNKNOWN;
    };
  }

  /** The strategy of each node in the solver's answer: the first of its variables set. */
  private static int[] choice(CpSolver solver, BoolVar[][] x) {
    int[] choice = new int[x.length];
    for (int v = 0; v < x.length; v++) {
      for (int i = 0; i < x[v].length; i++) {
        if (solver.booleanValue(x[v][i])) {
          choice[v] = i;
          break;
        }
      }
    }
    return choice;
  }

  private static void addEdge(CpModel model, LinearExprBuilder obj, IlpEdge e, BoolVar[] xu,
      BoolVar[] xv, double scale) {
    int su = xu.length;
    int sv = xv.length;
    List<List<Literal>> rows = new ArrayList<>(su);
    List<List<Literal>> cols = new ArrayList<>(sv);
    for (int i = 0; i < su; i++) {
      rows.add(new ArrayList<>());
    }
    for (int j = 0; j < sv; j++) {
      cols.add(new ArrayList<>());
    }
    for (int i = 0; i < su; i++) {
      for (int j = 0; j < sv; j++) {
        double c = e.cost(i, j, sv);
        if (c == Double.POSITIVE_INFINITY) {
          continue;
        }
        BoolVar ev = model.newBoolVar("e" + e.u() + "_" + e.v() + "_" + i + "_" + j);
        rows.get(i).add(ev);
        cols.get(j).add(ev);
        long sc = Math.round(c * scale);
        if (sc != 0) {
          obj.addTerm(ev, sc);
        }
      }
    }
    for (int i = 0; i < su; i++) {
      model.addEquality(LinearExpr.sum(rows.get(i).toArray(new Literal[0])), xu[i]);
    }
    for (int j = 0; j < sv; j++) {
      model.addEquality(LinearExpr.sum(cols.get(j).toArray(new Literal[0])), xv[j]);
    }
  }

  private static void addMemory(CpModel model, MemoryConstraint m, BoolVar[][] x) {
    int[] steps = m.steps();
    List<List<Integer>> liveAt = new ArrayList<>(steps.length);
    for (int k = 0; k < steps.length; k++) {
      liveAt.add(new ArrayList<>());
    }
    for (int it = 0; it < m.itemCount(); it++) {
      int lo = m.stepsFrom(it);
      int hi = m.stepsEnd(it);
      for (int k = lo; k < hi; k++) {
        liveAt.get(k).add(it);
      }
    }
    long budget = (long) Math.floor(m.budget());
    java.util.Map<Integer, long[]> coef = new java.util.TreeMap<>();
    for (int k = 0; k < steps.length; k++) {
      coef.clear();
      long constant = 0;
      for (int it : liveAt.get(k)) {
        int v = m.itemNode()[it];
        double[] b = m.itemBytes()[it];
        long[] c = coef.computeIfAbsent(v, key -> new long[b.length]);
        for (int i = 0; i < b.length; i++) {
          c[i] += (long) Math.ceil(b[i]);
        }
      }
      LinearExprBuilder row = LinearExpr.newBuilder();
      boolean any = false;
      for (var e : coef.entrySet()) {
        long[] c = e.getValue();
        long min = Long.MAX_VALUE;
        for (long ci : c) {
          min = Math.min(min, ci);
        }
        constant += min;
        for (int i = 0; i < c.length; i++) {
          if (c[i] != min) {
            row.addTerm(x[e.getKey()][i], c[i] - min);
            any = true;
          }
        }
      }
      if (constant > budget) {
        model.addBoolOr(new Literal[0]);
        return;
      }
      if (any) {
        model.addLessOrEqual(row, budget - constant);
      }
    }
  }
}
