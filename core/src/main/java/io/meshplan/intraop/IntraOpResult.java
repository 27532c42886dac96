package io.meshplan.intraop;

/**
 * The outcome of one intra-operator planning call: a plan, or the reason there is none. The
 * pipeline planner asks thousands of times, so infeasibility is a value, not an exception.
 */
public sealed interface IntraOpResult permits IntraOpResult.Planned, IntraOpResult.Infeasible {
  /**
   * A plan was found.
   *
   * @param plan the plan
   */
  record Planned(ShardingPlan plan) implements IntraOpResult {
    /** Validates the field. */
    public Planned {
      io.meshplan.util.Require.nonNull(plan, "plan");
    }
  }

  /** Why no plan was found; each cause has its own fix, which a caller may word in its terms. */
  enum Cause {
    /** The solver's time limit ran out before it found a plan or proved there is none. */
    TIME_LIMIT("; raise the time limit"),
    /**
     * Memory is not the cause, but every plan has an infinite cost: the communication prices
     * overflow.
     */
    PRICES_OVERFLOW("; the communication prices overflow, so check the latency and bandwidth "
        + "values"),
    /** Memory is not the cause, but the fixed layouts and aliases admit no plan. */
    FIXED_LAYOUTS("; drop the kept shardings or change the mesh"),
    /** Even the smallest layouts need more memory than one device has. */
    MEMORY(" (add memory per device or use a larger mesh)");

    private final String fix;

    Cause(String fix) {
      this.fix = fix;
    }

    /**
     * How to fix it, as it follows the diagnosis in {@link Infeasible#message()}.
     *
     * @return the fix, starting with its separator ({@code "; "} or {@code " ("})
     */
    public String fix() {
      return fix;
    }
  }

  /**
   * No plan satisfies the memory bound and the fixed layouts.
   *
   * @param neededBytes a lower bound on the memory per device any plan needs, in bytes (0 when
   *     memory is not the cause)
   * @param cause why there is no plan
   * @param diagnosis what is wrong, where, and with which numbers, without the fix
   */
  record Infeasible(double neededBytes, Cause cause, String diagnosis) implements IntraOpResult {
    /** Validates the fields. */
    public Infeasible {
      io.meshplan.util.Require.nonNegative(neededBytes, "needed bytes");
      io.meshplan.util.Require.nonNull(cause, "cause");
      io.meshplan.util.Require.nonNull(diagnosis, "diagnosis");
    }

    /**
     * One sentence saying what is wrong and how to fix it.
     *
     * @return the diagnosis followed by the cause's fix
     */
    public String message() {
      return diagnosis + cause.fix();
    }
  }
}
