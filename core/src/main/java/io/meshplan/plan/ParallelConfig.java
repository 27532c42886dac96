package io.meshplan.plan;

import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * A Megatron-LM style parallel configuration (Narayanan et al., SC'21): tensor, pipeline and data
 * parallel sizes, the interleaved schedule's model chunks, batch sizes and the memory options. Every
 * plan that uses one logical mesh shape and equal stages can be written as one of these; the
 * simulator evaluates both. Stages may also be uneven as Megatron-Core states them: a first and a
 * last stage of their own size, the stages between them equal.
 *
 * @param tensorParallel tensor-parallel size t (GPUs that split each layer)
 * @param pipelineParallel pipeline-parallel size p (stages)
 * @param dataParallel data-parallel size d (replicas)
 * @param virtualStages model chunks per pipeline stage (1 = plain 1F1B; more = interleaved 1F1B)
 * @param microBatchSize sequences per microbatch on one replica
 * @param globalBatchSize sequences per iteration over all replicas
 * @param recompute activation recomputation
 * @param sequenceParallel Korthikanti et al.'s sequence parallelism in the tensor-parallel group
 * @param zeroStage the ZeRO stage over the data-parallel group (Rajbhandari et al. SC'20): 0
 *     nothing sharded, 1 optimizer state sharded (Megatron-LM's {@code
 *     --use-distributed-optimizer}), 2 gradients and optimizer state sharded (DeepSpeed stage 2,
 *     FSDP SHARD_GRAD_OP), 3 weights, gradients and optimizer state sharded (FSDP); the
 *     same values as {@link StagePlan#zeroStage}
 * @param firstStageLayers transformer layers on the first pipeline stage, 0 for the even split
 *     (Megatron-Core's {@code --decoder-first-pipeline-num-layers}, {@code
 *     TransformerConfig.num_layers_in_first_pipeline_stage})
 * @param lastStageLayers transformer layers on the last pipeline stage, 0 for the even split
 *     (Megatron-Core's {@code --decoder-last-pipeline-num-layers})
 * @param expertParallel the expert-parallel size of a mixture-of-experts model (Megatron-Core's
 *     {@code --expert-model-parallel-size}), 1 otherwise
 * @param expertTensorParallel the expert tensor-parallel size ({@code
 *     --expert-tensor-parallel-size}), 1 otherwise
 * @param contextParallel the context-parallel size ({@code --context-parallel-size}): GPUs one
 *     sequence is split over, each a share of the data-parallel group's GPUs
 * @param cpExchange how context parallelism exchanges the sequence's shares (Megatron-Core's
 *     {@code --cp-comm-type}: {@code p2p}, {@code all_gather} or {@code a2a})
 * @param split how the layers are split over the stages and chunks beyond the even split and the
 *     stated first and last stages: the embedding and loss counted as layers ({@link
 *     SplitAccounting}) or a layout chunk by chunk ({@link PipelineLayout});
 *     {@link SplitAccounting#NONE} for neither
 * @param recomputeModules the submodules selective recomputation recomputes (Megatron-Core's
 *     {@code --recompute-modules}; {@link io.meshplan.model.RecomputeModule#DEFAULT}, the
 *     attention core, unless stated)
 * @param shardGroup under ZeRO-3, the data-parallel GPUs each copy of the model state is
 *     sharded over: 0 for all of them (FSDP), or a divisor {@code g} of the data-parallel size,
 *     {@code 1 < g < d}, for hybrid sharding (HSDP: FSDP inside each group of {@code g}
 *     consecutive data-parallel ranks, {@code d / g} replicas of the sharded state across the
 *     groups; torchtitan's {@code data_parallel_shard_degree} and {@code
 *     data_parallel_replicate_degree}, Megatron-FSDP's {@code --num-distributed-optimizer-instances})
 * @param recomputeLayers under full recomputation, the layers of each model chunk recomputed, the
 *     first ones ({@link #withRecomputeLayers}), or 0 for every layer
 */
public record ParallelConfig(
    int tensorParallel,
    int pipelineParallel,
    int dataParallel,
    int virtualStages,
    int microBatchSize,
    int globalBatchSize,
    Recompute recompute,
    boolean sequenceParallel,
    int zeroStage,
    int firstStageLayers,
    int lastStageLayers,
    int expertParallel,
    int expertTensorParallel,
    int contextParallel,
    ContextExchange cpExchange,
    PipelineSplit split,
    java.util.Set<io.meshplan.model.RecomputeModule> recomputeModules,
    int shardGroup,
    int recomputeLayers) {

  /** Validates the sizes on their own; see {@link #check} for the fit to a model and cluster. */
  public ParallelConfig {
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(pipelineParallel, "pipeline-parallel size");
    Require.positive(dataParallel, "data-parallel size");
    Require.positive(virtualStages, "virtual stages");
    Require.positive(microBatchSize, "micro batch");
    Require.positive(globalBatchSize, "global batch");
    Require.nonNull(recompute, "recompute");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage must be 0, 1, 2 or 3, got "
        + zeroStage);
    Require.that(firstStageLayers >= 0, "first-stage layers must be positive, got "
        + firstStageLayers);
    Require.that(lastStageLayers >= 0, "last-stage layers must be positive, got "
        + lastStageLayers);
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.positive(contextParallel, "context-parallel size");
    Require.nonNull(cpExchange, "context exchange");
    Require.nonNull(split, "pipeline split");
    recomputeModules = java.util.Set.copyOf(recomputeModules);
    Require.that(!recomputeModules.isEmpty(), "recompute modules must not be empty");
    Require.that(recomputeLayers >= 0, () -> "recomputed layers must be positive, got "
        + recomputeLayers);
    Require.that(recomputeLayers == 0 || recompute == Recompute.FULL, () -> "a number of "
        + "recomputed layers (Megatron-LM's --recompute-method block) needs full recomputation, "
        + "got " + recompute.label());
    if (shardGroup != 0) {
      Require.that(zeroStage == 3, () -> "a shard group (hybrid sharding) shards the whole model "
          + "state: it needs ZeRO stage 3, got " + zeroStage);
      Require.that(shardGroup > 1 && shardGroup < dataParallel
          && dataParallel % shardGroup == 0, () -> "shard group " + shardGroup + " must divide "
          + "data-parallel size " + dataParallel + " and lie strictly between 1 and it");
      Require.that(contextParallel == 1 && expertParallel == 1, "hybrid sharding with context "
          + "or expert parallelism is not modelled");
    }
  }

  /**
   * Whether context parallelism all-gathers the keys and values ({@code all_gather}).
   *
   * @return true for {@link ContextExchange#ALL_GATHER}
   */
  public boolean cpAllGather() {
    return cpExchange == ContextExchange.ALL_GATHER;
  }

  /**
   * This configuration with another context exchange.
   *
   * @param e the exchange
   * @return the configuration
   */
  public ParallelConfig withCpExchange(ContextExchange e) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        e, split, recomputeModules, shardGroup, recomputeLayers);
  }

  /**
   * A configuration that shards its ZeRO state over the whole data-parallel group.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   * @param firstStageLayers layers on the first stage, 0 for the even split
   * @param lastStageLayers layers on the last stage, 0 for the even split
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpAllGather the all-gather context exchange
   * @param split the pipeline split
   * @param recomputeModules the recomputed modules
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage, int firstStageLayers, int lastStageLayers,
      int expertParallel, int expertTensorParallel, int contextParallel, boolean cpAllGather,
      PipelineSplit split, java.util.Set<io.meshplan.model.RecomputeModule> recomputeModules) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, contextParallel, cpAllGather,
        split, recomputeModules, 0);
  }

  /**
   * A configuration whose recomputation, if any, covers every layer of each chunk.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   * @param firstStageLayers layers on the first stage, 0 for the even split
   * @param lastStageLayers layers on the last stage, 0 for the even split
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpAllGather the all-gather context exchange
   * @param split the pipeline split
   * @param recomputeModules the recomputed modules
   * @param shardGroup the shard group, 0 for the whole data-parallel group
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage, int firstStageLayers, int lastStageLayers,
      int expertParallel, int expertTensorParallel, int contextParallel, boolean cpAllGather,
      PipelineSplit split, java.util.Set<io.meshplan.model.RecomputeModule> recomputeModules,
      int shardGroup) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        ContextExchange.of(cpAllGather), split, recomputeModules, shardGroup, 0);
  }

  /**
   * This configuration recomputing only the first {@code n} layers of each model chunk under
   * full recomputation, the rest keeping their activations: Megatron-LM's {@code
   * --recompute-method block --recompute-num-layers n} (Megatron-Core's {@code
   * TransformerBlock._checkpointed_forward}: "checkpoint the input activations of only a set
   * number of individual Transformer layers and skip the rest", per pipeline stage and model
   * chunk).
   *
   * @param n layers recomputed per chunk, or 0 for every layer
   * @return the configuration
   * @throws IllegalArgumentException when {@code n > 0} without full recomputation
   */
  public ParallelConfig withRecomputeLayers(int n) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        cpExchange, split, recomputeModules, shardGroup, n);
  }

  /**
   * This configuration sharding its ZeRO-3 state inside groups of {@code g} data-parallel GPUs.
   *
   * @param g the shard group, or 0 for the whole data-parallel group
   * @return the configuration
   * @throws IllegalArgumentException when {@code g} does not fit ({@link ParallelConfig})
   */
  public ParallelConfig withShardGroup(int g) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        cpExchange, split, recomputeModules, g, recomputeLayers);
  }

  /**
   * The replicas of the sharded state under hybrid sharding.
   *
   * @return {@code d / g}, 1 without a shard group
   */
  public int shardReplicas() {
    return shardGroup == 0 ? 1 : dataParallel / shardGroup;
  }

  /**
   * The data-parallel GPUs one copy of the ZeRO state is sharded over.
   *
   * @return the shard group, or the whole data-parallel size without one
   */
  public int shardWidth() {
    return shardGroup == 0 ? dataParallel : shardGroup;
  }

  /**
   * This configuration with another recomputation mode (and its modules kept).
   *
   * @param r the mode
   * @return the configuration
   */
  public ParallelConfig withRecompute(Recompute r) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, r, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, contextParallel, cpExchange, split,
        recomputeModules, shardGroup, r == Recompute.FULL ? recomputeLayers : 0);
  }

  /**
   * This configuration with other recomputed modules.
   *
   * @param modules the modules
   * @return the configuration
   */
  public ParallelConfig withRecomputeModules(
      java.util.Set<io.meshplan.model.RecomputeModule> modules) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        cpExchange, split, modules, shardGroup, recomputeLayers);
  }

  /**
   * A configuration whose pipeline split counts only transformer layers.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   * @param firstStageLayers layers on the first stage, 0 for the even split
   * @param lastStageLayers layers on the last stage, 0 for the even split
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpAllGather the {@code all_gather} form of CP
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage, int firstStageLayers, int lastStageLayers,
      int expertParallel, int expertTensorParallel, int contextParallel, boolean cpAllGather) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, contextParallel, cpAllGather,
        SplitAccounting.NONE, io.meshplan.model.RecomputeModule.DEFAULT);
  }

  /**
   * This configuration with another pipeline split.
   *
   * @param split the split
   * @return the configuration
   */
  public ParallelConfig withSplit(PipelineSplit split) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, contextParallel,
        cpExchange, split, recomputeModules, shardGroup, recomputeLayers);
  }

  /**
   * A configuration without context parallelism.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   * @param firstStageLayers layers on the first stage, 0 for the even split
   * @param lastStageLayers layers on the last stage, 0 for the even split
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage, int firstStageLayers, int lastStageLayers,
      int expertParallel, int expertTensorParallel) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, 1, false);
  }

  /**
   * This configuration with each sequence split over {@code cp} GPUs by an exchange.
   *
   * @param cp the context-parallel size
   * @param e the exchange; without a split, the ring (the default)
   * @return the configuration
   */
  public ParallelConfig withContext(int cp, ContextExchange e) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, expertParallel, expertTensorParallel, cp,
        cp > 1 ? e : ContextExchange.P2P, split, recomputeModules, shardGroup, recomputeLayers);
  }

  /**
   * Whether each tensor rank's query heads and key/value heads (at least one) split over the
   * {@code CP} GPUs of its context group, as a head-parallel (Ulysses) exchange needs.
   *
   * @param tensorParallel TP
   * @param contextParallel CP
   * @param heads query heads
   * @param kvHeads key and value heads
   * @return true when CP divides both per-rank counts
   */
  public static boolean headsSplit(int tensorParallel, int contextParallel, int heads,
      int kvHeads) {
    return heads / tensorParallel % contextParallel == 0
        && Math.max(1, kvHeads / tensorParallel) % contextParallel == 0;
  }

  /**
   * Refuses a head-parallel (Ulysses) context exchange whose heads do not split: each GPU of a
   * tensor rank's context group takes {@code 1/CP} of the rank's query heads and of its key and
   * value heads, so CP must divide both (Transformer Engine's {@code a2a} exchange asserts it).
   *
   * @param e the exchange
   * @param tensorParallel TP
   * @param contextParallel CP
   * @param heads query heads
   * @param kvHeads key and value heads
   * @throws InputException when they do not split
   */
  public static void checkHeadSplit(ContextExchange e, int tensorParallel, int contextParallel,
      int heads, int kvHeads) {
    if (e != ContextExchange.ALL_TO_ALL || contextParallel == 1) {
      return;
    }
    if (!headsSplit(tensorParallel, contextParallel, heads, kvHeads)) {
      int q = heads / tensorParallel;
      int kv = Math.max(1, kvHeads / tensorParallel);
      throw new InputException("--cp-comm-type a2a splits each tensor rank's heads over the "
          + contextParallel + " GPUs of its context group: " + q + " query and " + kv
          + " key/value heads per rank do not split " + contextParallel + " ways; use p2p or "
          + "all_gather, or a context-parallel size that divides them");
    }
  }

  /**
   * Refuses a context-parallel size the sequence cannot take: Megatron-Core splits each sequence
   * into {@code 2 x CP} chunks for causal load balance, so {@code 2 x CP} must divide it; and the
   * ring runs fused attention.
   *
   * @param seq tokens per sequence
   * @param flash whether the attention core is fused
   * @throws InputException when it cannot
   */
  public void checkContext(int seq, boolean flash) {
    checkContext(contextParallel, seq, flash);
  }

  /**
   * The rules of {@link #checkContext(int, boolean)} for one stage's context-parallel size, which
   * a saved plan's stages are checked by too.
   *
   * @param contextParallel CP
   * @param seq tokens per sequence
   * @param flash whether the attention core is fused
   * @throws InputException when it cannot
   */
  public static void checkContext(int contextParallel, int seq, boolean flash) {
    if (contextParallel == 1) {
      return;
    }
    if (seq % (2L * contextParallel) != 0) {
      throw new InputException("context-parallel size " + contextParallel + " needs the sequence"
          + " of " + seq + " tokens to split into 2 x " + contextParallel + " = "
          + 2 * contextParallel + " equal chunks");
    }
    if (!flash) {
      throw new InputException("context parallelism runs fused attention; use --attention "
          + "flash");
    }
  }

  /**
   * A configuration without expert parallelism.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   * @param firstStageLayers layers on the first stage, 0 for the even split
   * @param lastStageLayers layers on the last stage, 0 for the even split
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage, int firstStageLayers, int lastStageLayers) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, firstStageLayers,
        lastStageLayers, 1, 1);
  }

  /**
   * This configuration with the experts of a mixture-of-experts model spread another way.
   *
   * @param ep expert-parallel size
   * @param etp expert tensor-parallel size
   * @return the configuration
   */
  public ParallelConfig withExperts(int ep, int etp) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage,
        firstStageLayers, lastStageLayers, ep, etp, contextParallel, cpExchange,
        split, recomputeModules, shardGroup, recomputeLayers);
  }

  /**
   * Refuses expert layouts the model cannot take: experts on a dense model, EP not dividing the
   * experts, {@code EP x ETP} not dividing a pipeline stage's {@code TP x CP x DP} GPUs
   * (Megatron-Core folds the expert groups into them), ETP not dividing the expert size, and tensor parallelism
   * without sequence parallelism on a mixture-of-experts model (Megatron-LM requires it with
   * expert parallelism, and meshplan's token dispatch splits the tokens by sequence).
   *
   * @param moe the model's mixture-of-experts layer ({@code DENSE} for a dense model)
   * @throws InputException when the layout does not fit
   */
  public void checkExperts(io.meshplan.model.MoeShape moe) {
    checkExperts(moe, expertParallel, expertTensorParallel, tensorParallel, dataParallel,
        contextParallel, sequenceParallel);
  }

  /**
   * The rules of {@link #checkExperts(io.meshplan.model.MoeShape)} for one stage's sizes, which a
   * saved plan's stages are checked by too.
   *
   * @param moe the model's mixture-of-experts layer ({@code DENSE} for a dense model)
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param tensorParallel TP
   * @param dataParallel DP
   * @param contextParallel CP
   * @param sequenceParallel whether the stage uses sequence parallelism
   * @throws InputException when the layout does not fit
   */
  public static void checkExperts(io.meshplan.model.MoeShape moe, int expertParallel,
      int expertTensorParallel, int tensorParallel, int dataParallel, int contextParallel,
      boolean sequenceParallel) {
    if (!moe.routed()) {
      if (expertParallel > 1 || expertTensorParallel > 1) {
        throw new InputException("expert parallelism needs a mixture-of-experts model; this "
            + "model is dense");
      }
      return;
    }
    if (moe.experts() % expertParallel != 0) {
      throw new InputException("expert-parallel size " + expertParallel + " does not divide the "
          + "model's " + moe.experts() + " experts");
    }
    long stage = (long) tensorParallel * dataParallel * contextParallel;
    if (stage % ((long) expertParallel * expertTensorParallel) != 0) {
      throw new InputException("expert-parallel size " + expertParallel + " x expert "
          + "tensor-parallel size " + expertTensorParallel + " does not divide the " + stage
          + " GPUs of a pipeline stage (tensor-parallel size x data-parallel size"
          + (contextParallel > 1 ? " x context-parallel size" : "") + ")");
    }
    if (moe.expertFfn() % expertTensorParallel != 0) {
      throw new InputException("expert tensor-parallel size " + expertTensorParallel
          + " does not divide the experts' inner size " + moe.expertFfn());
    }
    if (tensorParallel > 1 && !sequenceParallel) {
      throw new InputException("a mixture-of-experts model with tensor-parallel size "
          + tensorParallel + " needs sequence parallelism, as Megatron-LM requires of its experts");
    }
  }

  /**
   * A configuration whose stages hold equal numbers of layers.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param zeroStage the ZeRO stage
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, int zeroStage) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, zeroStage, 0, 0);
  }

  /**
   * A configuration whose only sharding is Megatron-LM's distributed optimizer, or none.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size
   * @param virtualStages model chunks per pipeline stage
   * @param microBatchSize sequences per microbatch on one replica
   * @param globalBatchSize sequences per iteration
   * @param recompute activation recomputation
   * @param sequenceParallel sequence parallelism in the tensor-parallel group
   * @param distributedOptimizer ZeRO stage 1 when true, else 0
   */
  public ParallelConfig(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatchSize, int globalBatchSize, Recompute recompute,
      boolean sequenceParallel, boolean distributedOptimizer) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatchSize,
        globalBatchSize, recompute, sequenceParallel, distributedOptimizer ? 1 : 0);
  }

  /**
   * Whether the optimizer state, and only it, is sharded: Megatron-LM's distributed optimizer.
   *
   * @return ZeRO stage 1
   */
  public boolean distributedOptimizer() {
    return zeroStage == 1;
  }

  /**
   * The same configuration with another ZeRO stage.
   *
   * @param stage 0, 1, 2 or 3
   * @return the configuration
   */
  public ParallelConfig withZeroStage(int stage) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, stage, firstStageLayers,
        lastStageLayers, expertParallel, expertTensorParallel, contextParallel, cpExchange,
        split, recomputeModules, stage == 3 ? shardGroup : 0, recomputeLayers);
  }

  /**
   * The same configuration with Megatron-Core's uneven first and last stages.
   *
   * @param first layers on the first pipeline stage, 0 for unset
   * @param last layers on the last pipeline stage, 0 for unset
   * @return the configuration
   */
  public ParallelConfig withStageLayers(int first, int last) {
    return new ParallelConfig(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatchSize, globalBatchSize, recompute, sequenceParallel, zeroStage, first, last,
        expertParallel, expertTensorParallel, contextParallel, cpExchange, split,
        recomputeModules, shardGroup, recomputeLayers);
  }

  /**
   * Checks what of this configuration depends on the model beyond its sizes ({@link #check}): a
   * layout's multi-token prediction modules against the model's, and the recomputed modules by
   * Megatron-Core's rules ({@link io.meshplan.model.RecomputeModule#check}), the recomputed
   * layers against the largest model chunk's, a MaxText
   * policy's model ({@link io.meshplan.model.MaxTextRemat#check}), and trained FP8 weights
   * ({@link io.meshplan.model.Lora#fp8Weights}) as Megatron-LM's {@code validate_args} takes them
   * ({@code megatron/training/arguments.py} at d98e8a6, lines 1095-1097: "--fp8-param-gather only
   * supported with distributed optimizer, torch fsdp2, megatron fsdp, or inference mode").
   *
   * @param model the model
   * @throws InputException naming the rule broken
   */
  public void checkModel(io.meshplan.model.ModelSpec model) {
    if (split instanceof PipelineLayout l) {
      l.checkMtp(model.arch().mtpDepth());
    }
    io.meshplan.model.RecomputeModule.check(recompute, recomputeModules, model);
    io.meshplan.model.MaxTextRemat.check(recompute, model);
    if (recomputeLayers > 0) {
      int most = java.util.Arrays.stream(chunkLayers(model.layers())).max().orElse(0);
      if (recomputeLayers > most) {
        // Megatron-LM recomputes at most a chunk's layers; more would be priced (and written) as
        // a count no chunk has.
        throw new InputException("--recompute-num-layers " + recomputeLayers + " is more than the"
            + " " + most + " layers of a model chunk (the first N layers of each chunk are"
            + " recomputed); give at most " + most);
      }
    }
    if (model.lora().fp8Weights() && zeroStage == 0) {
      throw new InputException("--fp8-param-gather in full training needs a sharded optimizer "
          + "(--distributed-optimizer or --zero-stage 1-3), as in Megatron-LM");
    }
    if (model.lora().fp8Weights()
        && model.fp8Scaling() == io.meshplan.model.Fp8Scaling.NVFP4) {
      throw new InputException("--fp8-param-gather under --fp8-recipe nvfp4 is not modelled: "
          + "Megatron-LM gathers NVFP4 weights with --fp4-param-gather");
    }
  }

  /**
   * Whether the stages' layer counts are not the plain even split: the first or the last stage's
   * count is stated, or the split counts the embedding or the loss.
   *
   * @return true when any is set
   */
  public boolean unevenStages() {
    return firstStageLayers > 0 || lastStageLayers > 0 || split.any();
  }

  /**
   * Layers per model chunk in layer order, as Megatron-Core builds them ({@code
   * get_num_layers_to_build} in {@code megatron/core/transformer/transformer_block.py}): every
   * pipeline stage without a stated count holds (layers - stated) / (stages without one), each of
   * a stage's {@code virtualStages} chunks a 1/{@code virtualStages} share, and chunk {@code k}
   * runs on stage {@code k mod pipelineParallel}; or as {@link PipelineSplit#chunkLayers} when
   * the split is another.
   *
   * @param layers the model's transformer layers, already accepted by {@link #check}
   * @return blocks per chunk, {@code pipelineParallel * virtualStages} of them
   */
  public int[] chunkLayers(int layers) {
    if (split.any()) {
      return split.chunkLayers(layers, pipelineParallel, virtualStages);
    }
    int rest = layers - firstStageLayers - lastStageLayers;
    int restStages = pipelineParallel - (firstStageLayers > 0 ? 1 : 0)
        - (lastStageLayers > 0 ? 1 : 0);
    int middle = restStages == 0 ? 0 : rest / restStages;
    int[] out = new int[pipelineParallel * virtualStages];
    for (int k = 0; k < out.length; k++) {
      int stage = k % pipelineParallel;
      int perStage = stage == 0 && firstStageLayers > 0 ? firstStageLayers
          : stage == pipelineParallel - 1 && lastStageLayers > 0 ? lastStageLayers : middle;
      out[k] = perStage / virtualStages;
    }
    return out;
  }

  /**
   * The GPUs this configuration occupies.
   *
   * @return t * p * d
   * @throws InputException when the product overflows an int
   */
  public int gpus() {
    try {
      return Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(tensorParallel,
          pipelineParallel), dataParallel), contextParallel);
    } catch (ArithmeticException e) {
      throw new InputException(sizes() + " is too large");
    }
  }

  /** The sizes whose product is the GPU count, in words. */
  private String sizes() {
    return "tensor-parallel size " + tensorParallel + " x pipeline-parallel size "
        + pipelineParallel + " x data-parallel size " + dataParallel
        + (contextParallel > 1 ? " x context-parallel size " + contextParallel : "");
  }

  /**
   * The microbatches each pipeline runs per iteration.
   *
   * @return global batch / (micro batch * d)
   */
  public int microbatches() {
    return globalBatchSize / (microBatchSize * dataParallel);
  }

  /**
   * Checks the configuration against a model and a cluster the way Megatron-LM does at start-up.
   *
   * @param gpus the cluster's GPU count
   * @param layers the model's transformer layers
   * @param heads the model's attention heads
   * @param kvHeads the model's key/value heads
   * @throws InputException naming the flag that disagrees
   */
  public void check(int gpus, int layers, int heads, int kvHeads) {
    if (gpus() != gpus) {
      throw new InputException(sizes() + " = " + gpus() + " GPUs, but the cluster has " + gpus
          + "; make the product equal the cluster's GPU count");
    }
    long perStep = (long) microBatchSize * dataParallel;
    if (globalBatchSize % perStep != 0) {
      throw new InputException("global batch " + globalBatchSize + " is not a multiple of "
          + "micro batch " + microBatchSize + " x data-parallel size " + dataParallel + " = "
          + perStep);
    }
    split.check(layers, pipelineParallel, virtualStages,
        firstStageLayers > 0 || lastStageLayers > 0);
    if (firstStageLayers > 0 || lastStageLayers > 0) {
      checkUnevenStages(layers);
    } else if (!split.any() && layers % ((long) pipelineParallel * virtualStages) != 0) {
      throw new InputException("the model's " + layers + " layers are not divisible by "
          + "pipeline-parallel size " + pipelineParallel
          + (virtualStages > 1 ? " x virtual stages " + virtualStages : "")
          + "; Megatron-LM gives every " + (virtualStages > 1 ? "model chunk" : "stage")
          + " the same number of layers unless first-stage layers or last-stage layers are given");
    }
    if (virtualStages > 1 && pipelineParallel < 2) {
      throw new InputException("virtual stages " + virtualStages
          + " needs pipeline-parallel size of at least 2");
    }
    if (virtualStages > 1 && microbatches() % pipelineParallel != 0) {
      throw new InputException("the interleaved schedule (virtual stages " + virtualStages
          + ") needs the " + microbatches() + " microbatches per pipeline to be a multiple of "
          + "pipeline-parallel size "
          + pipelineParallel);
    }
    if (heads % tensorParallel != 0 || kvHeads % tensorParallel != 0 && tensorParallel
        % kvHeads != 0) {
      throw new InputException("tensor-parallel size " + tensorParallel
          + " does not divide the model's " + heads
          + " attention heads" + (kvHeads != heads ? " and " + kvHeads + " key/value heads" : ""));
    }
    if (sequenceParallel && tensorParallel == 1) {
      throw new InputException("sequence parallelism needs tensor-parallel size of at "
          + "least 2");
    }
  }

  /**
   * The overlap flags that apply to this configuration, as Megatron-LM spells them and meshplan
   * takes them: {@code --overlap-grad-reduce}; {@code --overlap-param-gather} with it under the
   * distributed optimizer; {@code --tp-comm-overlap} with sequence parallelism; {@code
   * --grad-reduce-in-bf16}; {@code --overlap-moe-expert-parallel-comm}; {@code
   * --no-gradient-accumulation-fusion} when the fusion is off
   * (see {@link #checkOverlaps}).
   *
   * @param o the overlaps
   * @return the flags, in that order
   */
  public java.util.List<String> megatronOverlapFlags(Overlaps o) {
    java.util.List<String> flags = new java.util.ArrayList<>();
    if (o.gradReduce()) {
      flags.add("--overlap-grad-reduce");
      if (o.paramGather() && zeroStage == 1) {
        flags.add("--overlap-param-gather");
      }
    }
    if (o.tensorComm() && sequenceParallel) {
      flags.add("--tp-comm-overlap");
    }
    if (o.bf16GradReduce()) {
      flags.add("--grad-reduce-in-bf16");
    }
    if (o.moeComm()) {
      flags.add("--overlap-moe-expert-parallel-comm");
    }

    if (!o.gradAccumFusion()) {
      flags.add("--no-gradient-accumulation-fusion");
    }
    return flags;
  }

  /**
   * Checks overlaps against this configuration as Megatron-LM does at start-up
   * ({@code validate_args}): the tensor-parallel overlap needs sequence parallelism, the
   * parameter gather's overlap the distributed optimizer.
   *
   * @param o the overlaps
   * @throws InputException naming the flag that is missing
   */
  public void checkOverlaps(Overlaps o) {
    if (o.tensorComm() && !sequenceParallel) {
      throw new InputException("--tp-comm-overlap needs --sequence-parallel, as in Megatron-LM");
    }
    if (o.paramGather() && zeroStage != 1) {
      throw new InputException("--overlap-param-gather needs the distributed optimizer "
          + "(--distributed-optimizer or --zero-stage 1), as in Megatron-LM");
    }
    // Megatron-Core's TransformerConfig.__post_init__ (transformer_config.py at d98e8a6, lines
    // 3002-3033): expert parallelism, virtual stages with pipeline parallelism, no full
    // recomputation.
    if (o.moeComm() && expertParallel < 2) {
      throw new InputException("--overlap-moe-expert-parallel-comm needs expert parallelism "
          + "(--ep above 1), as in Megatron-LM");
    }
    if (o.moeComm() && pipelineParallel > 1 && virtualStages < 2) {
      throw new InputException("--overlap-moe-expert-parallel-comm with --pp above 1 needs "
          + "--vpp, as in Megatron-LM");
    }
    if (o.moeComm() && recompute == Recompute.FULL) {
      throw new InputException("--overlap-moe-expert-parallel-comm does not run with --recompute"
          + " full, as in Megatron-LM");
    }
  }

  /**
   * Megatron-Core's rules for uneven first and last stages ({@code TransformerConfig.__post_init__}
   * in {@code megatron/core/transformer/transformer_config.py}, "Uneven PP"): each stated count is
   * positive and, with virtual stages, a multiple of them; the layers left over go to the stages
   * left over, which must exist exactly when layers are left, in equal shares that are a multiple
   * of the virtual stages. Megatron-Core does not catch a negative remainder (Python's {@code %}
   * of a negative count), nor two stated counts on one stage; both are refused here.
   */
  private void checkUnevenStages(int layers) {
    int statedStages = (firstStageLayers > 0 ? 1 : 0) + (lastStageLayers > 0 ? 1 : 0);
    if (pipelineParallel < 2) {
      throw new InputException(stated() + " need pipeline-parallel size of at least 2, got "
          + pipelineParallel);
    }
    long statedLayers = (long) firstStageLayers + lastStageLayers;
    if (statedLayers > layers) {
      throw new InputException(stated() + " exceed the model's " + layers + " layers");
    }
    for (int[] n : new int[][] {{firstStageLayers, 0}, {lastStageLayers, 1}}) {
      if (n[0] > 0 && n[0] % virtualStages != 0) {
        throw new InputException((n[1] == 0 ? "first" : "last") + "-stage layers " + n[0]
            + " are not divisible by virtual stages " + virtualStages
            + "; Megatron-LM splits every stage into that many equal chunks");
      }
    }
    long rest = layers - statedLayers;
    int restStages = pipelineParallel - statedStages;
    if (restStages == 0 && rest != 0) {
      throw new InputException(stated() + " must add up to the model's " + layers + " layers when "
          + "pipeline-parallel size is 2");
    }
    if (restStages > 0 && rest == 0) {
      throw new InputException(stated() + " leave no layers for the other " + restStages
          + " pipeline stages; every stage needs at least one");
    }
    if (restStages > 0 && rest % ((long) restStages * virtualStages) != 0) {
      throw new InputException("the " + rest + " layers left after " + stated()
          + " are not divisible by the other " + restStages + " pipeline stages"
          + (virtualStages > 1 ? " x virtual stages " + virtualStages : ""));
    }
  }

  /** The stated counts in words, e.g. "first-stage layers 5 + last-stage layers 5". */
  private String stated() {
    String first = "first-stage layers " + firstStageLayers;
    String last = "last-stage layers " + lastStageLayers;
    return firstStageLayers > 0 && lastStageLayers > 0 ? first + " + " + last
        : firstStageLayers > 0 ? first : last;
  }
}
