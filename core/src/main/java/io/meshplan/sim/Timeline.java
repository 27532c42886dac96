package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.List;

/**
 * Everything that happened in one simulated iteration.
 *
 * @param events every event, sorted by {@link Event#ORDER}
 * @param groups the timing of each device group, by group index
 * @param iterationSeconds when the last event of any group ends, seconds
 */
public record Timeline(List<Event> events, List<GroupTiming> groups, double iterationSeconds) {
  /** Copies the lists and checks the time. */
  public Timeline {
    events = List.copyOf(events);
    groups = List.copyOf(groups);
    Require.nonNegative(iterationSeconds, "iterationSeconds");
  }
}
