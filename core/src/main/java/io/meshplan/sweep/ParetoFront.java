package io.meshplan.sweep;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Pareto front of throughput against cluster size: the planned points that no other point of
 * the same model and sequence length beats with at most as many GPUs and at least as many tokens
 * per second (one of the two strictly). Ties in both go to the earlier point in grid order.
 */
public final class ParetoFront {
  private ParetoFront() {}

  /**
   * The fronts, one per (model, sequence length) in grid order.
   *
   * @param results the sweep's results
   * @return for each "model, seq N" group, its front ordered by GPU count
   */
  public static Map<String, List<PointResult>> of(List<PointResult> results) {
    return of(results, PointResult::tokensPerSecond);
  }

  /**
   * The fronts of another figure, one per (model, sequence length) in grid order: the points no
   * point of as many GPUs or fewer beats on it.
   *
   * @param results the sweep's results
   * @param better the figure, higher is better (NaN never on the front)
   * @return for each "model, seq N" group, its front ordered by GPU count
   */
  public static Map<String, List<PointResult>> of(List<PointResult> results,
      java.util.function.ToDoubleFunction<PointResult> better) {
    Map<String, List<PointResult>> groups = new LinkedHashMap<>();
    for (PointResult r : results) {
      if (r.status() == PointStatus.OK) {
        groups.computeIfAbsent(r.point().model() + ", seq " + r.point().seq(),
            k -> new ArrayList<>()).add(r);
      }
    }
    Map<String, List<PointResult>> out = new LinkedHashMap<>();
    for (Map.Entry<String, List<PointResult>> e : groups.entrySet()) {
      List<PointResult> sorted = new ArrayList<>(e.getValue());
      sorted.sort(Comparator.comparingInt((PointResult r) -> r.point().gpus())
          .thenComparing(Comparator.comparingDouble(better).reversed())
          .thenComparingInt(r -> r.point().index()));
      List<PointResult> front = new ArrayList<>();
      double best = Double.NEGATIVE_INFINITY;
      for (PointResult r : sorted) {
        double v = better.applyAsDouble(r);
        if (v > best) {
          front.add(r);
          best = v;
        }
      }
      out.put(e.getKey(), front);
    }
    return out;
  }
}
