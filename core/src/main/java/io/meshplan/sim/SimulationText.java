package io.meshplan.sim;

import io.meshplan.util.Words;
import java.util.Locale;

/**
 * Writes a {@link SimulationResult} for people: a summary, the time breakdown of the critical
 * stage, the memory of the worst stage, the mean communication volume per GPU by axis, and one
 * line per stage. Numbers use {@link Locale#ROOT}, so
 * the text does not depend on the machine.
 */
public final class SimulationText {
  private static final double GIB = 1024.0 * 1024 * 1024;

  private SimulationText() {}

  /**
   * Renders the result.
   *
   * @param result the result
   * @return lines ending with a newline
   */
  public static String write(SimulationResult result) {
    return write(result, "tokens");
  }

  /**
   * Renders the result with the throughput counted in a unit other than tokens.
   *
   * @param result the result; its {@code tokensPerSecond} counts the unit
   * @param unit what the throughput counts, e.g. {@code microbatches}
   * @return lines ending with a newline
   */
  public static String write(SimulationResult result, String unit) {
    return write(result, unit, java.util.Optional.empty());
  }

  /**
   * Renders the result with, below the peak memory, whether it fits in a GPU's memory.
   *
   * @param result the result; its {@code tokensPerSecond} counts the unit
   * @param unit what the throughput counts, e.g. {@code tokens} or {@code microbatches}
   * @param fit the peak against the memory a GPU may use, or empty to leave the verdict out
   * @return lines ending with a newline
   */
  public static String write(SimulationResult result, String unit,
      java.util.Optional<MemoryFit> fit) {
    return write(result, unit, fit, java.util.Optional.empty());
  }

  /**
   * Renders the result with the memory verdict and, on the iteration line, the 90% interval of
   * the predicted time and throughput.
   *
   * @param result the result; its {@code tokensPerSecond} counts the unit
   * @param unit what the throughput counts, e.g. {@code tokens} or {@code microbatches}
   * @param fit the peak against the memory a GPU may use, or empty to leave the verdict out
   * @param band the interval, or empty where the prices give none
   * @return lines ending with a newline
   */
  public static String write(SimulationResult result, String unit,
      java.util.Optional<MemoryFit> fit, java.util.Optional<PredictionBand> band) {
    StringBuilder out = new StringBuilder();
    boolean overlapped = summary(out, result, unit, band);
    MemoryUse m = result.memory();
    line(out, "peak memory per GPU (stage %d): %.2f GiB = weights %.2f + gradients %.2f +"
        + " optimizer state %.2f%n  + activations %.2f + temporaries %.2f GiB", result.memoryGroup(),
        m.totalBytes() / GIB, m.weightsBytes() / GIB, m.gradientsBytes() / GIB,
        m.optimizerStateBytes() / GIB, m.activationsBytes() / GIB, m.temporariesBytes() / GIB);
    fit.ifPresent(f -> line(out, "%s: %s", f.fits() ? "fits" : "does not fit", f.words()));
    stages(out, result, overlapped);
    return out.toString();
  }

