package io.meshplan.intraop;

import io.meshplan.intraop.solve.CpSatIlpSolver;
import io.meshplan.intraop.solve.IlpSolver;
import io.meshplan.intraop.solve.ReducingIlpSolver;
import io.meshplan.util.Require;

/**
 * How to solve the intra-operator ILP.
 *
 * @param solver which solver
 * @param timeLimitSeconds CP-SAT's wall-time limit, seconds
 * @param workers CP-SAT search workers (1 is deterministic)
 */
public record SolverOptions(Kind solver, double timeLimitSeconds, int workers)
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The solver choices. */
  public enum Kind {
    /** Exact PBQP reductions, then CP-SAT on the irreducible core (the default). */
    REDUCING,
    /** The whole problem straight to CP-SAT. */
    CPSAT,
    /**
     * The exact reductions, variable elimination and conditioning within a small work budget;
     * what they leave goes to iterated conditional modes restarted from every strategy of the
     * most connected nodes, not to CP-SAT. Deterministic and fast, for pricing many layers on
     * many meshes; the answer is proven optimal only when the exact steps solve it.
     */
    FAST
  }

  /**
   * The longest time limit, seconds (a week): solvers compute deadlines in nanoseconds, which a
   * larger limit would overflow.
   */
  public static final double MAX_TIME_LIMIT_SECONDS = 604_800;

  /** Validates the limits. */
  public SolverOptions {
    Require.nonNull(solver, "solver");
    Require.that(timeLimitSeconds > 0 && timeLimitSeconds <= MAX_TIME_LIMIT_SECONDS,
        () -> "the solver's time limit must be more than 0 and at most "
            + (long) MAX_TIME_LIMIT_SECONDS + " seconds, got " + timeLimitSeconds);
    Require.positive(workers, "the number of CP-SAT workers");
  }

  /**
   * The defaults: reductions, 60 s, one worker.
   *
   * @return the options
   */
  public static SolverOptions defaults() {
    return new SolverOptions(Kind.REDUCING, 60.0, 1);
  }

  /**
   * The configured solver.
   *
   * @return a solver instance
   */
  public IlpSolver newSolver() {
    return switch (solver) {
      case REDUCING -> new ReducingIlpSolver(timeLimitSeconds, workers);
      case CPSAT -> new CpSatIlpSolver(timeLimitSeconds, workers, null);
      case FAST -> new ReducingIlpSolver(timeLimitSeconds, workers).heuristicCore();
    };
  }
}
