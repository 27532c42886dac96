package io.meshplan.intraop;

import io.meshplan.util.Require;

/**
 * How to solve the intra-operator ILP.
 *
 * @param solver which solver
 * @param timeLimitSeconds CP-SAT's wall-time limit, seconds
 * @param workers CP-SAT search workers (1 is deterministic)
 * @param deterministicTime a limit on CP-SAT's deterministic time (its own work units, about a
 *     second each on a current core) for the part of the problem the exact reductions leave, or
 *     0 for none; with one worker the answer is then the same on every machine
 */
public record SolverOptions(Kind solver, double timeLimitSeconds, int workers,
    double deterministicTime) {
  /** The solver choices. */
  public enum Kind {
    /** Exact PBQP reductions, then CP-SAT on the irreducible core (the default). */
    REDUCING,
    /** The whole problem straight to CP-SAT. */
    CPSAT
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
        "--time-limit must be more than 0 and at most " + (long) MAX_TIME_LIMIT_SECONDS
            + " seconds, got " + timeLimitSeconds);
    Require.positive(workers, "--workers");
    Require.that(deterministicTime >= 0 && Double.isFinite(deterministicTime),
        "the deterministic time limit must be finite and >= 0");
  }

  /**
   * Options without a deterministic time limit.
   *
   * @param solver which solver
   * @param timeLimitSeconds CP-SAT's wall-time limit, seconds
   * @param workers CP-SAT search workers
   */
  public SolverOptions(Kind solver, double timeLimitSeconds, int workers) {
    this(solver, timeLimitSeconds, workers, 0);
  }

  /**
   * The same options with a limit on CP-SAT's deterministic time.
   *
   * @param units the limit, CP-SAT's work units
   * @return the options
   */
  public SolverOptions withDeterministicTime(double units) {
    return new SolverOptions(solver, timeLimitSeconds, workers, units);
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
      case REDUCING -> new ReducingIlpSolver(timeLimitSeconds, workers)
          .withDeterministicTime(deterministicTime);
      case CPSAT -> new CpSatIlpSolver(timeLimitSeconds, workers, null, deterministicTime);
    };
  }
}
