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
 * @param shardGroup under ZeRO-3, the replicas each copy of the state is sharded over: 0 for all
 *     of them, else a divisor of {@code dataParallel} (hybrid sharding)
 */
public record StageSetting(int dataParallel, int tensorParallel, int zeroStage,
    LayerSetting layer, int shardGroup) {
  /** Validates the fields. */
  public StageSetting {
    Require.positive(dataParallel, "data-parallel size");
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage 0, 1, 2 or 3");
    Require.nonNull(layer, "layer setting");
    Require.that(layer.tensorParallel() == tensorParallel, () -> "layer setting for tp "
        + layer.tensorParallel() + " on a stage of tp " + tensorParallel);
    Require.that(shardGroup == 0 || zeroStage == 3 && dataParallel % shardGroup == 0,
        "a shard group needs ZeRO-3 and divides the data-parallel size");
  }

  /**
   * A setting whose ZeRO state is sharded over all the replicas.
   *
   * @param dataParallel the logical mesh's axis 0
   * @param tensorParallel the logical mesh's axis 1
   * @param zeroStage 0, 1, 2 or 3
   * @param layer the per-replica setting
   */
  public StageSetting(int dataParallel, int tensorParallel, int zeroStage, LayerSetting layer) {
    this(dataParallel, tensorParallel, zeroStage, layer, 0);
  }
}
