package io.meshplan.calibrate;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.Checked;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * The numbers a benchmark log row may hold to count as a measurement. Every parser checks its row
 * here, in SI units, before it makes a {@link MeasuredPoint}, so that a value that is finite but no
 * benchmark can produce (a time of 1e-300 us, a bus bandwidth of 1e308 GB/s) is skipped with a
 * warning at its line like a row of {@code N/A}, instead of overflowing when it is scaled to SI
 * units (1e308 GB/s is infinite in bytes/s) or squared by the fitters ({@link AlphaBetaFitter}
 * weighs each point by 1/t^2, which is infinite for t = 1e-306 s and then makes alpha NaN).
 *
 * <p>The bounds keep every product the fitters form inside the double range: with t &gt;= 1e-8 s and
 * bus bytes &lt;= 2 x 2^50 ~ 2.3e15, a weight is at most 1/(1e-8)^2 = 1e16 and a weighted x^2 at most
 * 1e16 x (2.3e15)^2 ~ 5e46, far below 1.8e308.
 */
public final class MeasurementBounds {
  /**
   * The shortest time one collective may take, in seconds: 1e-8 s = 0.01 us, the finest time
   * nccl-tests prints ({@code %7.2f} microseconds in {@code src/common.cu}; a shorter time shows
   * as 0.00). No collective completes faster: launching the kernel alone takes microseconds.
   */
  public static final double MIN_SECONDS = 1e-8;
  /** The longest time one collective may take to count as a measurement: one hour, in seconds. */
  public static final double MAX_SECONDS = 3600;
  /**
   * The highest bandwidth a row may report, in bytes/s: 1e15 (1 PB/s = 1,000,000 GB/s), over 500
   * times the 1.8 TB/s bus bandwidth of an NVLink 5 GPU with in-network reduction, the fastest
   * there is. The cluster's own bound ({@link PhysicalBandwidth}) is checked after this one.
   */
  public static final double MAX_BANDWIDTH = 1e15;
  /** The largest message a row may report: 2^50 bytes (1 PiB), beyond any GPU's memory. */
  public static final long MAX_BYTES = Checked.MAX_TENSOR_BYTES;
  /** The most GPUs a log's group may hold: {@link Checked#MAX_DEVICES}, as every mesh. */
  public static final int MAX_GPUS = Checked.MAX_DEVICES;

  private MeasurementBounds() {}

  /**
   * Why a row's numbers cannot be a measurement, or null when they can. NaN marks a number the row
   * does not state.
   *
   * @param bytes the message size in bytes, or NaN
   * @param seconds the time of one operation in seconds, or NaN
   * @param algbw the algorithm bandwidth in bytes/s, or NaN
   * @param busbw the bus bandwidth in bytes/s, or NaN
   * @return e.g. "a time of 1.0e-306 s (below 0.01 us, the finest time nccl-tests prints)"
   */
  public static String implausible(double bytes, double seconds, double algbw, double busbw) {
    if (bytes > MAX_BYTES) {
      return Double.isInfinite(bytes) ? "a size past any number (more than 1 PiB)"
          : String.format(Locale.ROOT, "a size of %.4g bytes (more than 1 PiB)", bytes);
    }
    if (seconds < MIN_SECONDS) {
      return String.format(Locale.ROOT, "a time of %.4g s (below 0.01 us, the finest time"
          + " nccl-tests prints)", seconds);
    }
    if (seconds > MAX_SECONDS) {
      return String.format(Locale.ROOT, "a time of %.4g s (more than an hour)", seconds);
    }
    if (busbw > MAX_BANDWIDTH || algbw > MAX_BANDWIDTH) {
      double bw = Math.max(Double.isNaN(busbw) ? 0 : busbw, Double.isNaN(algbw) ? 0 : algbw);
      // A bandwidth that overflowed a double (a size over a time of 1e-300 s) is no figure.
      return Double.isInfinite(bw) ? "a bandwidth past any number (above 1 PB/s)"
          : String.format(Locale.ROOT, "a bandwidth of %.4g GB/s (above 1 PB/s)", bw / 1e9);
    }
    return null;
  }

  /**
   * The GPUs of a process that runs {@code threads} threads of {@code gpus} GPUs each (nccl-tests'
   * nThread x nGpus), when both are counts and the product is at most {@link #MAX_GPUS}.
   *
   * @param threads the thread count, empty when unreadable
   * @param gpus the GPUs of a thread, empty when unreadable
   * @return the product, or empty
   */
  public static OptionalInt gpus(OptionalInt threads, OptionalInt gpus) {
    if (threads.isEmpty() || gpus.isEmpty()
        || (long) threads.getAsInt() * gpus.getAsInt() > MAX_GPUS) {
      return OptionalInt.empty();
    }
    return OptionalInt.of(threads.getAsInt() * gpus.getAsInt());
  }

  /**
   * Reads a count or id a log states in ASCII digits (a GPU count, a rank, a thread count).
   *
   * @param text the digits
   * @param min the smallest value allowed
   * @param max the largest value allowed
   * @return the value, or empty when the text is not a whole number from min to max (one too long
   *     for a long included)
   */
  public static OptionalInt count(String text, int min, int max) {
    if (text.startsWith("+")) {
      // A log prints counts as digits; a sign is not nccl-tests' and not read.
      return OptionalInt.empty();
    }
    long v;
    try {
      v = AsciiDigits.parseLong(text);
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
    return v >= min && v <= max ? OptionalInt.of((int) v) : OptionalInt.empty();
  }
}
