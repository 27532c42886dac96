package io.meshplan.util;

/**
 * Makes text from the user's inputs safe to show on a terminal, as {@code git} quotes a path and
 * {@code ls} a file name: a character that a terminal would obey instead of showing (an escape
 * sequence that recolours, moves the cursor, retitles the window or rewrites the clipboard; a
 * carriage return that overwrites the line; a Unicode bidirectional override that reorders what
 * follows) is written as its escape, so the user sees which character the input held.
 *
 * <p>Escaped: the C0 controls U+0000-U+001F (newline and tab too, unless kept), DEL U+007F, the
 * C1 controls U+0080-U+009F (U+009B is a one-byte CSI to many terminals), every Unicode format
 * character (general category Cf: the bidirectional embeddings, overrides and isolates
 * U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width characters,
 * the byte order mark U+FEFF, tag characters), the line and paragraph separators U+2028 and
 * U+2029, and lone surrogates (which no encoder can write).
 *
 * <p>The form is the one of Java and JSON: a backslash, {@code u} and four lower-case hex digits
 * (ESC becomes <code>&#92;u001b</code>); a supplementary character is written as its two UTF-16
 * halves. The same form inside a JSON string decodes to the original character, so JSON that
 * meshplan prints stays valid and keeps its content when it passes through here. A backslash is
 * left as it is, so escaping twice changes nothing.
 */
public final class TerminalText {
  private TerminalText() {}

  /**
   * Escapes every control and format character, newlines and tabs included: for text that must
   * stay on one line (a name inside a message, a comment in a launch file, a title).
   *
   * @param text any text
   * @return the text with no character a terminal acts on
   */
  public static String escape(String text) {
    return escape(text, false);
  }

  /**
   * Escapes every control and format character except newline and tab: for whole output
   * streams, whose lines meshplan itself breaks.
   *
   * @param text any text
   * @return the text with no character a terminal acts on but line breaks and tabs
   */
  public static String escapeKeepingLines(String text) {
    return escape(text, true);
  }

  /**
   * Whether a UTF-16 unit is one {@link #escape} writes as an escape.
   *
   * @param c the unit
   * @param keepLines whether newline and tab are kept
   * @return true when it is escaped
   */
  public static boolean escaped(char c, boolean keepLines) {
    if (c < 0x20) {
      return !(keepLines && (c == '\n' || c == '\t'));
    }
    if (c < 0x7f) {
      return false;
    }
    if (c <= 0x9f) {
      return true;
    }
    int type = Character.getType(c);
    return type == Character.FORMAT || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR || type == Character.SURROGATE;
  }

  private static String escape(String text, boolean keepLines) {
    int n = text.length();
    int i = 0;
    while (i < n && !unsafeAt(text, i, keepLines)) {
      i++;
    }
    if (i == n) {
      return text;
    }
    StringBuilder sb = new StringBuilder(n + 16).append(text, 0, i);
    for (; i < n; i++) {
      if (unsafeAt(text, i, keepLines)) {
        appendEscape(sb, text.charAt(i));
      } else {
        sb.append(text.charAt(i));
      }
    }
    return sb.toString();
  }

  /**
   * Whether the unit at {@code i} is escaped: a surrogate half is kept when it is one half of a
   * pair whose code point is not a format character (an emoji stays; a tag character U+E0001
   * does not).
   */
  private static boolean unsafeAt(String s, int i, boolean keepLines) {
    char c = s.charAt(i);
    if (!Character.isSurrogate(c)) {
      return escaped(c, keepLines);
    }
    int cp;
    if (Character.isHighSurrogate(c) && i + 1 < s.length()
        && Character.isLowSurrogate(s.charAt(i + 1))) {
      cp = Character.toCodePoint(c, s.charAt(i + 1));
    } else if (Character.isLowSurrogate(c) && i > 0
        && Character.isHighSurrogate(s.charAt(i - 1))) {
      cp = Character.toCodePoint(s.charAt(i - 1), c);
    } else {
      return true;
    }
    return Character.getType(cp) == Character.FORMAT;
  }

  /**
   * Appends the escape of one UTF-16 unit.
   *
   * @param sb where to append
   * @param c the unit
   */
  public static void appendEscape(StringBuilder sb, char c) {
    String hex = Integer.toHexString(c);
    sb.append("\\u").append("0000", hex.length(), 4).append(hex);
  }
}
