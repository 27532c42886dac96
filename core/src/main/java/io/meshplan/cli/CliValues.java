package io.meshplan.cli;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the value syntaxes of the command line, with one-line errors naming the flag. */
final class CliValues {
  private static final Pattern BYTES = Pattern.compile(
      "([0-9]+(?:\\.[0-9]+)?)[ \t]*(B|KB|MB|GB|TB|PB|KIB|MIB|GIB|TIB|PIB|K|M|G|T|P)?");

  /**
   * The largest latency or inverse bandwidth factor: costs are factor x bytes (up to 2^50) summed
   * over up to millions of terms, which stays far below the double range (1.8e308) at 1e30.
   */
  static final double MAX_COST_FACTOR = 1e30;

  private CliValues() {}

  /**
   * Reads {@code --prices}.
   *
   * @param prices the value, or null when not given
   * @return whether kernel-level prices were asked for
   * @throws io.meshplan.util.InputException for a value other than public or kernel
   */
  static boolean kernelPrices(String prices) {
    if (prices == null) {
      return false;
    }
    String w = Words.trimmed(prices).toLowerCase(java.util.Locale.ROOT);
    if (!w.equals("kernel") && !w.equals("public")) {
      throw new io.meshplan.util.InputException("--prices '" + prices + "' is unknown; use "
          + "public (the shipped fitted factors, the default) or kernel (kernel-level prices)");
    }
    return w.equals("kernel");
  }

