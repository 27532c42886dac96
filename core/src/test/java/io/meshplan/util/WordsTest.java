package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Counted nouns: singular for exactly one, the plural otherwise; values trimmed of blanks and of
 * nothing else.
 */
class WordsTest {
  @Test
  void countsTakeTheRightNumber() {
    assertThat(Words.count(1, "stage")).isEqualTo("1 stage");
    assertThat(Words.count(0, "stage")).isEqualTo("0 stages");
    assertThat(Words.count(2, "GPU")).isEqualTo("2 GPUs");
    assertThat(Words.count(1, "microbatch")).isEqualTo("1 microbatch");
    assertThat(Words.count(8, "microbatch")).isEqualTo("8 microbatches");
    assertThat(Words.count(3, "logical mesh")).isEqualTo("3 logical meshes");
    assertThat(Words.count(7, "entry")).isEqualTo("7 entries");
    assertThat(Words.count(2, "day")).isEqualTo("2 days");
    assertThat(Words.count(2, "training process")).isEqualTo("2 training processes");
    assertThat(Words.count(-1, "point")).isEqualTo("-1 points");
  }

  /**
   * {@link Words#trimmed} drops spaces and tabs at either end and keeps every other character,
   * control characters included, where {@link String#trim} dropped them all: seeded values built
   * of blanks, controls and letters, against a regular expression written independently.
   */
  @Test
  void trimmedDropsSpacesAndTabsOnly() {
    assertThat(Words.trimmed(" \t1x8:h100-80gb\t ")).isEqualTo("1x8:h100-80gb");
    assertThat(Words.trimmed("1x8:h100-80gb\u0007")).isEqualTo("1x8:h100-80gb\u0007");
    assertThat(Words.trimmed("\u001b[31mfull ")).isEqualTo("\u001b[31mfull");
    assertThat(Words.trimmed(" \t ")).isEmpty();
    String pieces = " \t\r\n\u0000\u0007\u001b\u007f\u0085\u009bab:1";
    SplittableRandom r = new SplittableRandom(9021);
    for (int i = 0; i < 2000; i++) {
      StringBuilder sb = new StringBuilder();
      int n = r.nextInt(8);
      for (int k = 0; k < n; k++) {
        sb.append(pieces.charAt(r.nextInt(pieces.length())));
      }
      String v = sb.toString();
      String expected = v.replaceAll("^[ \t]+", "").replaceAll("[ \t]+\\z", "");
      assertThat(Words.trimmed(v)).as("'%s'", v).isEqualTo(expected);
    }
  }
}
