package io.meshplan.graph;

/** Small helpers for HLO text: string escapes and the {@code op_name} inside {@code metadata}. */
final class HloText {
  private HloText() {}

  /**
   * The {@code op_name} of a {@code metadata={...}} value, unescaped. Never throws: a value that is
   * not as expected gives an empty name.
   *
   * @param metadata the attribute value as written, braces included
   * @return the op_name, or empty
   */
  static String opName(String metadata) {
    int n = metadata.length();
    int i = metadata.startsWith("{") ? 1 : 0;
    while (i < n) {
      char ch = metadata.charAt(i);
      if (ch == ' ' || ch == ',' || ch == '\n' || ch == '\t' || ch == '\r') {
        i++;
        continue;
      }
      if (ch == '}') {
        return "";
      }
      int keyStart = i;
      while (i < n && metadata.charAt(i) != '=' && metadata.charAt(i) != ' '
          && metadata.charAt(i) != '}') {
        i++;
      }
      boolean isOpName = metadata.startsWith("op_name", keyStart) && i - keyStart == 7;
      if (i >= n || metadata.charAt(i) != '=') {
        continue;
      }
      i++;
      if (i < n && metadata.charAt(i) == '"') {
        StringBuilder sb = isOpName ? new StringBuilder() : null;
        i++;
        while (i < n && metadata.charAt(i) != '"') {
          char c = metadata.charAt(i);
          if (c == '\\' && i + 1 < n) {
            char e = metadata.charAt(i + 1);
            if (sb != null) {
              sb.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
            }
            i += 2;
          } else {
            if (sb != null) {
              sb.append(c);
            }
            i++;
          }
        }
        i++;
        if (sb != null) {
          return sb.toString();
        }
      } else {
        int valueStart = i;
        while (i < n && metadata.charAt(i) != ' ' && metadata.charAt(i) != '}') {
          i++;
        }
        if (isOpName) {
          return metadata.substring(valueStart, i);
        }
      }
    }
    return "";
  }

  /**
   * Quotes a string as an HLO string literal.
   *
   * @param s the string
   * @return it in double quotes, with {@code "}, {@code \} and control characters escaped
   */
  static String quote(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        default -> sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
