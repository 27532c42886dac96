package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.SolutionEvaluator;

/**
 * Solves the ILP exactly by the reductions of PBQP solvers ({@link PbqpReductions}), then solves
 * the irreducible core, if any, by exact variable elimination ({@link VariableElimination}) when
 * its tables stay small, by cutset conditioning ({@link CutsetConditioning}: each branch reduced
 * and eliminated again) when the branches stay within a work budget, and by CP-SAT otherwise. When
 * CP-SAT stops before proving its answer, its bound on the core is the bound of the whole
 * problem, since the reductions are exact.
 *
 * <p>The reductions ignore the memory bound; when the optimum of the relaxation fits in memory it
 * is optimal for the bounded problem too, and otherwise the bounded problem is handled by
 * Lagrangian relaxation with threshold mixing of the bracketing plans ({@link LagrangianMemory}),
 * which reports a proven lower bound and solves its memory-free problems with this solver. Ties
 * take the lowest node id and strategy index throughout, so the result is deterministic.
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
   * given a sixteenth of its budget (the solver of {@code SolverOptions.Kind.FAST}).
   *
   * @return the solver
   */
  public ReducingIlpSolver heuristicCore() {
    return new ReducingIlpSolver(timeLimitSeconds, workers, smallForCpSat, maxEliminationWork,
        maxConditioningWork / 16, true);
  }

  /** Problems up to this many nodes get CP-SAT to close a Lagrangian gap. */
  static final int SMALL_FOR_CPSAT = 200;

  /**
   * The most table evaluations that conditioning may spend on one core (reductions and
   * eliminations of all branches together) before CP-SAT is used instead.
   */
  static final long MAX_CONDITIONING_WORK = 400_000_000L;

  /** The most connected nodes whose every strategy restarts the heuristic core search. */
  static final int RESTARTED_NODES = 4;

  @Override
  public IlpSolution solve(IlpProblem p) {
    long start = System.nanoTime();
    PbqpReductions r = PbqpReductions.reduce(p);
    SolveStatus status = SolveStatus.OPTIMAL;
    double coreGap = 0;
    int[] coreChoice = new int[0];
    if (r.coreSize() > 0) {
      IlpProblem cp = r.coreProblem();
      IlpSolution cs = solveCore(cp);
      if (!cs.hasSolution()) {
        return finish(p, cs.status(), null, start, r.coreSize(), 0);
      }
      status = cs.status();
      coreChoice = cs.choice();
      // A core bound that CP-SAT could not give (NaN) falls back to the separable one.
      double coreBound = Double.isNaN(cs.bound()) ? separableBound(cp) : cs.bound();
      coreGap = Math.max(0, cs.objective() - coreBound);
    }
    int[] choice = r.backSubstitute(coreChoice);
    Evaluation ev = SolutionEvaluator.evaluate(p, choice);
    if (!ev.feasible() && p.memory() != null
        && SolutionEvaluator.evaluate(p.withoutMemory(), choice).feasible()) {
      return new LagrangianMemory(p, this::solve, timeLimitSeconds, workers, smallForCpSat, start)
          .solve(choice, ev.objective() - coreGap);
    }
    if (!ev.feasible()) {
      return finish(p, SolveStatus.INFEASIBLE, null, start, r.coreSize(), 0);
    }
    return finish(p, status, choice, start, r.coreSize(), coreGap);
  }

  /**
   * The answer for a full choice; the bound is the objective less the core's proven gap (the
   * reductions are exact, so the core's gap is the whole problem's).
   */
  private static IlpSolution finish(IlpProblem p, SolveStatus status, int[] choice, long start,
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

  /**
   * The memory-free core's exact solution by variable elimination, or by conditioning when the
   * elimination tables would be too large; null when both would exceed their work limits.
   */
  private int[] solveExactly(IlpProblem cp) {
    int[] exact = new VariableElimination(maxEliminationWork).solve(cp);
    return exact != null ? exact
        : new CutsetConditioning(maxEliminationWork, maxConditioningWork).solve(cp);
  }

  /**
   * Solves the memory-free core exactly (answered from {@link CoreSolutions} when an equal core
   * was solved before) by variable elimination, or by conditioning when the
   * elimination tables would be too large ({@link CutsetConditioning}); CP-SAT, started from the
   * plan of restarted iterated conditional modes ({@link LocalSearch#restartedModes}), only when
   * both would take more than their work limits, and that plan is kept when CP-SAT ends with a
   * worse one.
   */
  private IlpSolution solveCore(IlpProblem cp) {
    int[] exact = CoreSolutions.SHARED.solve(cp, maxEliminationWork, maxConditioningWork,
        this::solveExactly);
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
      b += e.minCost();
    }
    return b;
  }
}
