package io.meshplan.deploy;

import io.meshplan.util.Require;
import java.util.regex.Pattern;

/**
 * One generated file.
 *
 * @param fileName its conventional name (no directory)
 * @param text its content, ending in a newline
 * @param executable whether it is a script to run
 */
public record Artifact(String fileName, String text, boolean executable) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

  /** Validates the fields. */
  public Artifact {
    Require.that(fileName != null && NAME.matcher(fileName).matches(), "bad file name "
        + fileName);
    Require.nonNull(text, "text");
  }
}
