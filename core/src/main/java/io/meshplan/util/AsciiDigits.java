package io.meshplan.util;

/**
 * Whole numbers written in ASCII digits, the only ones meshplan reads. Java's {@link
 * Integer#parseInt}, {@link Long#parseLong} and {@link Character#isDigit} accept every Unicode
 * decimal digit (fullwidth U+FF18, Arabic-Indic U+0668, Devanagari U+096E ...), so {@code
 * --global-batch} with a fullwidth eight read as 8, and a log line in another script parsed as
 * numbers. The formats meshplan reads write numbers in ASCII (the JSON and YAML grammars, TOML,
 * the logs of nccl-tests, Megatron-LM and torchtitan), and a lookalike digit in a flag is more
 * likely pasted from a document than meant. Every parse of a whole number from input goes
 * through here, and so does every decimal ({@link #parseDecimal}); a source test keeps the JDK's
 * parsers out of {@code src/main}.
 */
public final class AsciiDigits {
  /** What {@link #parseDecimal} reads: sign, digits, fraction, exponent, ASCII only. */
  private static final java.util.regex.Pattern DECIMAL = java.util.regex.Pattern.compile(
      "[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?");

  private AsciiDigits() {}

  /**
   * Whether a character is an ASCII digit.
   *
   * @param c the character
   * @return true for {@code 0} to {@code 9} only
   */
  public static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /**
   * Parses an int written as an optional sign and ASCII digits.
   *
   * @param s the text
   * @return the value
   * @throws NumberFormatException when the text is anything else or out of range
   */
  public static int parseInt(String s) {
    return Integer.parseInt(check(s, 10));
  }

  /**
   * Parses an int in a radix up to 16, with ASCII digits and letters only.
   *
   * @param s the text
   * @param radix 2 to 16
   * @return the value
   * @throws NumberFormatException when the text is anything else or out of range
   */
  public static int parseInt(String s, int radix) {
    return Integer.parseInt(check(s, radix), radix);
  }

  /**
   * Parses a long written as an optional sign and ASCII digits.
   *
   * @param s the text
   * @return the value
   * @throws NumberFormatException when the text is anything else or out of range
   */
  public static long parseLong(String s) {
    return Long.parseLong(check(s, 10));
  }

  /**
   * Whether a text is an optional sign and at least one ASCII digit.
   *
   * @param s the text
   * @return true when {@link #parseLong} would read it (range aside)
   */
  public static boolean isWhole(String s) {
    try {
      check(s, 10);
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * Parses a decimal written as an optional sign, ASCII digits with an optional fraction, and an
   * optional exponent ({@code 8}, {@code -0.5}, {@code .25}, {@code 1e-3}). Java's {@link
   * Double#parseDouble} also takes hexadecimal ({@code 0x1p3} read as 8), a type suffix ({@code
   * 5d}, {@code 2f}), {@code NaN}, {@code Infinity} and any control character or blank around the
   * number ({@code "1\u0007"} read as 1); none of those is a decimal in the formats meshplan reads.
   *
   * @param s the text
   * @return the value, which may be infinite when the exponent is past the double range
   * @throws NumberFormatException when the text is anything else
   */
  public static double parseDecimal(String s) {
    if (s == null || !DECIMAL.matcher(s).matches()) {
      throw new NumberFormatException("'" + s + "' is not a decimal written in ASCII digits");
    }
    return Double.parseDouble(s);
  }

  private static String check(String s, int radix) {
    if (s == null) {
      throw new NumberFormatException("no number");
    }
    int start = !s.isEmpty() && (s.charAt(0) == '+' || s.charAt(0) == '-') ? 1 : 0;
    if (start == s.length()) {
      throw new NumberFormatException("'" + s + "' is not a whole number");
    }
    for (int i = start; i < s.length(); i++) {
      char c = Character.toLowerCase(s.charAt(i));
      int d = isDigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 99;
      if (d >= radix) {
        throw new NumberFormatException("'" + s + "' is not a whole number written in ASCII "
            + "digits");
      }
    }
    return s;
  }
}
