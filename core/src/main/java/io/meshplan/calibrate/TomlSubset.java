package io.meshplan.calibrate;

import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.HashMap;
import java.util.Map;

/**
 * The part of TOML that torchtitan's job configs use for the keys calibrate reads: {@code
 * [table]} headers and {@code key = value} lines whose value is a quoted string, a number or a
 * boolean, with {@code #} comments. Other values (arrays, inline tables) are kept as their text;
 * calibrate never reads them. A key or a table given twice is refused, as TOML refuses it.
 */
final class TomlSubset {
  private TomlSubset() {}

  /**
   * Parses a config.
   *
   * @param file the file name, for messages
   * @param text the TOML text
   * @return values by {@code table.key}, strings unquoted
   */
  static Map<String, String> parse(String file, String text) {
    Map<String, String> out = new HashMap<>();
    Map<String, Integer> firstLine = new HashMap<>();
    String table = "";
    boolean arrayTable = false;
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String l = Words.trimmed(stripComment(lines[i]));
      if (l.isEmpty()) {
        continue;
      }
      if (l.startsWith("[")) {
        if (!l.endsWith("]")) {
          throw new InputException(file + ":" + (i + 1) + ": unclosed table header '" + l + "'");
        }
        // An array of tables ([[name]]) may repeat; calibrate reads none of its keys.
        arrayTable = l.startsWith("[[");
        table = Words.trimmed(l.substring(1, l.length() - 1));
        if (!arrayTable) {
          once(file, firstLine, "[" + table + "]", "table", i);
        }
        continue;
      }
      int eq = l.indexOf('=');
      if (eq <= 0) {
        throw new InputException(file + ":" + (i + 1) + ": expected key = value, got '" + l
            + "'");
      }
      String key = Words.trimmed(l.substring(0, eq));
      String value = Words.trimmed(l.substring(eq + 1));
      if (value.length() >= 2 && (value.startsWith("\"") && value.endsWith("\"")
          || value.startsWith("'") && value.endsWith("'"))) {
        value = value.substring(1, value.length() - 1);
      }
      if (arrayTable) {
        continue;
      }
      String full = table.isEmpty() ? key : table + "." + key;
      once(file, firstLine, full, "key", i);
      out.put(full, value);
    }
    return out;
  }

  /**
   * Refuses a key or a table defined twice, which TOML forbids (toml.io, v1.0.0, sections Keys
   * and Table: each key, and each table, is defined once); a reader that kept either value would
   * calibrate from a job that the file states two ways.
   */
  private static void once(String file, Map<String, Integer> firstLine, String name, String what,
      int line) {
    Integer first = firstLine.putIfAbsent(name, line + 1);
    if (first != null) {
      throw new InputException(file + ":" + (line + 1) + ": " + what + " '" + name + "' is "
          + "defined twice (first at line " + first + "); TOML allows each " + what + " once");
    }
  }

  private static String stripComment(String line) {
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '"') {
        quoted = !quoted;
      } else if (c == '#' && !quoted) {
        return line.substring(0, i);
      }
    }
    return line;
  }
}
