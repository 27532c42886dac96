package io.meshplan.interop.cost;

import io.meshplan.plan.TensorSharding;
import io.meshplan.util.Require;
import java.util.List;

/**
 * What one layer (a transformer block, the embedding, or the LM head with its loss) costs on one
 * data-parallel replica of a stage: the intra-operator plan of its training graph for one
 * microbatch, priced in seconds and split by phase. Sizes are per GPU. Its eighteen numbers are
 * best given by name, with {@link #builder()}.
 *
 * @param forwardSeconds forward of one microbatch, compute plus tensor-parallel communication and
 *     resharding, seconds
 * @param backwardSeconds backward of one microbatch, recomputation included, seconds
 * @param recomputeSeconds the recomputation inside {@code backwardSeconds}, seconds
 * @param tensorCommSeconds the communication inside forward plus backward, seconds
 * @param forwardCommSeconds the part of {@code tensorCommSeconds} in the forward pass, seconds
 * @param parameters weights held by one GPU in the compute precision, elements
 * @param gradientParameters elements of the fp32 gradient accumulator one GPU holds; the
 *     optimizer updates exactly these (master weight and moments take the accumulator's layout),
 *     so they also count the optimizer state per GPU
 * @param updateGatherSeconds per iteration, the all-gather over the tensor axis that rebuilds
 *     weights whose gradients are more finely split than the weights themselves (the ILP may keep
 *     a weight replicated while splitting its gradient, as ZeRO does), seconds
 * @param savedActivationBytes activations one microbatch keeps from its forward until its
 *     backward, bytes per GPU
 * @param temporaryBytes the largest transient working set of the layer beyond weights and saved
 *     activations, bytes per GPU
 * @param inputBytes the layer's input activation on one GPU, bytes (what full recomputation
 *     keeps)
 * @param boundaryBytes the activation one GPU sends to the next stage when a stage ends after this
 *     layer, bytes per microbatch
 * @param modelFlops FLOPs of forward plus backward of one microbatch on one replica, without
 *     recomputation
 * @param hardwareFlops the same with recomputation
 * @param tensors the layer's largest tensors and their layouts
 * @param tensorCommBytes bytes one GPU sends on the tensor axis in forward plus backward of one
 *     microbatch (the collectives and reshardings of the chosen layouts), counted as nccl-tests
 *     counts bus bytes: a ring all-reduce of an {@code S}-byte buffer over {@code t} GPUs sends
 *     {@code 2(t-1)/t * S}, an all-gather or reduce-scatter {@code (t-1)/t * S} (see {@link
 *     io.meshplan.cluster.BusBytesCommModel})
 * @param forwardCommBytes the part of {@code tensorCommBytes} in the forward pass, bytes
 * @param updateGatherBytes bytes one GPU sends per iteration in the all-gather of {@code
 *     updateGatherSeconds}, {@code (t-1)/t} of the gathered weights
 * @param accumulateSeconds the separate fp32 gradient accumulation inside {@code
 *     backwardSeconds} (cast and add into the accumulator, every microbatch), the work a framework
 *     saves by fusing the accumulation into the weight-gradient GEMMs, seconds
 * @param experts the layer's expert exchange
 * @param ring the layer's context-parallel exchange
 * @param frozenParameters the part of {@code parameters} no gradient updates (a LoRA base),
 *     elements of the storage type: weights a sharded optimizer neither holds nor gathers
 */
