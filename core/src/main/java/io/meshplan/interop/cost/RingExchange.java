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
 * A hybrid model's Mamba-2 and Gated DeltaNet layers ({@link #headSwap}) exchange otherwise
 * (Megatron-Core's {@code mamba_context_parallel.py} and {@code gated_delta_net/common.py}): an
 * all-to-all turns each GPU's share of the sequence for all its heads into the whole sequence for
 * {@code 1/CP} of them before the convolution and scan, and another turns the output back before
 * the output projection; the backward pass runs both again for the gradients; nothing overlapped.
 * Attention under head-parallel context parallelism ({@code cp_comm_type a2a}, DeepSpeed-Ulysses,
 * {@link io.meshplan.plan.ContextExchange#ALL_TO_ALL}) is the same exchange around the attention
 * core: Q, K and V in, the output back. Priced by the stage ({@link StageCostBuilder}), where the
 * CP group lies.
 *
 * @param contextParallel CP
 * @param allGather the {@code all_gather} form rather than the ring
 * @param kvBytes the keys and values one GPU holds for its share of the sequence, bytes; for a
 *     head swap, the bytes one GPU holds of the tensors both all-to-alls move
 * @param attentionForwardSeconds the attention kernels of the forward pass, seconds
 * @param attentionBackwardSeconds the attention kernels of the backward pass, seconds
 * @param passes forward passes whose exchange the block runs (2 with full recomputation)
 * @param headSwap head-parallel all-to-alls (a hybrid mixer's, or Ulysses' around the attention
 *     core) rather than the keys and values' ring or all-gather
 */
public record RingExchange(int contextParallel, boolean allGather, double kvBytes,
    double attentionForwardSeconds, double attentionBackwardSeconds, int passes,
    boolean headSwap) {
  /** No context parallelism. */
  public static final RingExchange NONE = new RingExchange(1, false, 0, 0, 0, 1, false);

  /**
   * Attention's exchange.
   *
   * @param contextParallel CP
   * @param allGather the {@code all_gather} form rather than the ring
   * @param kvBytes the keys and values one GPU holds for its share of the sequence, bytes
   * @param attentionForwardSeconds the attention kernels of the forward pass, seconds
   * @param attentionBackwardSeconds the attention kernels of the backward pass, seconds
   * @param passes forward passes whose exchange the block runs
   */
  public RingExchange(int contextParallel, boolean allGather, double kvBytes,
      double attentionForwardSeconds, double attentionBackwardSeconds, int passes) {
    this(contextParallel, allGather, kvBytes, attentionForwardSeconds, attentionBackwardSeconds,
        passes, false);
  }

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
        attentionBackwardSeconds, passes + 1, headSwap);
  }
}
