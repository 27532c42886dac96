package io.meshplan.interop.dp;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Drops the stage options that another option beats in latency, static memory and activation
 * memory at once: the stage DP would never prefer them.
 */
public final class ParetoFilter {
  private ParetoFilter() {}

  /**
   * The options no other option dominates, in order of latency, then static and activation
   * memory, then tag; of equal options the first in that order (the enumeration order) is kept.
   *
   * @param all the options of one stage
   * @return the options kept
   */
  public static List<StageOption> nonDominated(List<StageOption> all) {
    List<StageOption> sorted = new ArrayList<>(all);
    sorted.sort(Comparator.comparingDouble(StageOption::latencySeconds)
        .thenComparingDouble(StageOption::staticBytes)
        .thenComparingDouble(StageOption::activationBytes)
        .thenComparingInt(StageOption::tag));
    List<StageOption> kept = new ArrayList<>();
    for (StageOption o : sorted) {
      boolean dominated = false;
      for (StageOption k : kept) {
        if (k.staticBytes() <= o.staticBytes() && k.activationBytes() <= o.activationBytes()) {
          dominated = true;
          break;
        }
      }
      if (!dominated) {
        kept.add(o);
      }
    }
    return kept;
  }
}
