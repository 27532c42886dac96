package io.meshplan.doctor;

/**
 * Makes text read from sysfs safe to print on a terminal: a C0 or C1 control character, DEL, a
 * line or paragraph separator, or a bidirectional override becomes {@code \xHH} (or {@code
 * \\uHHHH} above U+00FF), and a backslash becomes two, so the escaped text reads back
 * unambiguously. A file in a sysfs copy can hold any bytes, and the doctor prints what it read
 * (states, addresses, unreadable content) in its table, its JSON and its warnings; a reader of
 * its report quotes a refused value the same way.
 */
public final class Printable {
  private Printable() {}

  /**
   * Escapes text for printing.
   *
   * @param text any text
   * @return the text with every control character written out, on one line
   */
  public static String escape(String text) {
    StringBuilder sb = new StringBuilder(text.length());
    text.codePoints().forEach(c -> {
      if (c == '\\') {
        sb.append("\\\\");
      } else if (unsafe(c)) {
        sb.append(c <= 0xff ? String.format("\\x%02x", c) : String.format("\\u%04x", c));
      } else {
        sb.appendCodePoint(c);
      }
    });
    return sb.toString();
  }

  private static boolean unsafe(int c) {
    return Character.isISOControl(c) || c == 0x2028 || c == 0x2029
        || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e
        || c == 0x200f;
  }
}
