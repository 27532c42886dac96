package io.meshplan.model;

import io.meshplan.util.Require;
import java.util.Arrays;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Documents packed into the training sequences, each attending only within itself: supervised
 * fine-tuning's packed sequences (NeMo's packed SFT datasets, Hugging Face TRL's packing) and
 * pre-training with document masking (Megatron-LM's {@code --dataloader-inter-document-masking},
 * which hands the attention kernel each document's bounds as {@code cu_seqlens}; torchtitan main,
 * whose language models always mask by document). Causal attention over a sequence of {@code s}
 * tokens computes {@code s^2 / 2} query-key pairs ({@link AttentionShape#causalPairs}); over
 * packed documents of {@code d_1 ... d_n} tokens only {@code sum d_i^2 / 2}, the sum of the
 * documents' squares and not the sequence's.
 *
 * <p>The documents are given as a histogram: how many documents have each length, in tokens. A
 * document longer than a sequence is cut at the sequence's end and runs on in the next ones, so a
 * document of {@code q s + r} tokens attends as {@code q} whole sequences and one piece of {@code
 * r}; shorter documents are packed whole. Sequences are taken as full (no padding), so the work
 * per sequence is the documents' pairs over the sequences they fill: {@code sum_i c_i (q_i P(s) +
 * P(r_i)) / (T / s)} for {@code c_i} documents of length {@code L_i = q_i s + r_i} and {@code T =
 * sum c_i L_i} tokens. Eight documents of 1,024 tokens in a sequence of 8,192 compute {@code 8 x
 * 1024^2 / 2} pairs, exactly eight sequences of 1,024.
 *
 * <p>The kernels that run it (FlashAttention's {@code flash_attn_varlen_func}, cuDNN's THD layout,
 * FlexAttention's block mask) tile each document as the fixed-length kernel tiles a sequence
 * (Dao, FlashAttention-2, arXiv:2307.08691, section 3: the work is split by query blocks of each
 * sequence, and the variable-length form indexes the same blocks by {@code cu_seqlens}), so
 * meshplan prices the fewer pairs at the fixed-length kernel's rate for sequences of the
 * documents' length ({@link #attentionSpan}: where that rate moves with the length,
 * a sequence packing eight documents of 1,024 runs as eight sequences of 1,024).
 *
 * @param lengths document lengths in tokens, ascending and distinct; empty for no packing
 * @param counts how many documents have each length, each at least 1
 */
