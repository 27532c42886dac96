package io.meshplan.interop.cost;

import io.meshplan.model.MoeShape;
import io.meshplan.util.Require;

/**
 * What a mixture-of-experts block moves between GPUs per microbatch, beyond its tensor-parallel
 * traffic: the expert-parallel all-to-alls of its token dispatch and combine (Megatron-Core's
 * {@code MoEAlltoAllTokenDispatcher}: one all-to-all to dispatch and one to combine in the
 * forward pass, their transposes in the backward), and with expert tensor parallelism the
 * all-gather of the received rows over the ETP group after each dispatch and the reduce-scatter
 * before each combine. Priced by the stage ({@link StageCostBuilder}), which knows where the
 * expert-parallel group lies.
 *
 * @param expertParallel EP
 * @param expertTensorParallel ETP
 * @param expertParameters the routed experts' weights one GPU holds, elements (part of the
 *     layer's parameters and gradient parameters; their gradients are reduced over the
 *     expert-data-parallel group, not the data-parallel one)
 * @param exchangeBytes the buffer of one all-to-all on the busiest GPU, bytes: the copies of its
 *     tokens it sends, {@code load x T k / t} rows of {@code h} elements
 * @param forwardExchanges all-to-alls in the forward pass of one microbatch
 * @param backwardExchanges all-to-alls in the backward pass of one microbatch, recomputation
 *     included
 * @param expertForwardSeconds the compute between the dispatch and the combine in the forward
 *     pass (the local experts' GEMMs and activation: Megatron-Core's {@code mlp} node), seconds
 * @param expertBackwardSeconds the same compute's backward (data and weight gradients, what is
 *     recomputed of it included), seconds
 * @param routing the layer's experts and routing, which say how many destinations a token's
 *     copies reach ({@link MoeShape#expectedParts}); {@link MoeShape#DENSE} when only the
 *     all-to-all dispatcher prices the exchange
 */
public record ExpertExchange(int expertParallel, int expertTensorParallel,
    double expertParameters, double exchangeBytes, int forwardExchanges, int backwardExchanges,
    double expertForwardSeconds, double expertBackwardSeconds, MoeShape routing) {
  /** A dense layer: nothing exchanged. */
  public static final ExpertExchange NONE = new ExpertExchange(1, 1, 0, 0, 0, 0);

  /**
   * An exchange whose experts' compute is not told apart from the rest of the block.
   *
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param expertParameters the routed experts' weights one GPU holds, elements
   * @param exchangeBytes the buffer of one all-to-all on the busiest GPU, bytes
   * @param forwardExchanges all-to-alls in the forward pass
   * @param backwardExchanges all-to-alls in the backward pass
   */
  public ExpertExchange(int expertParallel, int expertTensorParallel, double expertParameters,
      double exchangeBytes, int forwardExchanges, int backwardExchanges) {
    this(expertParallel, expertTensorParallel, expertParameters, exchangeBytes, forwardExchanges,
        backwardExchanges, 0, 0, MoeShape.DENSE);
  }

  /**
   * An exchange without its routing, priced only by the all-to-all dispatcher.
   *
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param expertParameters the routed experts' weights one GPU holds, elements
   * @param exchangeBytes the buffer of one all-to-all on the busiest GPU, bytes
   * @param forwardExchanges all-to-alls in the forward pass
   * @param backwardExchanges all-to-alls in the backward pass
   * @param expertForwardSeconds the experts' forward compute, seconds
   * @param expertBackwardSeconds the experts' backward compute, seconds
   */
  public ExpertExchange(int expertParallel, int expertTensorParallel, double expertParameters,
      double exchangeBytes, int forwardExchanges, int backwardExchanges,
      double expertForwardSeconds, double expertBackwardSeconds) {
    this(expertParallel, expertTensorParallel, expertParameters, exchangeBytes, forwardExchanges,
        backwardExchanges, expertForwardSeconds, expertBackwardSeconds, MoeShape.DENSE);
  }

  /** Validates the numbers. */
  public ExpertExchange {
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.nonNegative(expertParameters, "expert parameters");
    Require.nonNegative(exchangeBytes, "exchange bytes");
    Require.that(forwardExchanges >= 0 && backwardExchanges >= 0,
        "exchange counts must not be negative");
    Require.nonNegative(expertForwardSeconds, "expert forward seconds");
    Require.nonNegative(expertBackwardSeconds, "expert backward seconds");
    Require.nonNull(routing, "routing");
  }

  /**
   * Whether the layer has experts.
   *
   * @return whether it exchanges tokens
   */
  public boolean routed() {
    return forwardExchanges > 0;
  }

  /**
   * This exchange of a layer that holds no expert weights of its own (one that runs another
   * layer's, {@link LayerCost#sharingWeights}).
   *
   * @return the exchange
   */
  public ExpertExchange withoutWeights() {
    return new ExpertExchange(expertParallel, expertTensorParallel, 0, exchangeBytes,
        forwardExchanges, backwardExchanges, expertForwardSeconds, expertBackwardSeconds,
        routing);
  }

  /**
   * The exchange with the forward pass run again in the backward (full recomputation re-runs the
   * dispatch and combine).
   *
   * @return the exchange
   */
  public ExpertExchange withFullRecompute() {
    return new ExpertExchange(expertParallel, expertTensorParallel, expertParameters,
        exchangeBytes, forwardExchanges, backwardExchanges + forwardExchanges,
        expertForwardSeconds, expertBackwardSeconds + expertForwardSeconds, routing);
  }
}
