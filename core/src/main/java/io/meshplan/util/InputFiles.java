package io.meshplan.util;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The one way meshplan reads a file the user named: only a regular file (never a device, FIFO or
 * directory, which could block forever or never end), and never more than a cap chosen by the
 * format's natural size, so that a wrong path gives one clear line instead of a hang or an
 * out-of-memory error. Every parser (HLO modules, benchmark logs, profiles, cluster files, sysfs
 * attributes) reads through here.
 */
public final class InputFiles {
  /** Cap for an HLO text module: 128 MiB, ten times the 50,000-instruction benchmark module. */
  public static final long HLO_MAX_BYTES = 128L << 20;
  /** Cap for one benchmark log (nccl-tests text or JSON, Alpa lines, tables): 64 MiB. */
  public static final long LOG_MAX_BYTES = 64L << 20;
  /** Cap for a calibration profile or an ILP dump: 64 MiB. */
  public static final long PROFILE_MAX_BYTES = 64L << 20;
  /** Cap for a cluster YAML file: 1 MiB (it has a handful of fields). */
  public static final long CLUSTER_MAX_BYTES = 1L << 20;
  /** A plan file: stages and their largest tensors, far below this for any cluster. */
  public static final long PLAN_MAX_BYTES = 64L << 20;
  /** A doctor JSON report of one node. */
  public static final long FABRIC_MAX_BYTES = 1L << 20;
  /** Cap for one sysfs attribute: the kernel serves at most one page, 4 KiB; 64 KiB leaves room. */
  public static final long SYSFS_MAX_BYTES = 64L << 10;

  private InputFiles() {}

  /**
   * Reads a whole file as UTF-8 text after checking it is a regular file of at most {@code
   * maxBytes} bytes.
   *
   * @param file the file
   * @param maxBytes the cap in bytes
   * @param what what the file should be, for messages (e.g. "HLO module")
   * @return the text, without a leading byte order mark: editors on Windows write one, and every
   *     format meshplan reads either ignores it (YAML) or may (JSON: RFC 8259, section 8.1), so
   *     each reads alike with or without it
   * @throws InputException with one line naming the file when it is missing, not a regular file,
   *     unreadable or too large
   */
  public static String readString(Path file, long maxBytes, String what) {
    return withoutMark(new String(readBytes(file, maxBytes, what), StandardCharsets.UTF_8));
  }

  /**
   * Text without a leading byte order mark (see {@link #readString}), for readers that decode a
   * file's bytes themselves.
   *
   * @param text decoded text
   * @return the text from its first character after the mark, or unchanged
   */
  public static String withoutMark(String text) {
    return text.startsWith("\uFEFF") ? text.substring(1) : text;
  }

  /**
   * Reads a whole file as bytes; see {@link #readString}.
   *
   * @param file the file
   * @param maxBytes the cap in bytes
   * @param what what the file should be, for messages
   * @return the bytes
   */
  public static byte[] readBytes(Path file, long maxBytes, String what) {
    checkRegular(file, what);
    try (InputStream in = Files.newInputStream(file)) {
      // A regular file can still grow while it is read, or report a wrong size (procfs): read at
      // most one byte past the cap and refuse when it is there.
      byte[] data = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, maxBytes + 1));
      if (data.length > maxBytes) {
        throw new InputException(file + ": larger than " + Units.formatBytes(maxBytes)
            + ", the limit for a " + what + "; is this the right file?");
      }
      return data;
    } catch (IOException e) {
      throw new InputException(file + ": cannot read " + what + ": " + describe(e), e);
    }
  }

  /**
   * Checks that a path names an existing regular file (following symbolic links).
   *
   * @param file the path
   * @param what what it should be, for messages
   * @throws InputException naming the file and what it is instead
   */
  public static void checkRegular(Path file, String what) {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      throw new InputException(file + ": no such file (" + what + " expected)", e);
    } catch (IOException e) {
      throw new InputException(file + ": cannot read " + what + ": " + describe(e), e);
    }
    if (!a.isRegularFile()) {
      throw new InputException(file + ": " + kind(file, a) + ", not a regular file (" + what
          + " expected)");
    }
  }

  /**
   * What a file system entry is, in words: "a directory", "a device or FIFO", ...
   *
   * @param file the path
   * @param a its attributes
   * @return the words
   */
  static String kind(Path file, BasicFileAttributes a) {
    if (a.isDirectory()) {
      return "is a directory";
    }
    if (a.isRegularFile()) {
      return "is a regular file";
    }
    if (Files.isSymbolicLink(file) && !Files.exists(file)) {
      return "is a dangling symbolic link";
    }
    return "is a device, FIFO or socket";
  }

  /**
   * An I/O error in words, without Java class names: "no such file", "permission denied", or the
   * operating system's own message.
   *
   * @param e the error
   * @return one short phrase
   */
  public static String describe(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof java.nio.file.NotDirectoryException) {
      return "a part of the path is not a directory";
    }
    if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    String m = e.getMessage();
    if (m == null || m.isBlank()) {
      return "input/output error";
    }
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