public record Packing(int[] lengths, long[] counts) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The most distinct document lengths a histogram may hold. */
  public static final int MAX_LENGTHS = 1 << 20;

  /**
   * The most documents a histogram may count: 2^40, about a trillion (a corpus of a trillion
   * documents of a thousand tokens is a quadrillion tokens, beyond any training run).
   */
  public static final long MAX_DOCUMENTS = 1L << 40;

  /** No packing: one document per sequence, attending over the whole sequence. */
  public static final Packing NONE = new Packing(new int[0], new long[0]);

  /** Copies and validates the histogram. */
  public Packing {
    Require.nonNull(lengths, "lengths");
    Require.nonNull(counts, "counts");
    Require.that(lengths.length == counts.length, "one count per document length");
    int given = lengths.length;
    Require.that(given <= MAX_LENGTHS, () -> "at most " + MAX_LENGTHS
        + " distinct document lengths, got " + given);
    lengths = lengths.clone();
    counts = counts.clone();
    long documents = 0;
    for (int i = 0; i < lengths.length; i++) {
      int len = lengths[i];
      Require.that(len > 0 && (i == 0 || len > lengths[i - 1]),
          "document lengths must be positive, ascending and distinct");
      Require.that(counts[i] > 0, "every document length needs a count of at least 1");
      // Checked before adding: the total stays within MAX_DOCUMENTS and never wraps.
      Require.that(counts[i] <= MAX_DOCUMENTS - documents,
          () -> "at most " + MAX_DOCUMENTS + " documents");
      documents += counts[i];
    }
  }

  /**
   * Documents all of one length.
   *
   * @param tokens the length of every document, tokens
   * @return the packing
   */
  public static Packing meanLength(int tokens) {
    Require.positive(tokens, "document length");
    return new Packing(new int[] {tokens}, new long[] {1});
  }

  /**
   * A histogram of document lengths.
   *
   * @param histogram length to count, each length and count positive
   * @return the packing
   */
  public static Packing of(Map<Integer, Long> histogram) {
    SortedMap<Integer, Long> sorted = new TreeMap<>(histogram);
    int[] l = new int[sorted.size()];
    long[] c = new long[sorted.size()];
    int i = 0;
    for (Map.Entry<Integer, Long> e : sorted.entrySet()) {
      l[i] = e.getKey();
      c[i] = e.getValue();
      i++;
    }
    return new Packing(l, c);
  }

  /**
   * Whether documents are packed.
   *
   * @return false for {@link #NONE}
   */
  public boolean packed() {
    return lengths.length > 0;
  }

  /**
   * The documents, all of them.
   *
   * @return the number of documents the histogram counts
   */
  public long documents() {
    long n = 0;
    for (long c : counts) {
      n = Math.addExact(n, c);
    }
    return n;
  }

  /**
   * The mean document length.
   *
   * @return tokens per document
   */
  public double meanTokens() {
    Require.that(packed(), "no documents");
    double t = 0;
    for (int i = 0; i < lengths.length; i++) {
      t += (double) lengths[i] * counts[i];
    }
    return t / documents();
  }

  /**
   * The causal query-key pairs one sequence computes on average, as a fraction of a sequence of
   * one document: the class comment's sum over the sequences the documents fill, with a sliding
   * window of {@code window} tokens on each document where the layer has one.
   *
   * @param seq tokens per sequence s
   * @param window the layer's window, 0 for none
   * @return the fraction of {@code causalPairs(seq, 0)}, in (0, 1]
   */
  public double work(int seq, int window) {
    double whole = AttentionShape.causalPairs(seq, window);
    double full = AttentionShape.causalPairs(seq, 0);
    if (!packed()) {
      return whole / full;
    }
    double pairs = 0;
    double tokens = 0;
    for (int i = 0; i < lengths.length; i++) {
      int q = lengths[i] / seq;
      int r = lengths[i] % seq;
      double c = counts[i];
      pairs += c * (q * whole + (r > 0 ? AttentionShape.causalPairs(r, window) : 0));
      tokens += c * lengths[i];
    }
    return Math.min(1, pairs / (tokens / seq) / full);
  }

  /**
   * The length of the sequences a packed sequence's attention kernel runs within: the documents'
   * length whose causal pairs equal theirs ({@link #work} of the whole sequence times its length:
   * eight documents of 1,024 in 8,192 tokens attend as sequences of 1,024), which sets the
   * kernel's speed ({@link io.meshplan.graph.OpCost#attentionSpan}); 0, the whole sequence, when
   * nothing is packed.
   *
   * @param seq tokens per sequence
   * @return tokens, or 0
   */
  public int attentionSpan(int seq) {
    if (!packed()) {
      return 0;
    }
    return (int) Math.max(1, Math.round(work(seq, 0) * seq));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Packing p && Arrays.equals(lengths, p.lengths)
        && Arrays.equals(counts, p.counts);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(lengths) + Arrays.hashCode(counts);
  }

  @Override
  public String toString() {
    return packed() ? "Packing[" + documents() + " documents, mean " + meanTokens() + " tokens]"
        : "Packing[none]";
  }

  /**
   * The lengths, ascending.
   *
   * @return a copy
   */
  @Override
  public int[] lengths() {
    return lengths.clone();
  }

  /**
   * The counts, by length.
   *
   * @return a copy
   */
  @Override
  public long[] counts() {
    return counts.clone();
  }
}
