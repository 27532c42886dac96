package io.meshplan.deploy;

import java.util.OptionalInt;

/**
 * What text a launch file may carry. A variable's value is one line of printable text; a command
 * word may also hold newlines and tabs (a {@code python -c} program), which every target quotes
 * and reads back exactly. Any other control character and Unicode's line and paragraph separators
 * (U+2028, U+2029, which YAML emitters fold as line breaks and the shell quoting wrote as a
 * {@code \u2028} escape) would reach the job as other text than was given, so they are refused,
 * not rewritten.
 */
final class LaunchText {
  private LaunchText() {}

  /**
   * The first code point a launch file cannot carry as it is.
   *
   * @param text the text
   * @return the code point, or empty when every one is printable on one line
   */
  static OptionalInt unprintable(String text) {
    return text.codePoints().filter(c -> Character.isISOControl(c) || separator(c)).findFirst();
  }

  /**
   * The first code point a command word cannot carry: as {@link #unprintable}, but for newline
   * and tab.
   *
   * @param word the word
   * @return the code point, or empty
   */
  static OptionalInt unquotable(String word) {
    return word.codePoints().filter(c -> (Character.isISOControl(c) && c != '\n' && c != '\t')
        || separator(c)).findFirst();
  }

  private static boolean separator(int c) {
    return Character.getType(c) == Character.LINE_SEPARATOR
        || Character.getType(c) == Character.PARAGRAPH_SEPARATOR;
  }
}
