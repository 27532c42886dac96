package io.meshplan.interop;

/**
 * Global batches a cluster's GPUs can share. A pipeline covers every GPU with stages whose
 * data-parallel replicas each take 1, 2, 4 or 8 sequences of one microbatch size; stage sizes
 * are node-sized or powers of two inside a node, so where the GPU count has an odd factor (576 =
 * 9 x 64 in racks of 72) a power-of-two batch may divide over none of them, and that factor times
 * a power of two does.
 */
public final class SharedBatch {
  private SharedBatch() {}

  /**
   * The batch nearest {@code target} in ratio among the GPU count's odd factor {@code o} times a
   * power of two (the larger on a tie): 576 GPUs and 1,024 give 9 x 128 = 1,152 (1,152 / 1,024 =
   * 1.125 above, where 9 x 64 = 576 is 1.78 below); a power of two of GPUs gives the power of two
   * nearest {@code target}; an odd factor above {@code target} is itself.
   *
   * @param gpus the cluster's GPUs, >= 1
   * @param target the batch wanted, sequences, >= 1
   * @return sequences
   */
  public static int nearest(int gpus, int target) {
    int odd = oddPart(gpus);
    if (odd >= target) {
      return odd;
    }
    long below = odd;
    while (below * 2 <= target) {
      below *= 2;
    }
    long above = below * 2;
    // Nearer in ratio: above / target against target / below, compared without division.
    return (int) Math.min(Integer.MAX_VALUE,
        above * below <= (long) target * target ? above : below);
  }

  /**
   * Advice for a message: {@code " (e.g. 1152, the GPU count's odd factor 9 times 128)"} where
   * the nearest shared batch differs from the one given, else nothing.
   *
   * @param gpus the cluster's GPUs, >= 1
   * @param batch the batch given, sequences
   * @return the clause, with its leading space, or empty
   */
  public static String advice(int gpus, int batch) {
    int alt = nearest(gpus, batch);
    return alt == batch || oddPart(gpus) == 1 ? "" : " (e.g. " + alt + ", " + why(gpus, alt)
        + ")";
  }

  /**
   * What a shared batch is made of, for messages: {@code "the GPU count's odd factor 9 times
   * 128"} for 1,152 on 576 GPUs.
   *
   * @param gpus the cluster's GPUs, >= 1
   * @param batch a batch {@link #nearest} gave for them
   * @return the words
   */
  public static String why(int gpus, int batch) {
    int odd = oddPart(gpus);
    return "the GPU count's odd factor " + odd + " times " + batch / odd;
  }

  /** {@code n} (>= 1) without its factors of 2. */
  private static int oddPart(int n) {
    return n >> Integer.numberOfTrailingZeros(n);
  }
}
