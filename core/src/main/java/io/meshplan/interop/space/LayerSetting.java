package io.meshplan.interop.space;

import io.meshplan.model.Recompute;
import io.meshplan.util.Require;

/**
 * The settings under which one layer's training graph is planned: the tensor-parallel degree of the
 * replica (the logical mesh's axis 1), the sequences per microbatch on one replica, recomputation,
 * sequence parallelism, and whether the weights take Megatron-LM's layouts (column-parallel then
 * row-parallel) instead of the layouts the ILP chooses.
 *
 * @param tensorParallel GPUs that share one replica of the layer
 * @param microBatch sequences per microbatch on one replica
 * @param recompute activation recomputation
 * @param sequenceParallel sequence parallelism in the tensor-parallel group
 * @param megatron weights fixed to Megatron-LM's layouts
 */
public record LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
    boolean sequenceParallel, boolean megatron) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the fields. */
  public LayerSetting {
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(microBatch, "micro batch");
    Require.nonNull(recompute, "recompute");
  }
}
