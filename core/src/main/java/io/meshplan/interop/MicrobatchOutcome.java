package io.meshplan.sweep;

import io.meshplan.util.Require;
import java.io.Serializable;

/**
 * What planning one microbatch size gave, as a serializable value.
 *
 * @param microbatchSequences sequences per microbatch
 * @param planJson the plan in its JSON form, or empty when none fits or the size was refused
 * @param iterationSeconds the plan's predicted iteration time, seconds (NaN without a plan)
 * @param stages the plan's stage count (0 without a plan)
 * @param neededBytesPerGpu without a plan: the least memory per GPU any candidate needed, bytes
 *     (0 when unknown)
 * @param message without a plan: the planner's sentence
 * @param refused whether the planner refused the question as bad input
 */
public record MicrobatchOutcome(int microbatchSequences, String planJson, double iterationSeconds,
    int stages, double neededBytesPerGpu, String message, boolean refused)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the fields. */
  public MicrobatchOutcome {
    Require.nonNull(planJson, "plan JSON");
    Require.nonNull(message, "message");
  }

  /**
   * The outcome of a size without a plan.
   *
   * @param microbatchSequences sequences per microbatch
   * @param neededBytesPerGpu the least memory per GPU any candidate needed, bytes (0 when unknown)
   * @param message the planner's sentence, or empty
   * @param refused whether the planner refused the question as bad input
   * @return the outcome
   */
  public static MicrobatchOutcome without(int microbatchSequences, double neededBytesPerGpu,
      String message, boolean refused) {
    return new MicrobatchOutcome(microbatchSequences, "", Double.NaN, 0, neededBytesPerGpu,
        message, refused);
  }

  /**
   * Whether a plan was found.
   *
   * @return true with a plan
   */
  public boolean planned() {
    return !planJson.isEmpty();
  }
}
