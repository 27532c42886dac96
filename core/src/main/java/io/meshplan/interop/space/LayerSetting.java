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
 * @param expertParallel the expert-parallel size EP of a mixture-of-experts layer (1 for dense)
 * @param expertTensorParallel the expert tensor-parallel size ETP (1 for dense)
 * @param contextParallel the context-parallel size CP: the GPUs one sequence is split over
 * @param cpExchange how context parallelism exchanges the sequence's shares ({@link
 *     io.meshplan.plan.ContextExchange}): a ring of the keys and values under the attention
 *     ({@code p2p}, the default), their all-gather before it ({@code all_gather}), or the
 *     head-parallel all-to-alls of DeepSpeed-Ulysses ({@code a2a})
 * @param recomputeModules the submodules selective recomputation recomputes (Megatron-Core's
 *     {@code --recompute-modules}; {@link io.meshplan.model.RecomputeModule#DEFAULT} the attention
 *     core)
 */
public record LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
    boolean sequenceParallel, boolean megatron, int expertParallel, int expertTensorParallel,
    int contextParallel, io.meshplan.plan.ContextExchange cpExchange,
    java.util.Set<io.meshplan.model.RecomputeModule> recomputeModules)
    implements java.io.Serializable {
  private static final long serialVersionUID = 5L;

  /** Validates the fields. */
  public LayerSetting {
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(microBatch, "micro batch");
    Require.nonNull(recompute, "recompute");
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.positive(contextParallel, "context-parallel size");
    Require.nonNull(cpExchange, "context exchange");
    recomputeModules = java.util.Set.copyOf(recomputeModules);
  }

  /**
   * A setting whose selective recomputation recomputes the attention core.
   *
   * @param tensorParallel GPUs that share one replica of the layer
   * @param microBatch sequences per microbatch on one replica
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param megatron weights fixed to Megatron-LM's layouts
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpAllGather the all-gather form of CP
   */
  public LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
      boolean sequenceParallel, boolean megatron, int expertParallel, int expertTensorParallel,
      int contextParallel, boolean cpAllGather) {
    this(tensorParallel, microBatch, recompute, sequenceParallel, megatron, expertParallel,
        expertTensorParallel, contextParallel, io.meshplan.plan.ContextExchange.of(cpAllGather),
        io.meshplan.model.RecomputeModule.DEFAULT);
  }

  /**
   * A setting whose selective recomputation recomputes the attention core, with a context
   * exchange.
   *
   * @param tensorParallel GPUs that share one replica of the layer
   * @param microBatch sequences per microbatch on one replica
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param megatron weights fixed to Megatron-LM's layouts
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpExchange the context exchange
   */
  public LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
      boolean sequenceParallel, boolean megatron, int expertParallel, int expertTensorParallel,
      int contextParallel, io.meshplan.plan.ContextExchange cpExchange) {
    this(tensorParallel, microBatch, recompute, sequenceParallel, megatron, expertParallel,
        expertTensorParallel, contextParallel, cpExchange,
        io.meshplan.model.RecomputeModule.DEFAULT);
  }

  /**
   * Whether context parallelism all-gathers the keys and values ({@code all_gather}).
   *
   * @return true for {@link io.meshplan.plan.ContextExchange#ALL_GATHER}
   */
  public boolean cpAllGather() {
    return cpExchange == io.meshplan.plan.ContextExchange.ALL_GATHER;
  }

  /**
   * This setting with other recomputed modules.
   *
   * @param modules the modules
   * @return the setting
   */
  public LayerSetting withRecomputeModules(java.util.Set<io.meshplan.model.RecomputeModule>
      modules) {
    return new LayerSetting(tensorParallel, microBatch, recompute, sequenceParallel, megatron,
        expertParallel, expertTensorParallel, contextParallel, cpExchange, modules);
  }

  /**
   * Whether selective recomputation recomputes a module.
   *
   * @param m the module
   * @return true under selective recomputation with {@code m} among the modules
   */
  public boolean recomputes(io.meshplan.model.RecomputeModule m) {
    return io.meshplan.model.RecomputeModule.recomputes(recompute, recomputeModules, m);
  }

  /**
   * A setting without context parallelism.
   *
   * @param tensorParallel GPUs that share one replica of the layer
   * @param microBatch sequences per microbatch on one replica
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param megatron weights fixed to Megatron-LM's layouts
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   */
  public LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
      boolean sequenceParallel, boolean megatron, int expertParallel, int expertTensorParallel) {
    this(tensorParallel, microBatch, recompute, sequenceParallel, megatron, expertParallel,
        expertTensorParallel, 1, io.meshplan.plan.ContextExchange.P2P);
  }

  /**
   * This setting with each sequence split over {@code cp} GPUs by an exchange.
   *
   * @param cp the context-parallel size
   * @param e the exchange; without a split, the ring (the default)
   * @return the setting
   */
  public LayerSetting withContext(int cp, io.meshplan.plan.ContextExchange e) {
    return new LayerSetting(tensorParallel, microBatch, recompute, sequenceParallel, megatron,
        expertParallel, expertTensorParallel, cp,
        cp > 1 ? e : io.meshplan.plan.ContextExchange.P2P, recomputeModules);
  }

  /**
   * A setting without expert parallelism.
   *
   * @param tensorParallel GPUs that share one replica of the layer
   * @param microBatch sequences per microbatch on one replica
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param megatron weights fixed to Megatron-LM's layouts
   */
  public LayerSetting(int tensorParallel, int microBatch, Recompute recompute,
      boolean sequenceParallel, boolean megatron) {
    this(tensorParallel, microBatch, recompute, sequenceParallel, megatron, 1, 1);
  }

  /**
   * This setting with another recomputation mode.
   *
   * @param r the mode
   * @return the setting
   */
  public LayerSetting withRecompute(Recompute r) {
    return new LayerSetting(tensorParallel, microBatch, r, sequenceParallel, megatron,
        expertParallel, expertTensorParallel, contextParallel, cpExchange, recomputeModules);
  }

  /**
   * The experts' layout on the replica.
   *
   * @return EP, ETP and the tensor-parallel size
   */
  public io.meshplan.model.ExpertLayout experts() {
    return new io.meshplan.model.ExpertLayout(expertParallel, expertTensorParallel,
        tensorParallel);
  }
}