  /** The schedule, throughput, time breakdown and overlap lines; whether anything overlapped. */
  private static boolean summary(StringBuilder out, SimulationResult result, String unit,
      java.util.Optional<PredictionBand> band) {
    double t = result.iterationSeconds();
    line(out, "schedule %s, %s, %s", result.schedule(),
        Words.count(result.microbatches(), "microbatch"), Words.count(result.stages().size(),
            "stage"));
    String interval = band.map(b -> String.format(Locale.ROOT, " (%.3g-%.3g s, 90%%)",
        t * b.low(), t * b.high())).orElse("");
    line(out, "iteration %.4f s%s, %.0f " + unit.replace("%", "%%") + "/s, %.1f TFLOP/s per "
        + "GPU (hardware %.1f), MFU %.1f%%", t, interval, result.tokensPerSecond(),
        result.tflopsPerGpu(), result.hardwareTflopsPerGpu(), 100 * result.mfu());
    TimeBreakdown b = result.breakdown();
    line(out, "time (stage %d): compute %.4f s (%.1f%%, recompute %.4f s), bubble %.4f s"
        + " (%.1f%%), optimizer %.4f s (%.1f%%)", result.criticalGroup(), b.computeSeconds(),
        pct(b.computeSeconds(), t), b.recomputeSeconds(), b.bubbleSeconds(),
        pct(b.bubbleSeconds(), t), b.optimizerSeconds(), pct(b.optimizerSeconds(), t));
    line(out, "exposed communication (stage %d): %.4f s (%.1f%%: tensor %.4f, %spipeline %.4f,"
        + " data %.4f)", result.criticalGroup(), b.exposedCommunicationSeconds(),
        pct(b.exposedCommunicationSeconds(), t), b.tensorParallelSeconds(),
        b.exchangeSeconds() > 0 ? String.format(java.util.Locale.ROOT,
            "a2a/ring %.4f, ", b.exchangeSeconds()) : "",
        b.pipelineSeconds(), b.dataParallelSeconds());
    boolean overlapped = result.stages().stream()
        .anyMatch(s -> s.timing().breakdown().hiddenCommunicationSeconds() > 0);
    if (overlapped) {
      line(out, "overlap (stage %d): %.4f s of communication hidden under compute, which it slows"
          + " by %.4f s (%.1f%%)", result.criticalGroup(), b.hiddenCommunicationSeconds(),
          b.overlapSlowdownSeconds(), pct(b.overlapSlowdownSeconds(), t));
    }
    return overlapped;
  }

  /** The expert and context exchanges' volumes, where there are any, for the volume line. */
  static String exchanges(CommVolume c) {
    return (c.expertParallelBytes() > 0 ? String.format(Locale.ROOT, ", ep %.2f GiB",
        c.expertParallelBytes() / GIB) : "") + (c.contextParallelBytes() > 0
        ? String.format(Locale.ROOT, ", cp %.2f GiB", c.contextParallelBytes() / GIB) : "");
  }

  /** The communication line and the table of stages. */
  private static void stages(StringBuilder out, SimulationResult result, boolean overlapped) {
    CommVolume c = result.commBytesPerGpu();
    line(out, "communication per GPU per iteration (mean of %s): tp %.2f GiB, dp %.2f GiB,"
        + " pp %.2f GiB%s", Words.count(gpus(result), "GPU"), c.tensorParallelBytes() / GIB,
        c.dataParallelBytes() / GIB, c.pipelineBytes() / GIB, exchanges(c));
    String hiddenHead = overlapped ? String.format(Locale.ROOT, " %10s", "hidden s") : "";
    line(out, "%-6s %-12s %8s %4s %4s %10s %10s%s %10s %10s %9s %10s", "stage", "chunks",
        "devices", "dp", "tp", "compute s", "comm s", hiddenHead, "bubble s", "optim s",
        "in-flight", "peak GiB");
    for (StageResult s : result.stages()) {
      TimeBreakdown sb = s.timing().breakdown();
      String hidden = overlapped
          ? String.format(Locale.ROOT, " %10.4f", sb.hiddenCommunicationSeconds()) : "";
      line(out, "%-6d %-12s %8d %4d %4d %10.4f %10.4f%s %10.4f %10.4f %9d %10.2f", s.group(),
          s.virtualStages().toString().replace(" ", ""), s.devices(), s.dataParallel(),
          s.tensorParallel(), sb.computeSeconds(), sb.exposedCommunicationSeconds(), hidden,
          sb.bubbleSeconds(), sb.optimizerSeconds(), s.timing().peakInFlightMicrobatches(),
          s.memory().totalBytes() / GIB);
    }
  }

  private static long gpus(SimulationResult result) {
    long n = 0;
    for (StageResult s : result.stages()) {
      n += s.devices();
    }
    return n;
  }

  private static double pct(double part, double whole) {
    return whole > 0 ? 100 * part / whole : 0;
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args).stripTrailing()).append('\n');
  }
}
