package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The tensors of one weight in a training graph, by instruction id ({@code -1} when the graph has
 * none: no optimizer, or fp32 compute without master copies; a frozen weight, which LoRA does not
 * train ({@link Lora}), has only its weight). Each of weight, master,
 * Adam moments and accumulator is a separate parameter, so the intra-op ILP can shard each over the
 * data-parallel mesh axis (ZeRO, Rajbhandari et al. SC'20) independently of the others.
 *
 * @param name e.g. {@code layer_3/attention/wq}
 * @param layer the layer the weight belongs to
 * @param weight the weight in the compute type (a {@link ParamRole#WEIGHT} parameter)
 * @param gradient its gradient in the compute type (the sum of the backward contributions)
 * @param gradientFp32 the gradient cast to fp32, on its own layout decision (see {@link
 *     TrainingGraphBuilder})
 * @param accumulator the fp32 gradient accumulator parameter
 * @param newAccumulator accumulator plus gradient; aliased to the accumulator
 * @param master the fp32 master weight parameter
 * @param adamM Adam's first moment parameter
 * @param adamV Adam's second moment parameter
 * @param newMaster the updated master; aliased to the master
 * @param newAdamM the updated first moment; aliased to adamM
 * @param newAdamV the updated second moment; aliased to adamV
 * @param newWeight the updated weight in the compute type; aliased to the weight
 */
public record WeightTensors(
    String name, LayerRef layer, int weight, int gradient, int gradientFp32, int accumulator,
    int newAccumulator, int master, int adamM, int adamV, int newMaster, int newAdamM,
    int newAdamV, int newWeight) {
  /** Validates the fields. */
  public WeightTensors {
    Require.nonNull(name, "name");
    Require.nonNull(layer, "layer");
    Require.that(weight >= 0, "a weight needs its parameter id");
  }

  /**
   * Whether the weight is trained: it has a gradient.
   *
   * @return false for a frozen weight
   */
  public boolean trained() {
    return gradient >= 0;
  }
}
