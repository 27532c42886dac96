package io.meshplan.interop;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * The best plan one training runtime can launch, or why it has none.
 *
 * @param label the runtime's name on the command line ({@code megatron}, {@code alpa}, ...)
 * @param plan its fastest plan that fits, with the simulation
 * @param whyNone one sentence when it has none, else empty
 */
public record RuntimeBest(String label, Optional<PlanResult.Planned> plan, String whyNone) {
  /** Validates the fields. */
  public RuntimeBest {
    Require.nonNull(label, "label");
    Require.nonNull(plan, "plan");
    Require.nonNull(whyNone, "why none");
    Require.that(plan.isPresent() == whyNone.isEmpty(), "a runtime has a plan or a reason");
  }

  /**
   * The runtime's best as a result: the plan, or infeasible with the reason.
   *
   * @param nodes the cluster's nodes, as the fewest to try (nothing more is known)
   * @return the result
   */
  public PlanResult asResult(int nodes) {
    return plan.<PlanResult>map(p -> p).orElseGet(() -> new PlanResult.Infeasible(0, nodes,
        "no plan that " + label + " launches: " + whyNone));
  }
}