  /**
   * Converts an integer flag's value, in place of picocli's own converter, which reads every
   * Unicode decimal digit ({@code --global-batch} with a fullwidth eight read as 8): only an
   * optional sign and ASCII digits are taken ({@link AsciiDigits}).
   *
   * @param text the value
   * @return the int
   * @throws picocli.CommandLine.TypeConversionException naming the value, which picocli prefixes
   *     with the flag
   */
  static Integer wholeInt(String text) {
    long v;
    try {
      v = wholeValue(text);
    } catch (NumberFormatException e) {
      throw outside(text, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      throw outside(text, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }
    return (int) v;
  }

  /** The refusal of a whole number past the flag's type, in digits grouped by thousands. */
  private static picocli.CommandLine.TypeConversionException outside(String text, long min,
      long max) {
    return new picocli.CommandLine.TypeConversionException("'" + text + "' is out of range: "
        + "this flag takes a whole number from " + String.format(java.util.Locale.ROOT,
            "%,d to %,d", min, max));
  }

  /**
   * The value of a whole number in ASCII digits.
   *
   * @throws NumberFormatException where it is past a long
   */
  private static long wholeValue(String text) {
    if (!AsciiDigits.isWhole(text)) {
      throw new picocli.CommandLine.TypeConversionException("'" + text + "' is not a whole "
          + "number written in ASCII digits 0-9");
    }
    return AsciiDigits.parseLong(text);
  }

  /**
   * Converts a decimal flag's value, in place of picocli's, which takes what Java's
   * {@code Double.valueOf} does: hexadecimal ({@code 0x1p3} read as 8), a type suffix ({@code 5d},
   * {@code 2f}) and blanks around it. Only ASCII digits with an optional sign, fraction and
   * exponent are read, and {@code NaN} and {@code Infinity}, which each flag's own range check,
   * where the value is used, refuses in the flag's words, as it does a number past a double.
   *
   * @param text the value
   * @return the number
   * @throws picocli.CommandLine.TypeConversionException naming the value
   */
  static Double decimal(String text) {
    if (text.matches("[+-]?NaN")) {
      return Double.NaN;
    }
    if (text.matches("[+-]?Infinity")) {
      return text.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    try {
      return AsciiDigits.parseDecimal(text);
    } catch (NumberFormatException e) {
      throw new picocli.CommandLine.TypeConversionException("'"
          + io.meshplan.util.TerminalText.escape(text) + "' is not a number written in ASCII "
          + "digits (such as 8, 0.5 or 1e-3)");
    }
  }

  /**
   * Converts a path flag's value: an empty one names no file (a path of "" is the current
   * directory, where a command would otherwise write or read without being asked).
   *
   * @param text the value
   * @return the path
   */
  static java.nio.file.Path path(String text) {
    if (text.isEmpty()) {
      throw new picocli.CommandLine.TypeConversionException("an empty path names no file");
    }
    try {
      return java.nio.file.Path.of(text);
    } catch (java.nio.file.InvalidPathException e) {
      throw new picocli.CommandLine.TypeConversionException("'"
          + io.meshplan.util.TerminalText.escape(text) + "' is not a path: " + e.getReason());
    }
  }

  /**
   * Converts a long flag's value: see {@link #wholeInt}.
   *
   * @param text the value
   * @return the long
   */
  static Long wholeLong(String text) {
    try {
      return wholeValue(text);
    } catch (NumberFormatException e) {
      throw outside(text, Long.MIN_VALUE, Long.MAX_VALUE);
    }
  }

  /**
   * Parses a mesh shape such as {@code 50x4} or {@code 2x2x2}.
   *
   * @param flag the flag, for messages
   * @param text the value
   * @return the axis sizes
   */
  static int[] mesh(String flag, String text) {
    String[] parts = Words.trimmed(text).split("[xX]", -1);
    int[] shape = new int[parts.length];
    for (int i = 0; i < parts.length; i++) {
      shape[i] = positiveInt(flag, text, parts[i]);
    }
    return shape;
  }

  /**
   * Parses a comma-separated list of non-negative numbers such as {@code 1,0.01}.
   *
   * @param flag the flag
   * @param text the value
   * @return the numbers
   */
  static double[] numbers(String flag, String text) {
    String[] parts = Words.trimmed(text).split(",", -1);
    double[] out = new double[parts.length];
    for (int i = 0; i < parts.length; i++) {
      try {
        out[i] = AsciiDigits.parseDecimal(Words.trimmed(parts[i]));
      } catch (NumberFormatException e) {
        throw new InputException(flag + " '" + text + "': '" + parts[i]
            + "' is not a number; expected comma-separated numbers such as 1,0.01");
      }
      if (!(out[i] >= 0) || Double.isInfinite(out[i])) {
        throw new InputException(flag + " '" + text + "': values must be finite and >= 0");
      }
      if (out[i] > MAX_COST_FACTOR) {
        throw new InputException(flag + " '" + text + "': " + Words.trimmed(parts[i])
            + " is too large; at most 1e30, since larger factors overflow the cost sums");
      }
    }
    return out;
  }

  /**
   * Parses a byte size such as {@code 32GiB}, {@code 1000MB} or {@code 1073741824B}. Decimal units
   * (KB, MB, GB, TB) are powers of 1000; binary units (KiB, ...) and the bare letters K, M, G, T
   * are powers of 1024. The unit is required: {@code --memory 80} would be 80 bytes where the user
   * meant 80 GB, a capacity no GPU has, so a bare number is refused rather than read as bytes.
   *
   * @param flag the flag
   * @param text the value
   * @return bytes
   */
  static double bytes(String flag, String text) {
    Matcher m = BYTES.matcher(Words.trimmed(text).toUpperCase(Locale.ROOT));
    if (!m.matches()) {
      throw new InputException(flag + " '" + text
          + "' is not a size; expected a number with a unit such as 32GiB or 1000MB");
    }
    if (m.group(2) == null) {
      String n = io.meshplan.util.Words.clipped(m.group(1));
      throw new InputException(flag + " '" + n + "' has no unit; write one, such as " + n
          + "GiB (2^30 bytes), " + n + "GB (10^9) or " + n + "B");
    }
    double v = AsciiDigits.parseDecimal(m.group(1));
    String unit = m.group(2);
    double mult = switch (unit) {
      case "B" -> 1;
      case "KB" -> 1e3;
      case "MB" -> 1e6;
      case "GB" -> 1e9;
      case "TB" -> 1e12;
      case "K", "KIB" -> 1024.0;
      case "M", "MIB" -> 1024.0 * 1024;
      case "G", "GIB" -> 1024.0 * 1024 * 1024;
      case "PB" -> 1e15;
      case "P", "PIB" -> 1024.0 * 1024 * 1024 * 1024 * 1024;
      default -> 1024.0 * 1024 * 1024 * 1024;
    };
    double bytes = v * mult;
    if (!(bytes > 0)) {
      throw new InputException(flag + " '" + text + "' must be positive");
    }
    // A device's memory, not a number of digits: past 1 PiB (the largest tensor meshplan reads,
    // beyond any device) a size is a typo; 1e309 bytes overflowed to an internal error.
    if (bytes > io.meshplan.util.Checked.MAX_TENSOR_BYTES) {
      throw new InputException(flag + " '" + io.meshplan.util.Words.clipped(text)
          + "' is more than 1 PiB, beyond any device's memory");
    }
    return bytes;
  }

  /**
   * The path a flag value names when it is an existing file, else null (for values that may be
   * either a file or a short form, such as {@code --cluster}).
   *
   * @param text the value
   * @return the path or null
   */
  static java.nio.file.Path existingFile(String text) {
    try {
      java.nio.file.Path p = java.nio.file.Path.of(text);
      return java.nio.file.Files.exists(p) ? p : null;
    } catch (java.nio.file.InvalidPathException e) {
      return null;
    }
  }

  private static int positiveInt(String flag, String whole, String part) {
    try {
      int v = AsciiDigits.parseInt(Words.trimmed(part));
      if (v <= 0) {
        throw new InputException(flag + " '" + whole + "': every size must be positive, got "
            + v);
      }
      return v;
    } catch (NumberFormatException e) {
      throw new InputException(flag + " '" + whole
          + "' is malformed; expected sizes joined by 'x' such as 50x4");
    }
  }

  /**
   * Parses {@code --memory} for a GPU: a capacity above the GPU's physical memory cannot be
   * used, so it is refused rather than priced.
   *
   * @param text the value, e.g. 70GiB
   * @param gpu the GPU
   * @return bytes, at most the GPU's memory
   */
  static double memoryOf(String text, io.meshplan.cluster.GpuSpec gpu) {
    double b = bytes("--memory", text);
    if (b > gpu.hbmBytes()) {
      throw new io.meshplan.util.InputException("--memory " + text + " is more than the "
          + io.meshplan.util.Units.formatBytes(gpu.hbmBytes()) + " of physical memory of one "
          + gpu.name() + "; give at most " + io.meshplan.util.Units.formatBytes(gpu.hbmBytes()));
    }
    return b;
  }

  /**
   * The names of the flags given: those of {@code flags} (pairs of a name and its value, a
   * boolean flag's value {@code true} or null) whose value is not null, in their order.
   *
   * @param flags the flags, {@code {name, value}} each
   * @return the names given
   */
  static java.util.List<String> given(Object[][] flags) {
    java.util.List<String> g = new java.util.ArrayList<>();
    for (Object[] f : flags) {
      if (f[1] != null) {
        g.add((String) f[0]);
      }
    }
    return g;
  }
}
