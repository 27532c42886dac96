package io.meshplan.graph;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;

/**
 * A position in HLO text with the scanning steps the reader needs. Every error it raises is an
 * {@link InputException} whose message is {@code FILE:LINE:COLUMN: expected X but found Y}. Each
 * step either advances or throws, so no loop over it can hang.
 */
final class HloCursor {
  private static final int MAX_NESTING = 256;

  final String text;
  final String file;
  int pos;

  HloCursor(String text, String file) {
    this.text = text;
    this.file = file;
  }

  boolean atEnd() {
    return pos >= text.length();
  }

  /** The current character, or -1 at the end. */
  int peek() {
    return pos < text.length() ? text.charAt(pos) : -1;
  }

  int peekAt(int offset) {
    int p = pos + offset;
    return p < text.length() ? text.charAt(p) : -1;
  }

  /** Skips white space and comments. */
  void skipSpace() {
    int n = text.length();
    while (pos < n) {
      char c = text.charAt(pos);
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        pos++;
      } else if (c == '/' && pos + 1 < n && text.charAt(pos + 1) == '*') {
        int close = text.indexOf("*/", pos + 2);
        if (close < 0) {
          pos = n;
          throw error("'*/' to close the comment");
        }
        pos = close + 2;
      } else if (c == '/' && pos + 1 < n && text.charAt(pos + 1) == '/') {
        int nl = text.indexOf('\n', pos);
        pos = nl < 0 ? n : nl + 1;
      } else {
        return;
      }
    }
  }

  /** Skips space, then consumes the character or throws. */
  void expect(char c) {
    skipSpace();
    if (peek() != c) {
      throw error("'" + c + "'");
    }
    pos++;
  }

  /** Skips space, then consumes the character if it is there. */
  boolean accept(char c) {
    skipSpace();
    if (peek() == c) {
      pos++;
      return true;
    }
    return false;
  }

  static boolean isNameChar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
        || c == '.' || c == '-';
  }

  /** Reads a run of name characters at the current position; may be empty. */
  String word() {
    int start = pos;
    int n = text.length();
    while (pos < n && isNameChar(text.charAt(pos))) {
      pos++;
    }
    return text.substring(start, pos);
  }

  /** Whether the keyword is at the current position and not followed by a name character. */
  boolean atKeyword(String keyword) {
    return text.startsWith(keyword, pos) && !isNameChar(peekAt(keyword.length()));
  }

  /** Skips space and reads a name, with or without a leading {@code %}. */
  String name(String what) {
    skipSpace();
    if (peek() == '%') {
      pos++;
    }
    if (!isNameChar(peek())) {
      throw error(what);
    }
    return word();
  }

  /** Skips space and reads a non-negative decimal integer that fits an {@code int}. */
  int integer(String what) {
    skipSpace();
    int start = pos;
    long v = 0;
    while (pos < text.length() && AsciiDigits.isDigit(text.charAt(pos))
        && text.charAt(pos) < 128) {
      v = v * 10 + (text.charAt(pos) - '0');
      if (v > Integer.MAX_VALUE) {
        throw errorAt(start, what + " below 2^31");
      }
      pos++;
    }
    if (pos == start) {
      throw error(what);
    }
    return (int) v;
  }

  /** Reads a braced list of integers such as {@code {0,2}}; {@code {}} is the empty list. */
  List<Integer> intList(String what) {
    expect('{');
    List<Integer> out = new ArrayList<>(4);
    if (accept('}')) {
      return out;
    }
    do {
      out.add(integer(what));
    } while (accept(','));
    expect('}');
    return out;
  }

  /** Reads the name of a {@code key=value} attribute at the current position. */
  String attributeName() {
    String key = word();
    if (key.isEmpty()) {
      throw error("an attribute name");
    }
    return key;
  }

  /**
   * Skips a string literal starting at the current {@code "}, honouring backslash escapes.
   *
   * @return the position just after the closing quote
   */
  int skipString() {
    int n = text.length();
    int p = pos + 1;
    while (p < n) {
      char c = text.charAt(p);
      if (c == '\\') {
        p += 2;
      } else if (c == '"') {
        pos = p + 1;
        return pos;
      } else if (c == '\n') {
        pos = p;
        throw error("'\"' to close the string");
      } else {
        p++;
      }
    }
    pos = n;
    throw error("'\"' to close the string");
  }

  /**
   * Skips a bracketed group starting at the current {@code (}, {@code [} or {@code {}, including
   * nested groups and strings, without looking at what is inside.
   *
   * @return the position just after the matching closing bracket
   */
  int skipGroup() {
    char[] stack = new char[MAX_NESTING];
    int depth = 0;
    int n = text.length();
    while (true) {
      if (pos >= n) {
        throw error("'" + stack[depth - 1] + "'");
      }
      char c = text.charAt(pos);
      switch (c) {
        case '(', '[', '{' -> {
          if (depth == MAX_NESTING) {
            throw error("at most " + MAX_NESTING + " nested brackets");
          }
          stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
          pos++;
        }
        case ')', ']', '}' -> {
          if (c != stack[depth - 1]) {
            throw error("'" + stack[depth - 1] + "'");
          }
          pos++;
          if (--depth == 0) {
            return pos;
          }
        }
        case '"' -> skipString();
        default -> pos++;
      }
    }
  }

  /**
   * Skips an attribute value: a sequence of bracketed groups, strings and other characters up to
   * white space, a comma or a closing bracket, e.g. {@code {devices=[2,2]0,1,2,3}}, {@code
   * "text"}, {@code 0_0x1_1} or {@code [2,2]<=[4]}.
   *
   * @return the value's text
   */
  String rawValue() {
    skipSpace();
    int start = pos;
    int n = text.length();
    while (pos < n) {
      char ch = text.charAt(pos);
      if (ch == '{' || ch == '(' || ch == '[') {
        skipGroup();
      } else if (ch == '"') {
        skipString();
      } else if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r' || ch == ','
          || ch == '}' || ch == ')' || ch == ']') {
        break;
      } else {
        pos++;
      }
    }
    if (pos == start) {
      throw error("an attribute value");
    }
    return text.substring(start, pos);
  }

  InputException error(String expected) {
    return errorAt(pos, expected);
  }

  InputException errorAt(int at, String expected) {
    return errorAt(at, expected, describe(at));
  }

  InputException errorAt(int at, String expected, String found) {
    return new InputException(location(at) + ": expected " + expected + " but found " + found);
  }

  /**
   * {@code FILE:LINE:COLUMN} of many offsets in one pass over the text.
   *
   * @param offsets ascending offsets
   * @return one location per offset
   */
  String[] locations(int[] offsets) {
    String[] out = new String[offsets.length];
    int line = 1;
    int lineStart = 0;
    int i = 0;
    for (int k = 0; k < offsets.length; k++) {
      int end = Math.min(offsets[k], text.length());
      for (; i < end; i++) {
        if (text.charAt(i) == '\n') {
          line++;
          lineStart = i + 1;
        }
      }
      out[k] = file + ":" + line + ":" + (end - lineStart + 1);
    }
    return out;
  }

  /** {@code FILE:LINE:COLUMN} of an offset, 1-based. */
  String location(int at) {
    int line = 1;
    int lineStart = 0;
    int end = Math.min(at, text.length());
    for (int i = 0; i < end; i++) {
      if (text.charAt(i) == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    return file + ":" + line + ":" + (end - lineStart + 1);
  }

  int lineOf(int at) {
    int line = 1;
    int end = Math.min(at, text.length());
    for (int i = 0; i < end; i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private String describe(int at) {
    if (at >= text.length()) {
      return "end of file";
    }
    char c = text.charAt(at);
    if (c == '\n' || c == '\r') {
      return "end of line";
    }
    if (isNameChar(c) || c == '%') {
      int end = at + 1;
      while (end < text.length() && end - at < 40 && isNameChar(text.charAt(end))) {
        end++;
      }
      return "'" + text.substring(at, end) + "'";
    }
    if (Character.isISOControl(c) || Character.isSurrogate(c)) {
      return String.format("character U+%04X", (int) c);
    }
    return "'" + c + "'";
  }
}
