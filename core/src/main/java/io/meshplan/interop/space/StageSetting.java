package io.meshplan.interop.space;

import io.meshplan.util.Require;

/**
 * One way to run a layer range on a submesh: the logical mesh (data-parallel by tensor-parallel,
 * the batch on axis 0) and the ZeRO stage; the layer setting says how each replica runs.
 *
 * @param dataParallel the logical mesh's axis 0
 * @param tensorParallel the logical mesh's axis 1
 * @param zeroStage 0, 1, 2 or 3 (see {@link io.meshplan.interop.cost.StageCostBuilder})
 * @param layer the per-replica setting
 */
public record StageSetting(int dataParallel, int tensorParallel, int zeroStage,
    LayerSetting layer) {
  /** Validates the fields. */
  public StageSetting {
    Require.positive(dataParallel, "data-parallel size");
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage 0, 1, 2 or 3");
    Require.nonNull(layer, "layer setting");
    Require.that(layer.tensorParallel() == tensorParallel, () -> "layer setting for tp "
        + layer.tensorParallel() + " on a stage of tp " + tensorParallel);
  }
}
