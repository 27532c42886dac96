package io.meshplan.util;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Writes output files so that a reader never sees half a file and a failed write leaves the old
 * file as it was: the text goes to a new temporary file in the same directory, is flushed to the
 * disk, and is then renamed over the target. The new file is readable by all ({@code rw-r--r--},
 * or {@code rwxr-xr-x} for a script) where the file system has POSIX permissions, as a plain
 * write would leave it under the usual umask.
 *
 * <p>Only regular files are ever replaced: a target that exists and is a directory, device, FIFO
 * or socket is refused (a rename would put a regular file in place of {@code /dev/null}). No
 * write ever goes through a symbolic link: a target that is a link (to anything, or dangling),
 * or whose path passes through a link in any of its directories, is refused, as {@code open}
 * with {@code O_NOFOLLOW} refuses a final link and {@code openat2} with {@code
 * RESOLVE_NO_SYMLINKS} refuses every one. Run as root with {@code --force}, a link planted in
 * place of an output could otherwise replace the file it names (a system file). The check runs
 * again right before the rename, the temporary file is created without following links ({@code
 * O_CREAT|O_EXCL|O_NOFOLLOW}), and the rename itself replaces a directory entry, never what a
 * link names. A failed write (a full disk) is an error and leaves the target untouched.
 */
public final class AtomicFiles {
  private static final SecureRandom RANDOM = new SecureRandom();

  private AtomicFiles() {}

