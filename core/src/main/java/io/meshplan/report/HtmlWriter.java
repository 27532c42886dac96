package io.meshplan.report;

import io.meshplan.util.TerminalText;
import java.util.Locale;

/**
 * A tiny HTML/SVG builder that escapes every text and attribute value, so nothing a user gave (a
 * model name, a tensor name, a cluster file's GPU name) can open a tag or close an attribute. The
 * output is also well-formed XML (every element closed, only the five XML entities), which lets
 * tests parse it with a standard XML parser.
 */
final class HtmlWriter {
  private final StringBuilder out = new StringBuilder(1 << 16);

  /**
   * Escapes text for an element body or a double-quoted attribute.
   *
   * @param text any text
   * @return the text with {@code & < > " '} replaced by entities, and control and format
   *     characters by their escapes ({@link TerminalText#escapeKeepingLines})
   */
  static String escape(String text) {
    // Controls and bidirectional overrides from an input (a model name in the title) are shown
    // as their escapes, as on a terminal; XML 1.0 could not carry most of them anyway.
    String s = TerminalText.escapeKeepingLines(text);
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c);
      }
    }
    return b.toString();
  }

  /**
   * Formats a number with {@link Locale#ROOT} so that output does not depend on the machine.
   *
   * @param format a {@link String#format} pattern
   * @param args the values
   * @return the text
   */
  static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  /** Appends raw markup that this package wrote itself (never user text). */
  HtmlWriter raw(String markup) {
    out.append(markup);
    return this;
  }

  /**
   * Opens an element.
   *
   * @param tag the tag name (a constant of this package)
   * @param attrs name, value pairs; values are escaped
   * @return this
   */
  HtmlWriter open(String tag, String... attrs) {
    out.append('<').append(tag);
    attrs(attrs);
    out.append('>');
    return this;
  }

  /** Closes an element. */
  HtmlWriter close(String tag) {
    out.append("</").append(tag).append(">\n");
    return this;
  }

  /**
   * Writes an element with text content.
   *
   * @param tag the tag
   * @param text the content, escaped
   * @param attrs name, value pairs, escaped
   * @return this
   */
  HtmlWriter element(String tag, String text, String... attrs) {
    open(tag, attrs);
    out.append(escape(text));
    out.append("</").append(tag).append('>');
    return this;
  }

  /**
   * Writes an empty element.
   *
   * @param tag the tag
   * @param attrs name, value pairs, escaped
   * @return this
   */
  HtmlWriter empty(String tag, String... attrs) {
    out.append('<').append(tag);
    attrs(attrs);
    out.append("/>");
    return this;
  }

  /**
   * Writes escaped text.
   *
   * @param text the text
   * @return this
   */
  HtmlWriter text(String text) {
    out.append(escape(text));
    return this;
  }

  private void attrs(String[] attrs) {
    if (attrs.length % 2 != 0) {
      throw new IllegalArgumentException("attributes come in name, value pairs");
    }
    for (int i = 0; i < attrs.length; i += 2) {
      out.append(' ').append(attrs[i]).append("=\"").append(escape(attrs[i + 1])).append('"');
    }
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
