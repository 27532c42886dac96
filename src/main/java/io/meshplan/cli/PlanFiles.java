package io.meshplan.cli;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads plan files: regular files only, at most 64 MiB (a plan of any cluster is far smaller). */
final class PlanFiles {
  private static final int MAX_BYTES = 64 << 20;

  private PlanFiles() {}

  static String read(String flag, Path file) {
    if (!Files.exists(file)) {
      throw new InputException(flag + " " + file + ": no such file");
    }
    if (!Files.isRegularFile(file)) {
      throw new InputException(flag + " " + file + ": not a regular file");
    }
    try (InputStream in = Files.newInputStream(file)) {
      byte[] b = in.readNBytes(MAX_BYTES + 1);
      if (b.length > MAX_BYTES) {
        throw new InputException(flag + " " + file + ": larger than 64 MiB; not a plan file");
      }
      return new String(b, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InputException(flag + " " + file + ": cannot read: " + e.getMessage());
    }
  }
}