public record LayerCost(double forwardSeconds, double backwardSeconds, double recomputeSeconds,
    double tensorCommSeconds, double forwardCommSeconds, double parameters, double gradientParameters,
    double updateGatherSeconds, double savedActivationBytes,
    double temporaryBytes, double inputBytes, double boundaryBytes, double modelFlops, double hardwareFlops,
    List<TensorSharding> tensors, double tensorCommBytes, double forwardCommBytes,
    double updateGatherBytes, double accumulateSeconds, ExpertExchange experts,
    RingExchange ring, double frozenParameters) {
  /** Validates the numbers. */
  public LayerCost {
    Require.nonNegative(forwardSeconds, "forward seconds");
    Require.nonNegative(backwardSeconds, "backward seconds");
    Require.nonNegative(recomputeSeconds, "recompute seconds");
    Require.nonNegative(tensorCommSeconds, "communication seconds");
    Require.nonNegative(forwardCommSeconds, "forward communication seconds");
    Require.nonNegative(inputBytes, "input bytes");
    Require.nonNegative(parameters, "parameters");
    Require.nonNegative(gradientParameters, "gradient parameters");
    Require.that(frozenParameters >= 0 && frozenParameters <= parameters, () -> "frozen "
        + "parameters must be between 0 and the parameters, got " + frozenParameters);
    Require.nonNegative(updateGatherSeconds, "update gather seconds");
    Require.nonNegative(savedActivationBytes, "saved activation bytes");
    Require.nonNegative(temporaryBytes, "temporary bytes");
    Require.nonNegative(boundaryBytes, "boundary bytes");
    Require.nonNegative(modelFlops, "model FLOPs");
    Require.nonNegative(hardwareFlops, "hardware FLOPs");
    tensors = List.copyOf(tensors);
    Require.nonNegative(tensorCommBytes, "communication bytes");
    Require.nonNegative(forwardCommBytes, "forward communication bytes");
    Require.that(forwardCommBytes <= tensorCommBytes * (1 + 1e-12) + 1e-9,
        () -> "forward communication bytes " + forwardCommBytes + " exceed the total "
            + tensorCommBytes);
    Require.nonNegative(updateGatherBytes, "update gather bytes");
    Require.nonNegative(accumulateSeconds, "accumulate seconds");
    Require.nonNull(experts, "experts");
    Require.nonNull(ring, "ring");
    Require.that(accumulateSeconds <= backwardSeconds * (1 + 1e-12) + 1e-15,
        () -> "accumulate seconds " + accumulateSeconds + " exceed the backward's "
            + backwardSeconds);
  }

  /**
   * This layer run again on weights another layer holds (a multi-token prediction depth that
   * shares the first depth's module, {@link io.meshplan.model.Architecture#mtpShared}): the same
   * passes, activations and exchanges, and no weights, gradients, optimizer state or parameter
   * gathers of its own; its weight gradients still accumulate into the shared ones.
   *
   * @return the layer
   */
  public LayerCost sharingWeights() {
    return new LayerCost(forwardSeconds, backwardSeconds, recomputeSeconds, tensorCommSeconds,
        forwardCommSeconds, 0, 0, 0, savedActivationBytes, temporaryBytes, inputBytes,
        boundaryBytes, modelFlops, hardwareFlops, List.of(), tensorCommBytes, forwardCommBytes, 0,
        accumulateSeconds, experts.withoutWeights(), ring, 0);
  }

  /**
   * Forward plus backward of one microbatch.
   *
   * @return seconds
   */
  public double latencySeconds() {
    return forwardSeconds + backwardSeconds;
  }

  /**
   * The forward's compute: the forward without its tensor-parallel communication.
   *
   * @return seconds, >= 0
   */
  public double forwardComputeSeconds() {
    return Math.max(0, forwardSeconds - forwardCommSeconds);
  }

  /**
   * The backward's compute: the backward (recomputation included) without its tensor-parallel
   * communication.
   *
   * @return seconds, >= 0
   */
  public double backwardComputeSeconds() {
    return Math.max(0, backwardSeconds - (tensorCommSeconds - forwardCommSeconds));
  }

  /**
   * This layer with full recomputation (Chen et al. 2016; Korthikanti et al. MLSys'23): the
   * backward first runs the forward again with the same layouts, so it adds the forward's time,
   * communication (seconds and bytes) and FLOPs; only the input is kept between the passes, and
   * while one layer runs its backward its whole set of activations lives as working memory.
   *
   * @return the cost under full recomputation, derived from this cost without recomputation
   */
  public LayerCost withFullRecompute() {
    return toBuilder()
        .backwardSeconds(backwardSeconds + forwardSeconds)
        .recomputeSeconds(recomputeSeconds + forwardSeconds)
        .tensorCommSeconds(tensorCommSeconds + forwardCommSeconds)
        .savedActivationBytes(Math.min(inputBytes, savedActivationBytes))
        .temporaryBytes(temporaryBytes + savedActivationBytes)
        // Every dot's backward is two dots of its size (input and weight gradients), so the
        // forward is a third of the model FLOPs.
        .hardwareFlops(hardwareFlops + modelFlops / 3.0)
        .tensorCommBytes(tensorCommBytes + forwardCommBytes)
        .experts(experts.withFullRecompute()).ring(ring.withFullRecompute())
        .build();
  }

  /**
   * Starts a cost with every number 0 and no tensors.
   *
   * @return the builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts a cost from this one.
   *
   * @return a builder holding this cost's fields
   */
  public Builder toBuilder() {
    return new Builder()
        .forwardSeconds(forwardSeconds).backwardSeconds(backwardSeconds)
        .recomputeSeconds(recomputeSeconds).tensorCommSeconds(tensorCommSeconds)
        .forwardCommSeconds(forwardCommSeconds).parameters(parameters)
        .gradientParameters(gradientParameters).updateGatherSeconds(updateGatherSeconds)
        .savedActivationBytes(savedActivationBytes).temporaryBytes(temporaryBytes)
        .inputBytes(inputBytes).boundaryBytes(boundaryBytes).modelFlops(modelFlops)
        .hardwareFlops(hardwareFlops).tensors(tensors).tensorCommBytes(tensorCommBytes)
        .forwardCommBytes(forwardCommBytes).updateGatherBytes(updateGatherBytes)
        .accumulateSeconds(accumulateSeconds).experts(experts).ring(ring)
        .frozenParameters(frozenParameters);
  }

  /**
   * Collects a cost's fields by name; {@link #build} checks them as the record does. The fields
   * are those of {@link LayerCost}, in its units.
   */
  public static final class Builder {
    private double forwardSeconds;
    private double backwardSeconds;
    private double recomputeSeconds;
    private double tensorCommSeconds;
    private double forwardCommSeconds;
    private double parameters;
    private double gradientParameters;
    private double frozenParameters;
    private double updateGatherSeconds;
    private double savedActivationBytes;
    private double temporaryBytes;
    private double inputBytes;
    private double boundaryBytes;
    private double modelFlops;
    private double hardwareFlops;
    private List<TensorSharding> tensors = List.of();
    private double tensorCommBytes;
    private double forwardCommBytes;
    private double updateGatherBytes;
    private double accumulateSeconds;
    private ExpertExchange experts = ExpertExchange.NONE;
    private RingExchange ring = RingExchange.NONE;

    /**
     * Sets the context-parallel exchange.
     *
     * @param value the exchange
     * @return this builder
     */
    public Builder ring(RingExchange value) {
      this.ring = value;
      return this;
    }

    private Builder() {}

    /**
     * Sets the mixture-of-experts exchange.
     *
     * @param value the exchange
     * @return this builder
     */
    public Builder experts(ExpertExchange value) {
      this.experts = value;
      return this;
    }

    /**
     * Sets {@code forwardSeconds}.
     *
     * @param value forward of one microbatch, seconds
     * @return this builder
     */
    public Builder forwardSeconds(double value) {
      this.forwardSeconds = value;
      return this;
    }

    /**
     * Sets {@code backwardSeconds}.
     *
     * @param value backward of one microbatch, recomputation included, seconds
     * @return this builder
     */
    public Builder backwardSeconds(double value) {
      this.backwardSeconds = value;
      return this;
    }

    /**
     * Sets {@code recomputeSeconds}.
     *
     * @param value the recomputation inside the backward, seconds
     * @return this builder
     */
    public Builder recomputeSeconds(double value) {
      this.recomputeSeconds = value;
      return this;
    }

    /**
     * Sets {@code tensorCommSeconds}.
     *
     * @param value the communication inside forward plus backward, seconds
     * @return this builder
     */
    public Builder tensorCommSeconds(double value) {
      this.tensorCommSeconds = value;
      return this;
    }

    /**
     * Sets {@code forwardCommSeconds}.
     *
     * @param value the part of the communication in the forward pass, seconds
     * @return this builder
     */
    public Builder forwardCommSeconds(double value) {
      this.forwardCommSeconds = value;
      return this;
    }

    /**
     * Sets {@code parameters}.
     *
     * @param value weights held by one GPU in the compute precision, elements
     * @return this builder
     */
    public Builder parameters(double value) {
      this.parameters = value;
      return this;
    }

    /**
     * Sets {@code gradientParameters}.
     *
     * @param value elements of the fp32 gradient accumulator one GPU holds
     * @return this builder
     */
    public Builder gradientParameters(double value) {
      this.gradientParameters = value;
      return this;
    }

    /**
     * Sets {@code frozenParameters}.
     *
     * @param value weights one GPU holds that no gradient updates, storage elements
     * @return this builder
     */
    public Builder frozenParameters(double value) {
      this.frozenParameters = value;
      return this;
    }

    /**
     * Sets {@code updateGatherSeconds}.
     *
     * @param value the per-iteration all-gather of weights over the tensor axis, seconds
     * @return this builder
     */
    public Builder updateGatherSeconds(double value) {
      this.updateGatherSeconds = value;
      return this;
    }

    /**
     * Sets {@code savedActivationBytes}.
     *
     * @param value activations one microbatch keeps until its backward, bytes per GPU
     * @return this builder
     */
    public Builder savedActivationBytes(double value) {
      this.savedActivationBytes = value;
      return this;
    }

    /**
     * Sets {@code temporaryBytes}.
     *
     * @param value the largest transient working set, bytes per GPU
     * @return this builder
     */
    public Builder temporaryBytes(double value) {
      this.temporaryBytes = value;
      return this;
    }

    /**
     * Sets {@code inputBytes}.
     *
     * @param value the layer's input activation on one GPU, bytes
     * @return this builder
     */
    public Builder inputBytes(double value) {
      this.inputBytes = value;
      return this;
    }

    /**
     * Sets {@code boundaryBytes}.
     *
     * @param value the activation one GPU sends to the next stage, bytes per microbatch
     * @return this builder
     */
    public Builder boundaryBytes(double value) {
      this.boundaryBytes = value;
      return this;
    }

    /**
     * Sets {@code modelFlops}.
     *
     * @param value FLOPs of forward plus backward of one microbatch, without recomputation
     * @return this builder
     */
    public Builder modelFlops(double value) {
      this.modelFlops = value;
      return this;
    }

    /**
     * Sets {@code hardwareFlops}.
     *
     * @param value the same with recomputation
     * @return this builder
     */
    public Builder hardwareFlops(double value) {
      this.hardwareFlops = value;
      return this;
    }

    /**
     * Sets {@code tensors}.
     *
     * @param value the layer's largest tensors and their layouts
     * @return this builder
     */
    public Builder tensors(List<TensorSharding> value) {
      this.tensors = value;
      return this;
    }

    /**
     * Sets {@code tensorCommBytes}.
     *
     * @param value bytes one GPU sends on the tensor axis per microbatch
     * @return this builder
     */
    public Builder tensorCommBytes(double value) {
      this.tensorCommBytes = value;
      return this;
    }

    /**
     * Sets {@code forwardCommBytes}.
     *
     * @param value the part of those bytes in the forward pass
     * @return this builder
     */
    public Builder forwardCommBytes(double value) {
      this.forwardCommBytes = value;
      return this;
    }

    /**
     * Sets {@code updateGatherBytes}.
     *
     * @param value bytes one GPU sends per iteration in the update all-gather
     * @return this builder
     */
    public Builder updateGatherBytes(double value) {
      this.updateGatherBytes = value;
      return this;
    }

    /**
     * Sets {@code accumulateSeconds}.
     *
     * @param value the separate gradient accumulation inside the backward, seconds
     * @return this builder
     */
    public Builder accumulateSeconds(double value) {
      this.accumulateSeconds = value;
      return this;
    }

    /**
     * The cost.
     *
     * @return the cost, validated
     */
    public LayerCost build() {
      return new LayerCost(forwardSeconds, backwardSeconds, recomputeSeconds,
          tensorCommSeconds, forwardCommSeconds, parameters, gradientParameters,
          updateGatherSeconds, savedActivationBytes, temporaryBytes, inputBytes, boundaryBytes,
          modelFlops, hardwareFlops, tensors, tensorCommBytes, forwardCommBytes,
          updateGatherBytes, accumulateSeconds, experts, ring, frozenParameters);
    }
  }
}
