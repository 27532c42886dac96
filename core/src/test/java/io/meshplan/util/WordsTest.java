package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Counted nouns: singular for exactly one, the plural otherwise. */
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
}
