package io.meshplan.cli;

import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/** Checks and writes a command's output files. */
final class OutputFiles {
  private OutputFiles() {}

  /**
   * Refuses an output path whose directory is missing or that names something other than a
   * regular file, before any work is done.
   *
   * @param spec the command (unused; keeps call sites uniform)
   * @param flag the flag, for messages
   * @param file the path, or null
   */
  static void check(picocli.CommandLine.Model.CommandSpec spec, String flag, Path file) {
    if (file == null) {
      return;
    }
    Path dir = file.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      throw new InputException(flag + " " + file + ": the directory " + dir + " does not exist");
    }
    if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)
        && !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      throw new InputException(flag + " " + file + " exists and is not a regular file; "
          + "choose another path");
    }
  }

  /**
   * Writes a file atomically.
   *
   * @param flag the flag, for messages
   * @param file the path
   * @param text the content
   */
  static void write(String flag, Path file, String text) {
    check(null, flag, file);
    try {
      AtomicFiles.writeString(file, text);
    } catch (IOException e) {
      throw new InputException(flag + " " + file + ": cannot write: " + e.getMessage());
    }
  }
}