  /**
   * Why a path cannot be an output file, or empty when it can: no part of it is a symbolic link,
   * its directory exists, and it is absent or a regular file.
   *
   * @param file the target
   * @return the reason in words (without the path), or empty
   */
  public static Optional<String> problem(Path file) {
    Optional<String> link = link(file);
    if (link.isPresent()) {
      return link;
    }
    Path dir = file.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.of("the directory " + dir + " does not exist");
    }
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      return Optional.of("cannot be inspected: " + InputFiles.describe(e));
    }
    if (!a.isRegularFile()) {
      return Optional.of(InputFiles.kind(file, a)
          + ", not a regular file; meshplan writes only regular files");
    }
    return Optional.empty();
  }

  /**
   * Why a path cannot be an output directory (one that is created when absent), or empty when it
   * can: no part of it is a symbolic link, and it is absent or a directory.
   *
   * @param dir the directory
   * @return the reason in words (without the path), or empty
   */
  public static Optional<String> directoryProblem(Path dir) {
    Optional<String> link = link(dir);
    if (link.isPresent()) {
      return link;
    }
    if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)
        && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.of("exists and is not a directory");
    }
    return Optional.empty();
  }

  /**
   * The first symbolic link on the way to a path, in words: the path itself, or one of the
   * directories above it (of the absolute path, so a relative path is checked from the working
   * directory, which the operating system reports without links).
   *
   * @param file the path
   * @return e.g. "is a symbolic link (to /etc/passwd); ...", or empty when there is none
   */
  public static Optional<String> link(Path file) {
    Path abs = file.toAbsolutePath();
    Path p = abs.getRoot();
    for (Path name : abs) {
      p = p == null ? name : p.resolve(name);
      if (Files.isSymbolicLink(p)) {
        String to;
        try {
          to = " (to " + Files.readSymbolicLink(p) + ")";
        } catch (IOException e) {
          to = "";
        }
        String what = p.equals(abs) ? "is a symbolic link" + to
            : "passes through the symbolic link " + p + to;
        return Optional.of(what + "; meshplan never writes through a symbolic link: name the "
            + "real path");
      }
    }
    return Optional.empty();
  }

  /**
   * Creates a directory and its missing parents without following links: an existing part must
   * be a directory and not a link, and each missing one is made with {@code mkdir}, which never
   * follows a link.
   *
   * @param dir the directory
   * @throws IOException when a part is a link or not a directory, or cannot be made
   */
  public static void createDirectories(Path dir) throws IOException {
    Optional<String> p = directoryProblem(dir);
    if (p.isPresent()) {
      throw new IOException(p.get());
    }
    Path abs = dir.toAbsolutePath();
    Path at = abs.getRoot();
    for (Path name : abs) {
      at = at == null ? name : at.resolve(name);
      if (Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
        continue;
      }
      if (Files.exists(at, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException(at + " is not a directory");
      }
      try {
        Files.createDirectory(at);
      } catch (FileAlreadyExistsException e) {
        // Made by someone else since the check: it must be a plain directory.
        if (!Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
          throw new IOException(at + " is not a directory", e);
        }
      }
    }
  }

  /**
   * The file a path would write to, for comparing two paths: symbolic links and {@code ..} are
   * resolved as far as the path exists.
   *
   * @param file the path
   * @return an absolute, normalized path, the real path where it exists
   */
  public static Path canonical(Path file) {
    Path abs;
    try {
      abs = followLinks(file).normalize();
    } catch (IOException e) {
      abs = file.toAbsolutePath().normalize();
    }
    try {
      if (Files.exists(abs)) {
        return abs.toRealPath();
      }
      Path dir = abs.getParent();
      if (dir != null && Files.exists(dir)) {
        return dir.toRealPath().resolve(abs.getFileName());
      }
    } catch (IOException e) {
      return abs;
    }
    return abs;
  }

  /**
   * Whether two paths name the same file (see {@link #canonical}).
   *
   * @param a one path
   * @param b the other
   * @return true when writing one would change the other
   */
  public static boolean sameFile(Path a, Path b) {
    if (canonical(a).equals(canonical(b))) {
      return true;
    }
    try {
      return Files.exists(a) && Files.exists(b) && Files.isSameFile(a, b);
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The path a link names, links followed, also a final link to a file that does not exist yet;
   * for comparing paths only, never for writing.
   *
   * @param file the path
   * @return an absolute path that is not a symbolic link
   * @throws IOException when a link cannot be read or links form a loop (40 hops, as Linux)
   */
  static Path followLinks(Path file) throws IOException {
    Path p = file.toAbsolutePath();
    for (int hops = 0; Files.isSymbolicLink(p); hops++) {
      if (hops == 40) {
        throw new IOException("too many levels of symbolic links");
      }
      p = p.getParent().resolve(Files.readSymbolicLink(p));
    }
    return p;
  }

  /**
   * Writes a text file atomically, readable by all.
   *
   * @param file the target
   * @param text its new content, UTF-8
   * @throws IOException if the directory is missing, the target is not a regular file or passes
   *     through a symbolic link, or the write fails (for example on a full disk); the target is
   *     then unchanged
   */
  public static void writeString(Path file, String text) throws IOException {
    writeString(file, text, false);
  }

  /**
   * Writes a text file atomically, readable by all and, for a script, executable by all.
   *
   * @param file the target
   * @param text its new content, UTF-8
   * @param executable whether the file is a script ({@code rwxr-xr-x})
   * @throws IOException as {@link #writeString(Path, String)}
   */
  public static void writeString(Path file, String text, boolean executable)
      throws IOException {
    requireWritable(file);
    Path target = file.toAbsolutePath();
    Path tmp = createTemp(target.getParent());
    try {
      try (FileChannel ch = FileChannel.open(tmp, java.util.Set.<java.nio.file.OpenOption>of(StandardOpenOption.WRITE,
          LinkOption.NOFOLLOW_LINKS))) {
        ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
        Files.getFileAttributeView(tmp, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
            .setPermissions(PosixFilePermissions.fromString(executable ? "rwxr-xr-x"
                : "rw-r--r--"));
      }
      // A link planted since the first check is refused; rename(2) would replace the link
      // itself, never the file it names, but the user asked for a file at that path.
      requireWritable(file);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static void requireWritable(Path file) throws IOException {
    Optional<String> p = problem(file);
    if (p.isPresent()) {
      throw new IOException(p.get());
    }
  }

  /** A new empty file in a directory, created with O_CREAT|O_EXCL|O_NOFOLLOW. */
  private static Path createTemp(Path dir) throws IOException {
    for (int attempt = 0; ; attempt++) {
      byte[] b = new byte[8];
      RANDOM.nextBytes(b);
      Path tmp = dir.resolve(".meshplan-" + HexFormat.of().formatHex(b) + ".tmp");
      try {
        FileChannel.open(tmp, java.util.Set.<java.nio.file.OpenOption>of(StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)).close();
        return tmp;
      } catch (FileAlreadyExistsException e) {
        if (attempt == 16) {
          throw e;
        }
      }
    }
  }
}
