package io.meshplan.cli;

import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * Reads the input files and writes the output files of {@code export} and {@code deploy}: inputs
 * capped in size and read as UTF-8; outputs written atomically, never over an existing file
 * without {@code --force}, never over anything but a regular file, and never over an input.
 */
final class ExportFiles {

  private ExportFiles() {}

  /**
   * Checks that an output may be written: not one of the inputs, and, when it exists, a regular
   * file and {@code --force} given.
   *
   * @param out the output file
   * @param force whether {@code --force} was given
   * @param inputs the input files given, none null
   */
  static void checkWritable(Path out, boolean force, List<Path> inputs) {
    for (Path in : inputs) {
      if (AtomicFiles.sameFile(out, in)) {
        throw new InputException("--out " + out + " names the input " + in
            + "; write the output to another file");
      }
    }
    if (Files.exists(out, LinkOption.NOFOLLOW_LINKS)) {
      if (!Files.isRegularFile(out, LinkOption.NOFOLLOW_LINKS)) {
        throw new InputException("--out " + out + " exists and is not a regular file; it is"
            + " never replaced");
      }
      if (!force) {
        throw new InputException("--out " + out + " exists; add --force to replace it");
      }
    }
  }

  /**
   * Writes a text file atomically.
   *
   * @param out the file
   * @param text its content
   */
  static void write(Path out, String text) {
    try {
      AtomicFiles.writeString(out, text);
    } catch (IOException e) {
      throw new InputException("--out " + out + ": cannot write (" + e.getMessage() + ")");
    }
  }

  /**
   * Writes a text file atomically and, for a script, makes it executable ({@code rwxr-xr-x}) where
   * the file system has POSIX permissions.
   *
   * @param out the file
   * @param text its content
   * @param executable whether it is a script
   */
  static void write(Path out, String text, boolean executable) {
    write(out, text);
    if (executable && FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
      try {
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxr-xr-x"));
      } catch (IOException e) {
        throw new InputException("--out " + out + ": cannot make it executable ("
            + e.getMessage() + ")");
      }
    }
  }
}
