package io.meshplan.deploy;

import io.meshplan.util.ShellQuote;
import java.util.List;
import java.util.Map;

/** Builds bash scripts line by line; every value from outside goes through {@link ShellQuote}. */
final class ScriptText {
  private final StringBuilder sb = new StringBuilder();

  /**
   * Starts a script with the bash shebang.
   *
   * @return this
   */
  static ScriptText bash() {
    ScriptText s = new ScriptText();
    s.sb.append("#!/usr/bin/env bash\n");
    return s;
  }

  /**
   * Starts a fragment of shell text without a shebang, for a command shown on its own.
   *
   * @return an empty builder
   */
  static ScriptText fragment() {
    return new ScriptText();
  }

  /**
   * Adds a comment line; control characters in the text become {@code ?}.
   *
   * @param text the comment
   * @return this
   */
  ScriptText comment(String text) {
    sb.append("# ").append(ShellQuote.commentText(text)).append('\n');
    return this;
  }

  /**
   * Adds a line of shell code written by this package (never user text unquoted).
   *
   * @param code the line
   * @return this
   */
  ScriptText line(String code) {
    sb.append(code).append('\n');
    return this;
  }

  /**
   * Adds {@code export NAME=value} lines, values quoted.
   *
   * @param env the variables, in the map's order
   * @return this
   */
  ScriptText exports(Map<String, String> env) {
    env.forEach((k, v) -> sb.append("export ").append(k).append('=')
        .append(ShellQuote.quote(v)).append('\n'));
    return this;
  }

  /**
   * Adds a command split over lines with backslashes, each part already shell text.
   *
   * @param indent the indentation of the first line
   * @param parts the parts; each is one or more quoted words
   * @return this
   */
  ScriptText command(String indent, List<String> parts) {
    for (int i = 0; i < parts.size(); i++) {
      sb.append(i == 0 ? indent : indent + "  ").append(parts.get(i))
          .append(i + 1 < parts.size() ? " \\\n" : "\n");
    }
    return this;
  }

  /**
   * The script.
   *
   * @return its text
   */
  String text() {
    return sb.toString();
  }
}
