package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Packed documents: the attention pairs they compute, and how their lengths are read. */
class PackingTest {
  /**
   * Eight documents of 1,024 tokens in a sequence of 8,192: 8 x 1024^2 / 2 = 4,194,304 causal
   * pairs of the sequence's 8192^2 / 2 = 33,554,432, a share of 1/8. With a 512-token window each
   * document computes 512^2 / 2 + (1024 - 512) 512 = 393,216 pairs: 8 x 393,216 / 33,554,432 =
   * 0.09375. A window longer than the documents changes nothing.
   */
  @Test
  void equalDocumentsComputeTheirSquares() {
    Packing p = Packing.meanLength(1024);
    assertThat(p.work(8192, 0)).isEqualTo(0.125);
    assertThat(p.work(8192, 512)).isEqualTo(0.09375);
    assertThat(p.work(8192, 4096)).isEqualTo(0.125);
    assertThat(Packing.NONE.work(8192, 0)).isEqualTo(1.0);
    // Without packing a window keeps its own share: (4096^2 / 2 + 4096^2) / (8192^2 / 2) = 0.75.
    assertThat(Packing.NONE.work(8192, 4096)).isEqualTo(0.75);
    // Documents as long as the sequence, or longer, are the sequence.
    assertThat(Packing.meanLength(8192).work(8192, 0)).isEqualTo(1.0);
    assertThat(Packing.meanLength(16384).work(8192, 0)).isEqualTo(1.0);
  }

  /**
   * One document of 10,000 tokens in sequences of 4,096: two whole sequences and a piece of
   * 1,808, (2 x 4096^2 + 1808^2) / 2 = 18,411,648 pairs over 10,000 / 4,096 = 2.44140625
   * sequences of 8,388,608 pairs (20,480,000): 0.89900625.
   */
  @Test
  void documentsLongerThanASequenceRunOn() {
    Packing p = Packing.of(Map.of(10_000, 1L));
    assertThat(p.work(4096, 0)).isCloseTo((2 * 4096.0 * 4096 + 1808.0 * 1808) / 2
        / (10_000 / 4096.0) / (4096.0 * 4096 / 2), within(1e-12)).isCloseTo(0.89900625,
        within(1e-12));
  }

  /**
   * The work is a mean per token: the documents of two histograms together compute the token
   * weighted mean of what each computes alone, and a histogram's counts scaled alike change
   * nothing. 200 seeded histograms.
   */
  @Test
  void seededHistogramsMixAsTokenWeightedMeans() {
    Random rnd = new Random(20261129);
    for (int i = 0; i < 200; i++) {
      int seq = 256 << rnd.nextInt(6);
      int window = rnd.nextBoolean() ? 0 : 64 << rnd.nextInt(5);
      Map<Integer, Long> a = histogram(rnd, seq);
      Map<Integer, Long> b = histogram(rnd, seq);
      Map<Integer, Long> both = new HashMap<>(a);
      b.forEach((k, v) -> both.merge(k, v, Long::sum));
      double ta = tokens(a);
      double tb = tokens(b);
      double wa = Packing.of(a).work(seq, window);
      double wb = Packing.of(b).work(seq, window);
      assertThat(Packing.of(both).work(seq, window))
          .isCloseTo((ta * wa + tb * wb) / (ta + tb), within(1e-9));
      Map<Integer, Long> tripled = new HashMap<>();
      a.forEach((k, v) -> tripled.put(k, 3 * v));
      assertThat(Packing.of(tripled).work(seq, window)).isCloseTo(wa, within(1e-12));
      assertThat(wa).isGreaterThan(0).isLessThanOrEqualTo(Packing.NONE.work(seq, window));
    }
  }

  private static Map<Integer, Long> histogram(Random rnd, int seq) {
    Map<Integer, Long> h = new HashMap<>();
    int n = 1 + rnd.nextInt(5);
    for (int i = 0; i < n; i++) {
      h.merge(1 + rnd.nextInt(3 * seq), 1L + rnd.nextInt(20), Long::sum);
    }
    return h;
  }

  private static double tokens(Map<Integer, Long> h) {
    double t = 0;
    for (Map.Entry<Integer, Long> e : h.entrySet()) {
      t += (double) e.getKey() * e.getValue();
    }
    return t;
  }

