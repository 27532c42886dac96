package io.meshplan.interop.dp;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Drops the stage options that another option beats in latency, static memory and activation
 * memory at once: the stage DP would never prefer them.
 */
public final class ParetoFilter {
  /**
   * Latency, then static and activation memory, then tag, each as {@link Double#compare} orders
   * them: one comparison where a chain of key extractors made four calls per step of the sort.
   */
  private static final Comparator<StageOption> ORDER = (a, b) -> {
    int c = Double.compare(a.latencySeconds(), b.latencySeconds());
    if (c == 0) {
      c = Double.compare(a.staticBytes(), b.staticBytes());
    }
    if (c == 0) {
      c = Double.compare(a.activationBytes(), b.activationBytes());
    }
    return c != 0 ? c : Integer.compare(a.tag(), b.tag());
  };

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
    sorted.sort(ORDER);
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
