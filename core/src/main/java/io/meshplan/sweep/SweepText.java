package io.meshplan.sweep;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The human summary of a sweep: counts by status and the {@link ParetoFront} of each model. MFU is
 * a percentage here, as in every text output; CSV and JSONL keep the fraction.
 */
public final class SweepText {
  private SweepText() {}

  /**
   * Writes the summary.
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty to leave out the cost column
   * @return the text
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour) {
    return write(results, usdPerGpuHour, Map.of());
  }

  /**
   * Writes the summary, and with runs of {@code --train-tokens} the front of days to train
   * against GPUs.
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty to leave out the cost column
   * @param runs the runs by point index
   * @return the text
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour,
      Map<Integer, TrainingOutcome> runs) {
    Map<PointStatus, Integer> counts = new EnumMap<>(PointStatus.class);
    for (PointStatus s : PointStatus.values()) {
      counts.put(s, 0);
    }
    for (PointResult r : results) {
      counts.merge(r.status(), 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "sweep: %s: %d planned, %d infeasible, %d timed out, %d rejected%n",
        io.meshplan.util.Words.count(results.size(), "point"), counts.get(PointStatus.OK), counts.get(PointStatus.INFEASIBLE),
        counts.get(PointStatus.TIMED_OUT), counts.get(PointStatus.REJECTED)));
    for (Map.Entry<String, List<PointResult>> e : ParetoFront.of(results).entrySet()) {
      sb.append(String.format(Locale.ROOT, "%nPareto front of tokens/s against GPUs, %s:%n",
          e.getKey()));
      sb.append(String.format(Locale.ROOT, "%6s %6s  %-28s %7s %12s %10s %7s%s%n", "point",
          "gpus", "cluster", "batch", "tokens/s", "iter s", "MFU",
          usdPerGpuHour.isPresent() ? String.format(Locale.ROOT, " %12s", "USD/M tok") : ""));
      for (PointResult r : e.getValue()) {
        SweepPoint p = r.point();
        sb.append(String.format(Locale.ROOT, "%6d %6d  %-28s %7d %12.1f %10.4f %6.1f%%%s%n",
            p.index(), p.gpus(), p.cluster(), p.globalBatch(), r.tokensPerSecond(),
            r.iterationSeconds(), 100 * r.mfu(), usdPerGpuHour.isPresent()
                ? String.format(Locale.ROOT, " %12.4f", SweepCsv.cost(r, usdPerGpuHour)) : ""));
      }
    }
    if (!runs.isEmpty()) {
      java.util.function.ToDoubleFunction<PointResult> faster = r -> {
        TrainingOutcome o = runs.get(r.point().index());
        return o == null || !Double.isFinite(o.wallSeconds()) ? Double.NaN : -o.wallSeconds();
      };
      for (Map.Entry<String, List<PointResult>> e : ParetoFront.of(results, faster).entrySet()) {
        sb.append(String.format(Locale.ROOT, "%nPareto front of days to train against GPUs, %s:%n",
            e.getKey()));
        sb.append(String.format(Locale.ROOT, "%6s %6s  %-28s %7s %10s %10s %7s%s%n", "point",
            "gpus", "cluster", "batch", "iterations", "days", "ETTR",
            usdPerGpuHour.isPresent() ? String.format(Locale.ROOT, " %12s", "USD") : ""));
        for (PointResult r : e.getValue()) {
          SweepPoint p = r.point();
          TrainingOutcome o = runs.get(p.index());
          sb.append(String.format(Locale.ROOT, "%6d %6d  %-28s %7d %10d %10.2f %7s%s%n",
              p.index(), p.gpus(), p.cluster(), p.globalBatch(), o.iterations(), o.days(),
              Double.isNaN(o.ettr()) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * o.ettr()),
              usdPerGpuHour.isPresent() ? String.format(Locale.ROOT, " %12.4g",
                  o.usd(p.gpus(), usdPerGpuHour.getAsDouble())) : ""));
        }
      }
    }
    return sb.toString();
  }
}
