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
      String head = msg == null ? "malformed" : firstLine(msg);
      JsonLocation loc = j.getLocation();
      if (loc != null && loc.getLineNr() > 0) {
        return "line " + loc.getLineNr() + ", column " + loc.getColumnNr() + ": " + head;
      }
      return head;
    }
    return InputFiles.describe(e);
  }

  private static String firstLine(String s) {
    String t = s.strip();
    int nl = t.indexOf('\n');
    String line = nl < 0 ? t : t.substring(0, nl).strip();
    // Jackson appends a hint about the source reference; it names no line the user can find.
    int src = line.indexOf(" at [Source");
    return src < 0 ? line : line.substring(0, src);
  }
}
