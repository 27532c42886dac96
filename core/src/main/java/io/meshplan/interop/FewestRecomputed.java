package io.meshplan.interop;

import io.meshplan.util.Require;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * The fewest first blocks of each model chunk that a pipeline under full recomputation must
 * recompute to fit (Megatron-Core's block method, {@code --recompute-method block
 * --recompute-num-layers r}), as the interleaved search, {@code plan --for} and the Megatron-LM
 * grid find it. Recomputing one block more never needs more memory and never takes less time, so
 * whether {@code r} fits is monotone in {@code r} and the fewest that fit is also the fastest:
 * bisection finds it after trying the most first (when the most do not fit, fewer do not either).
 */
final class FewestRecomputed {
  private FewestRecomputed() {}

  /**
   * The counts a pipeline with chunks of these blocks may recompute short of every block: 1 to
   * one less than its largest chunk (a chunk with fewer blocks recomputes them all).
   *
   * @param chunkLayers blocks per chunk
   * @return the largest such count, 0 when the chunks hold one block at most
   */
  static int most(int[] chunkLayers) {
    int m = 0;
    for (int n : chunkLayers) {
      m = Math.max(m, n);
    }
    return Math.max(0, m - 1);
  }

  /**
   * The fewest counts that fit, trying {@code most}, then bisecting {@code [1, most]}.
   *
   * @param most the largest count tried, >= 1
   * @param fitting what recomputing {@code r} blocks gives where it fits, empty where it does not
   * @param <T> what a count that fits gives
   * @return what the fewest that fit gives, or empty when {@code most} does not fit
   */
  static <T> Optional<T> search(int most, IntFunction<Optional<T>> fitting) {
    Require.positive(most, "most recomputed blocks");
    Optional<T> fit = fitting.apply(most);
    int lo = 1;
    int hi = most;
    while (fit.isPresent() && lo < hi) {
      int r = (lo + hi) >>> 1;
      Optional<T> at = fitting.apply(r);
      if (at.isPresent()) {
        fit = at;
        hi = r;
      } else {
        lo = r + 1;
      }
    }
    return fit;
  }

  /**
   * The largest count in {@code [1, most]} that still holds a property true of 1 and lost for
   * good once lost (a time bound under the best iteration found: bounds grow with the count), by
   * bisection. The fewest counts that fit matter only up to it.
   *
   * @param most the largest count, >= 1
   * @param holds the property, true of 1
   * @return the count, >= 1
   */
  static int last(int most, IntPredicate holds) {
    Require.positive(most, "most recomputed blocks");
    int lo = 1;
    int hi = most;
    while (lo < hi) {
      int r = (lo + hi + 1) >>> 1;
      if (holds.test(r)) {
        lo = r;
      } else {
        hi = r - 1;
      }
    }
    return lo;
  }
}
