package io.meshplan.calibrate;

import io.meshplan.util.Require;
import java.util.Arrays;

/**
 * A non-decreasing piecewise-linear time curve over message size, the way Alpa's profiling database
 * ({@code alpa/mesh_profiling.py}, {@code _estimate_internal}) interpolates measured (size, time)
 * pairs linearly.
 *
 * <p>Extrapolation, chosen so that the curve stays non-decreasing and never negative: below the
 * smallest measured size the time is the smallest size's time (the latency floor; Alpa extends the
 * first segment instead, which can go negative); above the largest size the time grows at {@code
 * tailSlope}, the bandwidth term of the alpha-beta fit, since large messages are bandwidth bound.
 *
 * @param bytes measured sizes, strictly increasing, each &gt;= 0
 * @param seconds fitted times, non-decreasing, each &gt;= 0
 * @param tailSlope seconds per byte beyond the largest size, &gt;= 0
 */
public record MonotoneCurve(double[] bytes, double[] seconds, double tailSlope) {
  /** Validates the shape and copies the arrays. */
  public MonotoneCurve {
    Require.that(bytes.length == seconds.length && bytes.length > 0,
        "a curve needs as many times as sizes, at least one");
    bytes = bytes.clone();
    seconds = seconds.clone();
    for (int i = 0; i < bytes.length; i++) {
      Require.nonNegative(bytes[i], "curve size");
      Require.nonNegative(seconds[i], "curve time");
      if (i > 0) {
        Require.that(bytes[i] > bytes[i - 1], "curve sizes must increase: " + bytes[i - 1]
            + " then " + bytes[i]);
        Require.that(seconds[i] >= seconds[i - 1], "curve times must not decrease: "
            + seconds[i - 1] + " then " + seconds[i]);
      }
    }
    Require.nonNegative(tailSlope, "tail slope");
  }

  @Override
  public double[] bytes() {
    return bytes.clone();
  }

  @Override
  public double[] seconds() {
    return seconds.clone();
  }

  /**
   * The time for a message size.
   *
   * @param size bytes
   * @return seconds
   */
  public double secondsAt(double size) {
    int n = bytes.length;
    if (size <= bytes[0]) {
      return seconds[0];
    }
    if (size >= bytes[n - 1]) {
      return seconds[n - 1] + tailSlope * (size - bytes[n - 1]);
    }
    int i = Arrays.binarySearch(bytes, size);
    if (i >= 0) {
      return seconds[i];
    }
    int hi = -i - 1;
    int lo = hi - 1;
    double f = (size - bytes[lo]) / (bytes[hi] - bytes[lo]);
    return seconds[lo] + f * (seconds[hi] - seconds[lo]);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof MonotoneCurve c && Arrays.equals(bytes, c.bytes)
        && Arrays.equals(seconds, c.seconds) && tailSlope == c.tailSlope;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes) * 31 + Arrays.hashCode(seconds) + Double.hashCode(tailSlope);
  }

  @Override
  public String toString() {
    return "MonotoneCurve[" + bytes.length + " points, tailSlope=" + tailSlope + "]";
  }
}
