package io.meshplan.interop.cost;

import io.meshplan.util.Require;

/**
 * What context parallelism moves per block and microbatch (Megatron-Core's context parallelism,
 * {@code transformer_engine} attention with {@code cp_comm_type}): each of the {@code CP} GPUs
 * holds its share of the sequence and the attention core needs the keys and values of all of it.
 * <ul>
 *   <li>{@code p2p} (the default): the K/V blocks travel round a ring in {@code CP - 1} steps,
 *       each step's transfer under the attention of the block before it; the backward pass sends
 *       the K/V blocks round again and the gradients of K and V back, twice the forward's bytes;
 *   <li>{@code all_gather}: K and V are all-gathered before the attention and their gradients
 *       reduce-scattered after it, nothing overlapped.
 * </ul>
 * Priced by the stage ({@link StageCostBuilder}), where the CP group lies.
 *
 * @param contextParallel CP
 * @param allGather the {@code all_gather} form rather than the ring
 * @param kvBytes the keys and values one GPU holds for its share of the sequence, bytes
 * @param attentionForwardSeconds the attention kernels of the forward pass, seconds
 * @param attentionBackwardSeconds the attention kernels of the backward pass, seconds
 * @param passes forward passes whose exchange the block runs (2 with full recomputation)
 */
public record RingExchange(int contextParallel, boolean allGather, double kvBytes,
    double attentionForwardSeconds, double attentionBackwardSeconds, int passes) {
  /** No context parallelism. */
  public static final RingExchange NONE = new RingExchange(1, false, 0, 0, 0, 1);

  /** Validates the numbers. */
  public RingExchange {
    Require.positive(contextParallel, "context-parallel size");
    Require.nonNegative(kvBytes, "K/V bytes");
    Require.nonNegative(attentionForwardSeconds, "attention forward seconds");
    Require.nonNegative(attentionBackwardSeconds, "attention backward seconds");
    Require.positive(passes, "passes");
  }

  /**
   * Whether the sequence is split.
   *
   * @return {@code CP > 1}
   */
  public boolean split() {
    return contextParallel > 1;
  }

  /**
   * The exchange with the forward pass run again in the backward.
   *
   * @return the exchange
   */
  public RingExchange withFullRecompute() {
    return new RingExchange(contextParallel, allGather, kvBytes, attentionForwardSeconds,
        attentionBackwardSeconds, passes + 1);
  }
}
