package io.meshplan.util;

import java.util.Locale;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses sizes and bandwidths written with units. Binary prefixes (KiB, MiB, GiB, TiB, PiB) are
 * powers of 1024; decimal ones (KB, MB, GB, TB, PB) powers of 1000. For bandwidths a lower-case {@code b}
 * ({@code Gbps}, {@code Gb/s}) means bits and an upper-case {@code B} ({@code GBps}, {@code GB/s})
 * means bytes, the networking convention.
 */
public final class Units {
  /** Spaces and tabs may stand around a figure and its unit; no other character may. */
  private static final Pattern SIZE =
      Pattern.compile("[ \t]*([0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[ \t]*([KMGTP]?i?B?)[ \t]*");
  private static final Pattern BW = Pattern.compile(
      "[ \t]*([0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[ \t]*([KMGTP]?)(B|b|bit|bits)?(ps|/s)?"
      + "[ \t]*");

  private Units() {}

  /**
   * Parses a size such as {@code 32KiB}, {@code 4GiB}, {@code 2GB} or {@code 1024}.
   *
   * @param text the text
   * @return bytes, or empty if the text is not a size
   */
  public static OptionalDouble parseBytes(String text) {
    Matcher m = SIZE.matcher(text);
    if (!m.matches()) {
      return OptionalDouble.empty();
    }
    double v = AsciiDigits.parseDecimal(m.group(1));
    String u = m.group(2);
    if (u.isEmpty() || u.equals("B")) {
      return OptionalDouble.of(v);
    }
    boolean binary = u.contains("i");
    int power = "KMGTP".indexOf(u.charAt(0)) + 1;
    return OptionalDouble.of(v * Math.pow(binary ? 1024 : 1000, power));
  }

  /**
   * Parses a bandwidth such as {@code 450GB/s}, {@code 92.66GBps}, {@code 400Gbps} or a bare
   * number of bytes/s.
   *
   * @param text the text
   * @return bytes/s, or empty if the text is not a bandwidth
   */
  public static OptionalDouble parseBandwidth(String text) {
    Matcher m = BW.matcher(text);
    if (!m.matches()) {
      return OptionalDouble.empty();
    }
    double v = AsciiDigits.parseDecimal(m.group(1));
    String prefix = m.group(2);
    String unit = m.group(3);
    int power = prefix.isEmpty() ? 0 : "KMGTP".indexOf(prefix) + 1;
    double scale = Math.pow(1000, power);
    boolean bits = unit != null && !unit.equals("B");
    if (unit == null && power > 0) {
      return OptionalDouble.empty();
    }
    if (unit != null && m.group(4) == null) {
      // '360GB' is a size, not a rate: a unit of bytes or bits needs its '/s' or 'ps'.
      return OptionalDouble.empty();
    }
    return OptionalDouble.of(v * scale / (bits ? 8 : 1));
  }

  /**
   * A number rounded to {@code digits} significant digits, half up on {@link Double#toString}'s
   * digits: the value {@code String.format("%.<digits>g")} prints, without printing and reading it
   * back. NaN and the infinities are returned as they are.
   *
   * @param v the number
   * @param digits significant digits, at least 1
   * @return the rounded number
   */
  public static double roundSignificant(double v, int digits) {
    return Double.isFinite(v) ? java.math.BigDecimal.valueOf(v)
        .round(new java.math.MathContext(digits, java.math.RoundingMode.HALF_UP)).doubleValue()
        : v;
  }

  /**
   * Formats bytes with a binary prefix, e.g. {@code 32KiB}, {@code 1.5GiB}, {@code 1000MiB}: three
   * significant digits, never an exponent (from 999.5 up to the next prefix, 1,024, the figure is
   * a whole number, where {@code %.3g} would print {@code 1.00e+03}), prefixes up to EiB (2^60;
   * meshplan's sizes stay below 2^63 bytes, 8 EiB).
   *
   * @param bytes the size
   * @return the text
   */
  public static String formatBytes(double bytes) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int i = 0;
    double v = bytes;
    while (Math.abs(v) >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    if (v == Math.rint(v) || Math.abs(v) >= 999.5) {
      return String.format(Locale.ROOT, "%.0f%s", v, units[i]);
    }
    return String.format(Locale.ROOT, "%.3g%s", v, units[i]);
  }

  /**
   * The range of a refusal: {@code "a number from 0.1 to 1,000,000 GB/s"}, for "... must be " it.
   *
   * @param min the lower bound, included
   * @param max the upper bound, included
   * @param unit the unit, after the upper bound
   * @return the words
   */
  public static String range(double min, double max, String unit) {
    return "a number from " + figure(min) + " to " + figure(max) + " " + unit;
  }

  /**
   * Formats a bound of a range for a message, in plain digits with thousands separators and no
   * trailing zeros, e.g. {@code 0.1}, {@code 65,536}, {@code 1,000,000}.
   *
   * @param v the bound, finite
   * @return the text
   */
  public static String figure(double v) {
    java.text.DecimalFormat f = new java.text.DecimalFormat("#,##0.######",
        java.text.DecimalFormatSymbols.getInstance(Locale.ROOT));
    return f.format(v);
  }
}
