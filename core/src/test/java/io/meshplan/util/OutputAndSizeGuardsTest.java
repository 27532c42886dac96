package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shared guards: the atomic writer's targets, the bounded reader, checked sizes. */
class OutputAndSizeGuardsTest {
  @TempDir Path dir;

  @Test
  void onlyRegularFilesAreReplacedAndNeverThroughALink() throws Exception {
    Path fifo = dir.resolve("fifo");
    Process mk = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertThat(mk.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(AtomicFiles.problem(fifo)).hasValueSatisfying(m -> assertThat(m)
        .contains("not a regular file"));
    assertThatThrownBy(() -> AtomicFiles.writeString(fifo, "x")).isInstanceOf(IOException.class);
    assertThat(Files.isRegularFile(fifo)).isFalse();
    assertThat(AtomicFiles.problem(dir)).hasValueSatisfying(m -> assertThat(m)
        .contains("directory"));
    assertThat(AtomicFiles.problem(dir.resolve("no/such/dir/f"))).isPresent();
    assertThat(AtomicFiles.problem(dir.resolve("new.txt"))).isEmpty();
    // No write goes through a link: a dangling one (the write would create what it names), one
    // to a file, and one in a directory above the target. Each is refused before and at the
    // write, and what the links name is untouched.
    Path target = dir.resolve("target.txt");
    Path link = Files.createSymbolicLink(dir.resolve("link.txt"), target);
    assertThat(AtomicFiles.problem(link)).hasValueSatisfying(m -> assertThat(m)
        .startsWith("is a symbolic link (to " + target + ")"));
    assertThatThrownBy(() -> AtomicFiles.writeString(link, "one"))
        .isInstanceOf(IOException.class).hasMessageContaining("never writes through");
    assertThat(target).doesNotExist();
    Files.writeString(target, "old");
    assertThatThrownBy(() -> AtomicFiles.writeString(link, "two"))
        .isInstanceOf(IOException.class);
    assertThat(Files.readString(target)).isEqualTo("old");
    assertThat(Files.isSymbolicLink(link)).isTrue();
    Path sub = Files.createDirectory(dir.resolve("sub"));
    Path subLink = Files.createSymbolicLink(dir.resolve("sub-link"), sub);
    assertThat(AtomicFiles.problem(subLink.resolve("f.txt"))).hasValueSatisfying(m ->
        assertThat(m).startsWith("passes through the symbolic link " + subLink));
    assertThatThrownBy(() -> AtomicFiles.writeString(subLink.resolve("f.txt"), "x"))
        .isInstanceOf(IOException.class);
    assertThat(sub.resolve("f.txt")).doesNotExist();
    assertThat(AtomicFiles.directoryProblem(subLink)).isPresent();
    assertThatThrownBy(() -> AtomicFiles.createDirectories(subLink.resolve("a/b")))
        .isInstanceOf(IOException.class);
    assertThat(sub.resolve("a")).doesNotExist();
    AtomicFiles.createDirectories(sub.resolve("a/b"));
    assertThat(sub.resolve("a/b")).isDirectory();
    // The real path is written, as a script where asked.
    AtomicFiles.writeString(sub.resolve("run.sh"), "#!/bin/sh\n", true);
    assertThat(Files.getPosixFilePermissions(sub.resolve("run.sh")))
        .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    // Comparing paths still follows links: a link names its target.
    assertThat(AtomicFiles.sameFile(link, target)).isTrue();
    assertThat(AtomicFiles.sameFile(dir.resolve("a/../target.txt"), target)).isTrue();
    assertThat(AtomicFiles.sameFile(dir.resolve("other.txt"), target)).isFalse();
    // No temporary file is left behind.
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
    }
  }

  @Test
  void theBoundedReaderRefusesWhatItShouldNotRead() throws Exception {
    Path f = dir.resolve("f.txt");
    Files.writeString(f, "12345");
    assertThat(InputFiles.readString(f, 5, "test file")).isEqualTo("12345");
    // One byte over the cap is refused, naming the cap.
    assertThatThrownBy(() -> InputFiles.readString(f, 4, "test file"))
        .isInstanceOf(InputException.class).hasMessageContaining("larger than 4B");
    assertThatThrownBy(() -> InputFiles.readString(dir, 100, "test file"))
        .isInstanceOf(InputException.class).hasMessageContaining("is a directory");
    assertThatThrownBy(() -> InputFiles.readString(dir.resolve("nope"), 100, "test file"))
        .isInstanceOf(InputException.class).hasMessageContaining("no such file")
        .hasMessageNotContaining("Exception");
  }

  @Test
  void checkedProductsAgreeWithExactArithmetic() {
    Random r = new Random(42);
    for (int i = 0; i < 2000; i++) {
      int[] f = new int[1 + r.nextInt(4)];
      BigInteger exact = BigInteger.ONE;
      for (int k = 0; k < f.length; k++) {
        f[k] = 1 + r.nextInt(r.nextBoolean() ? 64 : Integer.MAX_VALUE);
        exact = exact.multiply(BigInteger.valueOf(f[k]));
      }
      if (exact.compareTo(BigInteger.valueOf(Checked.MAX_DEVICES)) <= 0) {
        assertThat(Checked.intProduct("p", Checked.MAX_DEVICES, f)).isEqualTo(exact.intValue());
      } else {
        BigInteger e = exact;
        assertThatThrownBy(() -> Checked.intProduct("p", Checked.MAX_DEVICES, f))
            .isInstanceOf(InputException.class).hasMessageContaining(e.toString());
      }
    }
  }
}