  /**
   * The acceptance case in the training graph: one sequence of 8,192 tokens packing eight
   * documents of 1,024 costs its fused attention kernels exactly the FLOPs of eight sequences of
   * 1,024 (b a s_q s_kv x work: 1 x 8192 x 8192 x 1/8 = 8 x 1024 x 1024 per head and dimension),
   * so meshplan prices the two alike (within 5% is asked; they are equal).
   */
  @Test
  void aPackedSequenceCostsItsDocumentsAsSequences() {
    ModelSpec base = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 1, 256, 4, 2, 512,
        100, 8192, 1, DType.BF16);
    double packed = attentionFlops(base.withPacking(Packing.meanLength(1024)), 1, 8192);
    double apart = attentionFlops(base.withSequence(1024), 8, 1024);
    double whole = attentionFlops(base, 1, 8192);
    assertThat(packed).isEqualTo(apart);
    assertThat(whole).isEqualTo(8 * apart);
    // Model FLOPs per token follow: the attention term at 1/8 of the whole sequence's.
    double perToken = ModelFlops.trainingFlopsPerToken(base.withPacking(Packing.meanLength(1024)),
        8192);
    assertThat(perToken).isCloseTo(ModelFlops.trainingFlopsPerToken(base.withSequence(1024),
        1024), within(1e-6 * perToken));
  }

  private static double attentionFlops(ModelSpec m, int micro, int seq) {
    Graph g = TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, micro, seq)
        .withAttention(Attention.FLASH)).graph();
    double f = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.FUSED_ATTENTION || ins.opcode() == Opcode.FUSED_ATTENTION_GRAD) {
        f += OpCost.flops(g, ins);
      }
    }
    assertThat(f).isPositive();
    return f;
  }

  @Test
  void documentLengthsAreReadOneALine() {
    Packing p = PackingText.parse("docs.txt", "# lengths\n1024\n\n512 3  # three of 512\n1024\n");
    assertThat(p.lengths()).containsExactly(512, 1024);
    assertThat(p.counts()).containsExactly(3, 2);
    assertThat(p.documents()).isEqualTo(5);
    String[][] bad = {{"", "no document lengths"}, {"# only\n", "no document lengths"},
        {"0\n", "docs.txt:1: lengths and counts must be at least 1"},
        {"12\n-5\n", "docs.txt:2: lengths and counts must be at least 1"},
        {"1024 0\n", "at least 1"}, {"ten\n", "docs.txt:1: 'ten' is not a length"},
        {"1 2 3\n", "docs.txt:1: expected a document length"},
        {"99999999999\n", "not a length"}, {"1.5\n", "not a length"},
        {"+\n", "not a length"}};
    for (String[] b : bad) {
      assertThatThrownBy(() -> PackingText.parse("docs.txt", b[0])).as(b[0])
          .isInstanceOf(InputException.class).hasMessageContaining(b[1])
          .hasMessageNotContaining("\n");
    }
  }

  @Test
  void aHistogramsLineMaySeparateItsCountByOneComma() {
    Packing p = PackingText.parse("docs.csv", "1024,8\n512 , 2\n");
    assertThat(p.lengths()).containsExactly(512, 1024);
    assertThat(p.counts()).containsExactly(2, 8);
    // An empty field is not a count of one: the line is refused, not read another way.
    for (String bad : new String[] {"1024,\n", "1024,,3\n", ",3\n"}) {
      assertThatThrownBy(() -> PackingText.parse("docs.csv", bad)).as(bad)
          .isInstanceOf(InputException.class).hasMessageStartingWith("docs.csv:1: ")
          .hasMessageNotContaining("\n");
    }
  }

  @Test
  void theDocumentCountIsBoundedOnEveryLineAndInTotal() {
    long max = PackingText.MAX_DOCUMENTS; // 2^40 = 1,099,511,627,776
    assertThat(PackingText.parse("docs.txt", "1024 " + max + "\n").documents()).isEqualTo(max);
    assertThat(PackingText.parse("docs.txt", "1024 " + (max - 1) + "\n512\n").documents())
        .isEqualTo(max);
    // One line past the bound, one line at Long.MAX_VALUE, and two lines whose sum passes it.
    String[] bad = {"1024 " + (max + 1) + "\n", "1024 " + Long.MAX_VALUE + "\n",
        "1024 " + max + "\n512 1\n"};
    for (String b : bad) {
      assertThatThrownBy(() -> PackingText.parse("docs.txt", b)).as(b)
          .isInstanceOf(InputException.class)
          .hasMessageContaining("more than " + max + " documents");
    }
    // The histogram itself holds the bound, whoever builds it (a plan file): counts that would
    // wrap a long are refused before they are summed.
    assertThatThrownBy(() -> new Packing(new int[] {512, 1024},
        new long[] {Long.MAX_VALUE, Long.MAX_VALUE}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most " + max + " documents");
  }
}
