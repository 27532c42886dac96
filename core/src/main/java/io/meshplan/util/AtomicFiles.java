package io.meshplan.util;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * Writes output files so that a reader never sees half a file and a failed write leaves the old
 * file as it was: the text goes to a temporary file in the same directory, is flushed to the disk,
 * and is then renamed over the target. The new file is readable by all ({@code rw-r--r--}) where
 * the file system has POSIX permissions, as a plain write would leave it under the usual umask.
 *
 * <p>Only regular files are ever replaced: a target that exists and is a directory, device, FIFO
 * or socket is refused (a rename would put a regular file in place of {@code /dev/null}). A
 * symbolic link is followed, so the link stays and the file it names is replaced. A failed write
 * (a full disk) is an error and leaves the target untouched.
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /**
   * Why a path cannot be an output file, or empty when it can: its directory must exist and the
   * path must be absent or a regular file (after following symbolic links).
   *
   * @param file the target
   * @return the reason in words (without the path), or empty
   */
  public static Optional<String> problem(Path file) {
    Path target;
    try {
      target = followLinks(file);
    } catch (IOException e) {
      return Optional.of("cannot follow the symbolic link: " + InputFiles.describe(e));
    }
    if (!target.equals(file.toAbsolutePath())) {
      Optional<String> p = problem(target);
      return p.map(m -> "links to " + target + ": " + m);
    }
    Path dir = file.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return Optional.of("the directory " + dir + " does not exist");
    }
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class);
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
   * The path a write reaches: symbolic links followed, also a final link to a file that does not
   * exist yet (writing through it creates that file).
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
   * Writes a text file atomically.
   *
   * @param file the target
   * @param text its new content, UTF-8
   * @throws IOException if the directory is missing, the target is not a regular file, or the
   *     write fails (for example on a full disk); the target is then unchanged
   */
  public static void writeString(Path file, String text) throws IOException {
    Optional<String> p = problem(file);
    if (p.isPresent()) {
      throw new IOException(p.get());
    }
    Path target = followLinks(file);
    Path dir = target.toAbsolutePath().getParent();
    Path tmp = Files.createTempFile(dir, ".meshplan-", ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
      }
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
