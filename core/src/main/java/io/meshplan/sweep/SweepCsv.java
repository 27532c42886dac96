package io.meshplan.sweep;

import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * Sweep results as CSV (RFC 4180, one header row, one row per point in grid order). Figures that do
 * not apply are empty. Fixed decimals: seconds 6, tokens/s 1, TFLOP/s 2, MFU 4, USD 6; bytes are
 * whole numbers.
 */
public final class SweepCsv {
  private SweepCsv() {}

  /** The header row's fields. */
  static final List<String> HEADER = List.of("index", "model", "seq", "gpu", "fabric", "nodes",
      "gpus_per_node", "gpus", "global_batch", "microbatches", "overlap_grad_reduce", "status",
      "iteration_s", "tokens_per_s", "tflops_per_gpu", "mfu", "peak_memory_bytes_per_gpu",
      "needed_memory_bytes_per_gpu", "iteration_lower_bound_s", "usd_per_million_tokens",
      "layout", "message", "attention", "overlap_param_gather", "tp_comm_overlap", "fsdp_prefetch",
      "gradient_accumulation_fusion", "dtype", "fused_cross_entropy", "grad_reduce_in_bf16",
      "train_iterations", "train_days", "ettr", "usd_to_train", "moe_dispatcher");

  /**
   * Writes the CSV.
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty to leave the cost column empty
   * @return the CSV text, lines ending in LF
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour) {
    return write(results, usdPerGpuHour, java.util.Map.of());
  }

  /**
   * Writes the CSV with each planned point's run of {@code --train-tokens}.
   *
   * @param results the results in grid order
   * @param usdPerGpuHour the GPU-hour price, or empty to leave the cost columns empty
   * @param runs the runs by point index; a point without one leaves the run's columns empty
   * @return the CSV text, lines ending in LF
   */
  public static String write(List<PointResult> results, OptionalDouble usdPerGpuHour,
      java.util.Map<Integer, TrainingOutcome> runs) {
    StringBuilder sb = new StringBuilder(String.join(",", HEADER)).append('\n');
    for (PointResult r : results) {
      SweepPoint p = r.point();
      String[] f = {Integer.toString(p.index()), p.model(), Integer.toString(p.seq()), p.gpu(),
          p.fabric(), Integer.toString(p.nodes()), Integer.toString(p.gpusPerNode()),
          Integer.toString(p.gpus()), Integer.toString(p.globalBatch()),
          p.microbatches() == 0 ? "auto" : Integer.toString(p.microbatches()),
          Boolean.toString(p.overlapGradReduce()), r.status().label(),
          fixed(r.iterationSeconds(), 6), fixed(r.tokensPerSecond(), 1),
          fixed(r.tflopsPerGpu(), 2), fixed(r.mfu(), 4), whole(r.peakMemoryBytesPerGpu()),
          whole(r.neededBytesPerGpu()), fixed(r.lowerBoundSeconds(), 6),
          fixed(cost(r, usdPerGpuHour), 6), r.layout(), r.message(), p.attention(),
          Boolean.toString(p.overlaps().paramGather()),
          Boolean.toString(p.overlaps().tensorComm()),
          Boolean.toString(p.overlaps().fsdpPrefetch()),
          Boolean.toString(p.overlaps().gradAccumFusion()), p.dtype(),
          Boolean.toString(p.overlaps().lossFusion()),
          Boolean.toString(p.overlaps().bf16GradReduce()),
          runs.containsKey(p.index()) ? Long.toString(runs.get(p.index()).iterations()) : "",
          runs.containsKey(p.index()) ? fixed(runs.get(p.index()).days(), 4) : "",
          runs.containsKey(p.index()) ? fixed(runs.get(p.index()).ettr(), 4) : "",
          runs.containsKey(p.index()) && usdPerGpuHour.isPresent()
              ? fixed(runs.get(p.index()).usd(p.gpus(), usdPerGpuHour.getAsDouble()), 2) : "",
          p.overlaps().dispatcher().word()};
      for (int i = 0; i < f.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(quote(f[i]));
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /**
   * The cost per million tokens of a planned point, or NaN.
   *
   * @param r the result
   * @param usdPerGpuHour the price, or empty
   * @return USD per million tokens, or NaN
   */
  static double cost(PointResult r, OptionalDouble usdPerGpuHour) {
    if (usdPerGpuHour.isEmpty() || r.status() != PointStatus.OK) {
      return Double.NaN;
    }
    return TokenCost.usdPerMillionTokens(usdPerGpuHour.getAsDouble(), r.point().gpus(),
        r.iterationSeconds(), r.point().tokensPerIteration());
  }

  static String fixed(double v, int decimals) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  static String whole(double v) {
    return Double.isNaN(v) ? "" : Long.toString(Math.round(v));
  }

  private static String quote(String s) {
    if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0
        && s.indexOf('\r') < 0) {
      return s;
    }
    return '"' + s.replace("\"", "\"\"") + '"';
  }
}
