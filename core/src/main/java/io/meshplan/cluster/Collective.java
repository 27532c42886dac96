package io.meshplan.cluster;

/**
 * The collective operations that meshplan prices and calibrates.
 *
 * <p>The bus-bandwidth factor follows nccl-tests {@code doc/PERFORMANCE.md}: busbw = algbw * factor,
 * where the factor is 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
 * all-to-all, and 1 for send/recv, broadcast and reduce.
 */
public enum Collective {
  /** Sum over the group; every rank gets the full result. */
  ALL_REDUCE,
  /** Every rank gets the concatenation of all ranks' buffers. */
  ALL_GATHER,
  /** Sum over the group; every rank gets one slice of the result. */
  REDUCE_SCATTER,
  /** Every rank sends a distinct slice to every other rank. */
  ALL_TO_ALL,
  /** Point-to-point transfer between pairs of ranks. */
  SEND_RECV,
  /** One rank sends its buffer to all. */
  BROADCAST,
  /** Sum to one rank. */
  REDUCE;

  /**
   * The nccl-tests bus-bandwidth factor for a group of {@code n} ranks.
   *
   * @param n the number of ranks, at least 1
   * @return busbw / algbw
   */
  public double busFactor(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("group size must be >= 1, got " + n);
    }
    return switch (this) {
      case ALL_REDUCE -> 2.0 * (n - 1) / n;
      case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL -> (double) (n - 1) / n;
      case SEND_RECV, BROADCAST, REDUCE -> 1.0;
    };
  }
}
