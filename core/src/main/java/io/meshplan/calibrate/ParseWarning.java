package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * A problem found while reading a benchmark log that did not stop the reading.
 *
 * @param file the file, as given on the command line
 * @param line 1-based line number
 * @param message what was wrong and what was done about it
 */
public record ParseWarning(String file, int line, String message) {
  /** Validates the fields. */
  public ParseWarning {
    Require.nonNull(file, "file");
    Require.that(line >= 1, "line must be >= 1, got " + line);
    Require.nonNull(message, "message");
  }

  @Override
  public String toString() {
    return file + ":" + line + ": " + message;
  }
}
