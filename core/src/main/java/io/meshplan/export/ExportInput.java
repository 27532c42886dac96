package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.Require;

/**
 * What a framework configuration is written from: a model, the cluster it trains on, and a
 * Megatron-style parallel configuration that {@link ParallelConfig#check} accepts for them.
 *
 * @param model the model (dimensions, sequence length, element type)
 * @param cluster the cluster
 * @param config the parallel configuration
 */
public record ExportInput(ModelSpec model, ClusterSpec cluster, ParallelConfig config) {
  /** Validates the fields and checks the configuration against the model and the cluster. */
  public ExportInput {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.nonNull(config, "config");
    config.check(cluster.gpuCount(), model.layers(), model.heads(), model.kvHeads());
  }

  /**
   * The gradient-accumulation steps (microbatches per pipeline) of one iteration.
   *
   * @return global batch / (micro batch * data-parallel size)
   */
  public int microbatches() {
    return config.microbatches();
  }
}
