package io.meshplan.intraop;

import java.util.List;

/** What {@link AutoSharding#shard} found: a plan to render, or why there is none. */
public sealed interface ShardResult permits ShardResult.Planned, ShardResult.Infeasible {
  /**
   * A plan was found.
   *
   * @param plan the solved plan (cost graph, solution and its independent evaluation)
   * @param description the plan as renderers show it ({@link IntraOpPlan#of})
   * @param warnings one line per instruction planned conservatively (the generator cannot see
   *     into it) and per fixed layout that could not be kept
   */
  record Planned(ShardingPlan plan, IntraOpPlan description, List<String> warnings)
      implements ShardResult {
    /** Validates the fields and copies the list. */
    public Planned {
      io.meshplan.util.Require.nonNull(plan, "plan");
      io.meshplan.util.Require.nonNull(description, "description");
      warnings = List.copyOf(warnings);
    }
  }

  /**
   * No plan satisfies the memory bound and the fixed layouts.
   *
   * @param reason the cause, the memory needed, and the message
   */
  record Infeasible(IntraOpResult.Infeasible reason) implements ShardResult {
    /** Validates the field. */
    public Infeasible {
      io.meshplan.util.Require.nonNull(reason, "reason");
    }
  }
}
