package io.meshplan.util;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import java.io.CharConversionException;
import java.io.IOException;

/**
 * Turns the errors of the JSON and YAML readers into one phrase a user can act on: what is wrong
 * and at which line and column, never a Java exception name.
 */
public final class JsonErrors {
  private JsonErrors() {}

  /**
   * Describes a read error.
   *
   * @param e the error from Jackson
   * @return e.g. "line 3, column 7: unexpected character ']'"
   */
  public static String describe(IOException e) {
    if (e instanceof CharConversionException) {
      return "not UTF-8 text (is this a binary file?)";
    }
    if (e instanceof StreamConstraintsException c) {
      String m = String.valueOf(c.getOriginalMessage());
      if (m.startsWith("Number value length")) {
        return "a number of more digits than a JSON or YAML reader takes (" + lengthLimit(m)
            + ")";
      }
      if (m.startsWith("String value length") || m.startsWith("Name length")) {
        return "a string longer than a JSON or YAML reader takes (" + lengthLimit(m) + ")";
      }
      if (!m.contains("nesting depth")) {
        return "past a limit of meshplan's JSON and YAML readers";
      }
      return "nesting depth above " + TreeReaders.MAX_DEPTH
          + " levels of objects and arrays, meshplan's limit for JSON and YAML input";
    }
    if (e instanceof JsonProcessingException j) {
      String msg = j.getOriginalMessage();
      String head = msg == null ? "malformed" : reword(yamlProblem(j).orElse(head(msg)));
      JsonLocation loc = j.getLocation();
      if (loc != null && loc.getLineNr() > 0) {
        return "line " + loc.getLineNr() + ", column " + loc.getColumnNr() + ": " + head;
      }
      return head;
    }
    return InputFiles.describe(e);
  }

  /**
   * Whether a read error is a refusal of a well-formed file that says two things: a key given
   * twice, or more after the document. A reader that forgives a cut-off file (an nccl-tests log
   * of a run that died) still refuses these.
   *
   * @param e the error from a {@link TreeReaders} mapper
   * @return true for a duplicate key or trailing content
   */
  public static boolean isAmbiguous(IOException e) {
    if (!(e instanceof JsonProcessingException j) || j.getOriginalMessage() == null) {
      return false;
    }
    String head = head(j.getOriginalMessage());
    return DUPLICATE.matcher(head).lookingAt() || head.startsWith("Trailing token");
  }

  /**
   * Jackson's words for the refusals {@link TreeReaders} sets up, in the user's terms: a key given
   * twice, and text after the document.
   */
  /** The limit a Jackson constraint message states ("... maximum allowed (1000, from ..."). */
  private static String lengthLimit(String message) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("maximum allowed \\(([0-9]+)")
        .matcher(message);
    return m.find() ? "at most " + m.group(1) : "a limit";
  }

  private static String reword(String head) {
    // Jackson's advice to its own callers ("enable `JsonReadFeature.X` to allow") is not the
    // user's: the phrase keeps what is wrong.
    head = head.replaceAll(":? ?enable `[^`]*` to allow", "")
        .replaceAll(", from `[^`]*`", "")
        .replaceAll(" \\(not recognized as one since Feature '[A-Z_]+' not enabled for "
            + "parser\\)", "")
        .replace("maybe a (non-standard) comment?", "JSON has no comments")
        .replaceAll(" \\(code [0-9]+( / 0x[0-9a-fA-F]+)?\\)", "");
    java.util.regex.Matcher numeric = java.util.regex.Pattern.compile(
        "Malformed numeric value '(.*)'").matcher(head);
    if (numeric.lookingAt()) {
      // YAML's .nan and .inf, which the parser names in its own words.
      return "'" + TerminalText.escape(numeric.group(1)) + "' is not a finite number";
    }
    if (head.contains("found character '\\t(TAB)' that cannot start any token")) {
      return "a tab where YAML takes none; indent with spaces";
    }
    if (head.startsWith("Unexpected character ('\uFFFD'")) {
      // The decoder's replacement character: the bytes were not UTF-8 (UTF-16, or binary).
      return "bytes that are not UTF-8 text (is the file UTF-16, or binary?)";
    }
    java.util.regex.Matcher dup = DUPLICATE.matcher(head);
    if (dup.lookingAt()) {
      return "key '" + dup.group(1) + "' is given twice in one mapping; give each key once";
    }
    if (head.startsWith("Trailing token")) {
      return "more follows the end of the document; a file holds one JSON value or one YAML "
          + "document";
    }
    return head;
  }

  private static final java.util.regex.Pattern DUPLICATE = java.util.regex.Pattern.compile(
      "Duplicate (?:field|Object property) [\"'](.*)[\"']", java.util.regex.Pattern.DOTALL);

  /**
   * A YAML syntax error in one phrase: SnakeYAML's message spans several lines (what it was
   * reading, where that began with the line quoted and a caret under it, then the problem and
   * where it was found, quoted likewise); the phrase keeps the two sentences and drops the quoted
   * lines, whose place {@link #describe} gives as line and column.
   *
   * @param e the error
   * @return e.g. "while parsing a flow sequence: expected ',' or ']', but got :", or empty when
   *     the error is not one of SnakeYAML's marked errors
   */
  private static java.util.Optional<String> yamlProblem(JsonProcessingException e) {
    if (!(e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException m)
        || m.getProblem() == null) {
      return java.util.Optional.empty();
    }
    String context = m.getContext() == null ? "" : m.getContext().strip() + ": ";
    return java.util.Optional.of(context + m.getProblem().strip());
  }

  /**
   * Jackson's message without the source reference it may append, which names no line the user
   * can find. A line break inside it (a key or value quoted from the file) is kept for the one
   * line the command line prints to escape, so nothing after it is lost.
   */
  private static String head(String s) {
    String line = s.strip();
    int src = line.indexOf(" at [Source");
    line = src < 0 ? line : line.substring(0, src);
    // "expected close marker for Array (start marker at [Source: ...; line: 1, column: 25])":
    // where the array began is the reader's, not a phrase of the user's; drop the parenthesis.
    int start = line.indexOf(" (start marker");
    return start < 0 ? line : line.substring(0, start);
  }
}
