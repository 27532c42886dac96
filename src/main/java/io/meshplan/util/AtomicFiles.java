package io.meshplan.util;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes output files so that a reader never sees half a file and a failed write leaves the old
 * file as it was: the text goes to a temporary file in the same directory, which is then renamed
 * over the target. The new file is readable by all ({@code rw-r--r--}) where the file system has
 * POSIX permissions, as a plain write would leave it under the usual umask.
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /**
   * Writes a text file atomically.
   *
   * @param file the target
   * @param text its new content, UTF-8
   * @throws IOException if the directory is missing or the write fails
   */
  public static void writeString(Path file, String text) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Path tmp = Files.createTempFile(dir, ".meshplan-", ".tmp");
    try {
      Files.writeString(tmp, text);
      if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
