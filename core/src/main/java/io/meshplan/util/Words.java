package io.meshplan.util;

import java.util.Locale;

/** Counted nouns for the text meshplan prints: {@code 1 stage}, {@code 2 stages}. */
public final class Words {
  private Words() {}

  /**
   * A count with its noun in the right number: the noun as given for exactly 1, else its plural
   * ({@link #plural}).
   *
   * @param n the count
   * @param singular the noun for one, e.g. {@code stage}, {@code microbatch}, {@code GPU}
   * @return e.g. {@code 1 stage}, {@code 0 stages}, {@code 8 microbatches}
   */
  public static String count(long n, String singular) {
    return n + " " + (n == 1 ? singular : plural(singular));
  }

  /**
   * One character as a message shows it: a printable ASCII character quoted as itself, any other
   * (a control character, a non-ASCII one) as its code point, never raw.
   *
   * @param c the character
   * @return e.g. {@code 'x'} or {@code U+001B}
   */
  public static String character(char c) {
    return character((int) c);
  }

  /**
   * A character for a message, by its code point: itself in quotes when printable ASCII, else
   * its Unicode number ({@code U+1D544}), so a character outside the Basic Multilingual Plane is
   * named whole rather than by half of its UTF-16 pair.
   *
   * @param codePoint the code point
   * @return e.g. {@code 'x'} or {@code U+0009}
   */
  public static String character(int codePoint) {
    return codePoint > ' ' && codePoint < 0x7f ? "'" + (char) codePoint + "'"
        : String.format(Locale.ROOT, "U+%04X", codePoint);
  }

  /**
   * A value with the spaces and tabs around it removed, and nothing else: {@link String#trim}
   * also drops every control character at either end, so {@code --cluster} with a trailing BEL
   * or ESC would be read as the cluster without it, a value other than the one given.
   *
   * @param value the value
   * @return the value without leading and trailing spaces and tabs
   */
  public static String trimmed(String value) {
    int start = 0;
    int end = value.length();
    while (start < end && isBlank(value.charAt(start))) {
      start++;
    }
    while (end > start && isBlank(value.charAt(end - 1))) {
      end--;
    }
    return value.substring(start, end);
  }

  private static boolean isBlank(char c) {
    return c == ' ' || c == '\t';
  }

  /**
   * At most 40 characters of a value a message quotes (a flag's, a file's), and {@code ...}
   * where it was cut: a value may be of any length.
   *
   * @param value the value
   * @return the value, or its first 40 characters and {@code ...}
   */
  public static String clipped(String value) {
    return value.length() <= 40 ? value : value.substring(0, 40) + "...";
  }

  /**
   * The English plural of a noun meshplan counts: {@code -ies} for a consonant and y ({@code
   * entry}), {@code -es} after s, x, z, ch and sh, else {@code -s} ({@code GPU} to {@code GPUs}).
   *
   * @param singular the noun
   * @return its plural
   */
  public static String plural(String singular) {
    String w = singular.toLowerCase(Locale.ROOT);
    if (w.length() > 1 && w.endsWith("y") && "aeiou".indexOf(w.charAt(w.length() - 2)) < 0) {
      return singular.substring(0, singular.length() - 1) + "ies";
    }
    boolean sibilant = w.endsWith("s") || w.endsWith("x") || w.endsWith("z") || w.endsWith("ch")
        || w.endsWith("sh");
    return singular + (sibilant ? "es" : "s");
  }
}
