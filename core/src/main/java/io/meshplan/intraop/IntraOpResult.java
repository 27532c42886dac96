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

  /**
   * No plan satisfies the memory bound and the fixed layouts.
   *
   * @param neededBytes a lower bound on the memory per device any plan needs, in bytes (0 when
   *     memory is not the cause)
   * @param message one sentence saying what is wrong and how to fix it
   */
  record Infeasible(double neededBytes, String message) implements IntraOpResult {
    /** Validates the fields. */
    public Infeasible {
      io.meshplan.util.Require.nonNegative(neededBytes, "needed bytes");
      io.meshplan.util.Require.nonNull(message, "message");
    }
  }
}
