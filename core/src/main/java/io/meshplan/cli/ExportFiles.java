package io.meshplan.cli;

import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads the input files and writes the output files of {@code export} and {@code deploy}: inputs
 * capped in size and read as UTF-8; outputs written atomically, never over an existing file
 * without {@code --force}, never over anything but a regular file, never through a symbolic
 * link, and never over an input.
 */
final class ExportFiles {

  private ExportFiles() {}

  /**
   * Checks that an output may be written, as every command's outputs are ({@link OutputPaths}):
   * not one of the inputs, and, when it exists, a regular file and {@code --force} given.
   *
   * @param out the output file
   * @param force whether {@code --force} was given
   * @param inputs the input files given, by the words that name them (a flag, or "the cluster
   *     of plan p.json")
   */
  static void checkWritable(Path out, boolean force, Map<String, Path> inputs) {
    new OutputPaths().force(force).output("--out", out).inputs(inputs).check();
  }

  /**
   * Writes a text file atomically.
   *
   * @param out the file
   * @param text its content
   */
  static void write(Path out, String text) {
    write(out, text, false);
  }

  /**
   * Writes a text file atomically and, for a script, makes it executable ({@code rwxr-xr-x})
   * where the file system has POSIX permissions.
   *
   * @param out the file
   * @param text its content
   * @param executable whether it is a script
   */
  static void write(Path out, String text, boolean executable) {
    try {
      AtomicFiles.writeString(out, text, executable);
    } catch (IOException e) {
      throw new InputException("--out " + out + ": cannot write: " + InputFiles.describe(e));
    }
  }
}
