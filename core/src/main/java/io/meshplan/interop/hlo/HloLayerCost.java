package io.meshplan.interop.hlo;

import io.meshplan.plan.TensorSharding;
import io.meshplan.util.Require;
import java.util.List;

/**
 * What one layer of an HLO training step costs on a logical mesh {@code d x t} of one stage,
 * from the intra-operator plan of its graph ({@link HloLayerGraph}): times of the GPUs of the
 * stage, sizes per GPU. The module's batch is one microbatch.
 *
 * @param forwardSeconds forward pass of one microbatch, compute plus communication, seconds
 * @param backwardSeconds backward pass of one microbatch, seconds, without the reduction of the
 *     gradients the update reads (that is {@code gradSyncSeconds})
 * @param tensorCommSeconds the communication inside forward plus backward, seconds
 * @param gradSyncSeconds the collectives that finish the gradients the update reads (for example
 *     their all-reduce over the data-parallel axis), once per iteration after the microbatches'
 *     gradients are summed, seconds
 * @param optimizerSeconds the update, once per iteration, seconds
 * @param weightBytes trained weights per GPU under their layouts, bytes
 * @param gradientBytes the gradients the update reads, per GPU: the accumulators that sum them over
 *     the microbatches, bytes
 * @param stateBytes other trained state per GPU (optimizer moments, counters), bytes
 * @param savedActivationBytes values of one microbatch's forward pass (and batch inputs) that its
 *     backward pass reads, per GPU, bytes
 * @param temporaryBytes the layer's peak working memory beyond its inputs, saved values and
 *     gradients, per GPU, bytes
 * @param modelFlops dot FLOPs of forward plus backward of one microbatch divided by the
 *     data-parallel degree (the work of one replica, as the simulator counts it)
 * @param tensorCommBytes bytes one GPU sends on the tensor axis (axis 1) per microbatch
 * @param dataCommBytes bytes one GPU sends on the data-parallel axis (axis 0) per microbatch
 * @param iterationCommBytes bytes one GPU sends once per iteration (gradient reductions and the
 *     update)
 * @param tensors the layer's largest weights with their layouts
 * @param tensorIds the ids of those weights in the layer's graph (identical layers share a cost;
 *     {@link #renamed} gives each its own names)
 */
public record HloLayerCost(double forwardSeconds, double backwardSeconds, double tensorCommSeconds,
    double gradSyncSeconds, double optimizerSeconds, double weightBytes, double gradientBytes,
    double stateBytes, double savedActivationBytes, double temporaryBytes, double modelFlops,
    double tensorCommBytes, double dataCommBytes, double iterationCommBytes,
    List<TensorSharding> tensors, List<Integer> tensorIds) {

  /** Checks the numbers. */
  public HloLayerCost {
    Require.nonNegative(forwardSeconds, "forward seconds");
    Require.nonNegative(backwardSeconds, "backward seconds");
    Require.nonNegative(tensorCommSeconds, "communication seconds");
    Require.that(tensorCommSeconds <= (forwardSeconds + backwardSeconds) * (1 + 1e-12),
        "communication is part of forward plus backward");
    Require.nonNegative(gradSyncSeconds, "gradient reduction seconds");
    Require.nonNegative(optimizerSeconds, "optimizer seconds");
    Require.nonNegative(weightBytes, "weight bytes");
    Require.nonNegative(gradientBytes, "gradient bytes");
    Require.nonNegative(stateBytes, "state bytes");
    Require.nonNegative(savedActivationBytes, "saved activation bytes");
    Require.nonNegative(temporaryBytes, "temporary bytes");
    Require.nonNegative(modelFlops, "model FLOPs");
    Require.nonNegative(tensorCommBytes, "tensor-axis bytes");
    Require.nonNegative(dataCommBytes, "data-axis bytes");
    Require.nonNegative(iterationCommBytes, "per-iteration bytes");
    tensors = List.copyOf(tensors);
    tensorIds = List.copyOf(tensorIds);
    Require.that(tensorIds.size() == tensors.size(), "one id per listed weight");
  }

  /**
   * This layer followed by another on the same GPUs: times, sizes and FLOPs add up, and the
   * largest temporary working set is the larger one. The listed weights are left out: their ids
   * belong to each layer's own graph.
   *
   * @param next the next layer
   * @return the two layers as one
   */
  public HloLayerCost plus(HloLayerCost next) {
    return new HloLayerCost(forwardSeconds + next.forwardSeconds,
        backwardSeconds + next.backwardSeconds, tensorCommSeconds + next.tensorCommSeconds,
        gradSyncSeconds + next.gradSyncSeconds, optimizerSeconds + next.optimizerSeconds,
        weightBytes + next.weightBytes, gradientBytes + next.gradientBytes,
        stateBytes + next.stateBytes, savedActivationBytes + next.savedActivationBytes,
        Math.max(temporaryBytes, next.temporaryBytes), modelFlops + next.modelFlops,
        tensorCommBytes + next.tensorCommBytes, dataCommBytes + next.dataCommBytes,
        iterationCommBytes + next.iterationCommBytes, List.of(), List.of());
  }

  /**
   * This cost with the listed weights named as in another layer of the same structure.
   *
   * @param layer the layer
   * @return the cost
   */
  public HloLayerCost renamed(HloLayerGraph layer) {
    List<TensorSharding> named = new java.util.ArrayList<>(tensors.size());
    for (int i = 0; i < tensors.size(); i++) {
      TensorSharding t = tensors.get(i);
      named.add(new TensorSharding(HloLayerPricer.weightName(layer.graph().get(tensorIds.get(i))),
          t.shape(), t.sharding(), t.words()));
    }
    return new HloLayerCost(forwardSeconds, backwardSeconds, tensorCommSeconds, gradSyncSeconds,
        optimizerSeconds, weightBytes, gradientBytes, stateBytes, savedActivationBytes,
        temporaryBytes, modelFlops, tensorCommBytes, dataCommBytes, iterationCommBytes, named,
        tensorIds);
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
   * Memory that does not grow with the microbatches in flight: weights, gradient accumulators and
   * optimizer state.
   *
   * @return bytes per GPU
   */
  public double modelStateBytes() {
    return weightBytes + gradientBytes + stateBytes;
  }
}
