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
  void onlyRegularFilesAreReplacedAndLinksAreFollowed() throws Exception {
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
    // A link to a file that is not there yet: the write creates that file and keeps the link.
    Path target = dir.resolve("target.txt");
    Path link = Files.createSymbolicLink(dir.resolve("link.txt"), target);
    AtomicFiles.writeString(link, "one");
    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(Files.readString(target)).isEqualTo("one");
    AtomicFiles.writeString(link, "two");
    assertThat(Files.readString(target)).isEqualTo("two");
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
