package io.meshplan.sweep;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Whole-cluster planning with the stage DPs spread over a {@link TaskExecutor}: one task per
 * microbatch size ({@link InterOpPlanner#microbatchSizes}), each planning that size alone (1F1B),
 * then, unless the question allows 1F1B only, one task per planned size looking for an interleaved
 * plan faster than the best 1F1B plan, and the best kept by {@link InterOpPlanner#isBetter}, the
 * one-process planner's own rule. The plan is
 * the one {@link InterOpPlanner#plan} finds in one process, byte for byte in its JSON form.
 */
public final class DistributedPlanner {
  private final TaskExecutor executor;

  /**
   * Creates the planner.
   *
   * @param executor runs the microbatch sizes
   */
  public DistributedPlanner(TaskExecutor executor) {
    this.executor = Require.nonNull(executor, "executor");
  }

  /**
   * Plans.
   *
   * @param question the question
   * @param done told how many microbatch sizes are done
   * @return the best size's outcome: a plan, or when none fits the outcome that needed the least
   *     memory (its message is the one-process planner's)
   * @throws InputException when the planner refuses the question
   */
  public MicrobatchOutcome plan(PlanQuestion question, IntConsumer done) {
    List<Integer> sizes = InterOpPlanner.microbatchSizes(
        question.request(question.fixedMicrobatches()));
    List<MicrobatchOutcome> outcomes = executor.map("plan", sizes, new MicrobatchTask(question),
        done);
    if (question.interleave()) {
      outcomes = interleave(question, outcomes);
    }
    return best(outcomes);
  }

  /**
   * The second round: each planned size looks for an interleaved plan faster than the best 1F1B
   * plan of all sizes, as {@link InterOpPlanner#plan} does in one process; a size that finds one
   * takes it in place of its 1F1B plan.
   */
  private List<MicrobatchOutcome> interleave(PlanQuestion question,
      List<MicrobatchOutcome> outcomes) {
    double beat = Double.POSITIVE_INFINITY;
    List<Integer> planned = new java.util.ArrayList<>();
    for (MicrobatchOutcome o : outcomes) {
      if (o.refused()) {
        return outcomes;
      }
      if (o.planned()) {
        beat = Math.min(beat, o.iterationSeconds());
        planned.add(o.microbatchSequences());
      }
    }
    if (planned.isEmpty()) {
      return outcomes;
    }
    List<MicrobatchOutcome> found = executor.map("interleave", planned,
        new InterleaveTask(question, beat), n -> { });
    java.util.Map<Integer, MicrobatchOutcome> bySize = new java.util.HashMap<>();
    for (MicrobatchOutcome o : found) {
      if (o.refused()) {
        throw new InputException(o.message());
      }
      if (o.planned()) {
        bySize.put(o.microbatchSequences(), o);
      }
    }
    List<MicrobatchOutcome> out = new java.util.ArrayList<>(outcomes.size());
    for (MicrobatchOutcome o : outcomes) {
      out.add(bySize.getOrDefault(o.microbatchSequences(), o));
    }
    return out;
  }

  /**
   * The planner's choice among outcomes given in ascending microbatch size.
   *
   * @param outcomes the outcomes
   * @return the chosen one
   */
  static MicrobatchOutcome best(List<MicrobatchOutcome> outcomes) {
    MicrobatchOutcome best = null;
    MicrobatchOutcome leastNeed = null;
    for (MicrobatchOutcome o : outcomes) {
      if (o.refused()) {
        throw new InputException(o.message());
      }
      if (!o.planned()) {
        boolean known = o.neededBytesPerGpu() > 0;
        if (leastNeed == null || (known && (!(leastNeed.neededBytesPerGpu() > 0)
            || o.neededBytesPerGpu() < leastNeed.neededBytesPerGpu()))) {
          leastNeed = o;
        }
        continue;
      }
      if (best == null || InterOpPlanner.isBetter(o.iterationSeconds(), o.stages(),
          best.iterationSeconds(), best.stages())) {
        best = o;
      }
    }
    Require.that(best != null || leastNeed != null, "no microbatch size was planned");
    return best != null ? best : leastNeed;
  }
}
