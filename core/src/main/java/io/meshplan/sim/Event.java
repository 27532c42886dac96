package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.Comparator;

/**
 * One interval on the timeline of a device group.
 *
 * @param group the device group (pipeline stage) that runs it, or that sends for {@link
 *     EventKind#SEND}
 * @param virtualStage the virtual stage (model chunk) it belongs to; for a send, the sending stage
 * @param microbatch the microbatch, or -1 for per-iteration events (gradient sync, optimizer,
 *     parameter gather)
 * @param kind what it is
 * @param startSeconds start, seconds from the start of the iteration
 * @param endSeconds end, seconds from the start of the iteration
 */
public record Event(int group, int virtualStage, int microbatch, EventKind kind,
    double startSeconds, double endSeconds) {

  /** The deterministic order of a timeline: start, end, group, kind, virtual stage, microbatch. */
  public static final Comparator<Event> ORDER = Comparator.comparingDouble(Event::startSeconds)
      .thenComparingDouble(Event::endSeconds).thenComparingInt(Event::group)
      .thenComparing(Event::kind).thenComparingInt(Event::virtualStage)
      .thenComparingInt(Event::microbatch);

  /** Checks the interval. */
  public Event {
    Require.that(group >= 0 && virtualStage >= 0 && microbatch >= -1, () ->
        "bad event indices " + group + ", " + virtualStage + ", " + microbatch);
    Require.nonNull(kind, "kind");
    Require.nonNegative(startSeconds, "startSeconds");
    Require.nonNegative(endSeconds, "endSeconds");
    Require.that(endSeconds >= startSeconds, () -> "event ends (" + endSeconds + ") before it starts ("
        + startSeconds + ")");
  }

  /**
   * Length of the interval.
   *
   * @return seconds
   */
  public double durationSeconds() {
    return endSeconds - startSeconds;
  }

  /**
   * Whether this is a forward or backward pass.
   *
   * @return true for compute
   */
  public boolean isCompute() {
    return kind == EventKind.FORWARD || kind == EventKind.BACKWARD;
  }
}
