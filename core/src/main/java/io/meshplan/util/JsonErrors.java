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
    if (e instanceof StreamConstraintsException) {
      return "nesting depth above " + TreeReaders.MAX_DEPTH
          + " levels of objects and arrays, meshplan's limit for JSON and YAML input";
    }
    if (e instanceof JsonProcessingException j) {
      String msg = j.getOriginalMessage();
      String head = msg == null ? "malformed" : reword(firstLine(msg));
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
    String head = firstLine(j.getOriginalMessage());
    return DUPLICATE.matcher(head).lookingAt() || head.startsWith("Trailing token");
  }

  /**
   * Jackson's words for the refusals {@link TreeReaders} sets up, in the user's terms: a key given
   * twice, and text after the document.
   */
  private static String reword(String head) {
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

  private static final java.util.regex.Pattern DUPLICATE =
      java.util.regex.Pattern.compile("Duplicate (?:field|Object property) [\"'](.*)[\"']");

  private static String firstLine(String s) {
    String t = s.strip();
    int nl = t.indexOf('\n');
    String line = nl < 0 ? t : t.substring(0, nl).strip();
    // Jackson appends a hint about the source reference; it names no line the user can find.
    int src = line.indexOf(" at [Source");
    return src < 0 ? line : line.substring(0, src);
  }
}
