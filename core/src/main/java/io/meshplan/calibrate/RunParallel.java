package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * How a training run was split, in Megatron-LM's terms.
 *
 * @param tensorParallel tensor-parallel size
 * @param pipelineParallel pipeline-parallel size
 * @param dataParallel data-parallel size; 0 when the log leaves it to the world size (torchtitan's
 *     {@code data_parallel_shard_degree = -1}), resolved against the cluster
 * @param virtualStages model chunks per pipeline stage (1 without interleaving)
 * @param microBatch sequences per microbatch on one replica
 * @param localBatch sequences per iteration on one data-parallel replica; the global batch is
 *     {@code localBatch * dataParallel}
 * @param recompute {@code none}, {@code selective}, {@code full} or {@code op}
 * @param sequenceParallel Megatron-LM's sequence parallelism
 * @param zeroStage 0, 1 (distributed optimizer) or 3 (FSDP)
 * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
 * @param overlapParamGather Megatron-LM's {@code overlap_param_gather}
 * @param tpCommOverlap Megatron-LM's {@code tp_comm_overlap}
 * @param gradAccumFusion gradient-accumulation fusion; Megatron-LM's {@code
 *     gradient_accumulation_fusion}, on unless the log says False
 * @param split the pipeline split beyond the even one ({@link RunSplit#NONE} for none)
 * @param lossFusion whether the cross-entropy loss ran as fused kernels over the logits in their
 *     own type (torchtitan's loss compiled: {@code [compile] enable} with {@code "loss"} among
 *     its {@code components}); Megatron-LM's runs convert the logits to fp32
 * @param bf16GradReduce whether a bf16 run reduced its gradients in bf16 (Megatron-LM's {@code
 *     grad_reduce_in_bf16}, or {@code accumulate_allreduce_grads_in_fp32} False)
 * @param contextParallel the GPUs each sequence was split over (Megatron-LM's {@code
 *     context_parallel_size}, torchtitan's {@code context_parallel_degree}); the data-parallel
 *     size does not count them, and the world is {@code tp x pp x cp x dp}
 * @param cpCommType how context parallelism exchanged the sequence's shares: {@code p2p} (a
 *     ring of the keys and values), {@code all_gather} (Megatron-LM's {@code cp_comm_type
 *     all_gather}, torchtitan's {@code allgather} rotation) or {@code a2a} (Megatron-LM's
 *     head-parallel all-to-alls, DeepSpeed-Ulysses)
 * @param recomputeModules what selective recomputation recomputed, by Megatron-LM's names
 *     ({@code recompute_modules}); empty for its default, the attention core
 * @param expertParallel the GPUs a mixture-of-experts layer's experts were spread over ({@code
 *     expert_model_parallel_size}); 1 for a dense run
 * @param expertTensorParallel the GPUs each expert was split over ({@code
 *     expert_tensor_parallel_size})
 * @param moeOverlap whether the expert all-to-alls ran under another microbatch's compute
 *     ({@code overlap_moe_expert_parallel_comm})
 * @param dispatcher the token dispatcher: {@code alltoall}, or {@code deepep} or {@code hybridep}
 *     for Megatron-Core's {@code flex} dispatcher with that {@code moe_flex_dispatcher_backend}
 * @param shardReplicas under ZeRO-3, the replicas of the sharded state: 1 for FSDP over the
 *     whole data-parallel group, {@code r > 1} for hybrid sharding (HSDP), the shard group
 *     being the data-parallel size over {@code r}
 * @param recomputeLayers under full recomputation, the layers of each model chunk recomputed
 *     ({@code recompute_method block} with {@code recompute_num_layers} below a chunk's layers),
 *     or 0 for every layer
 */
public record RunParallel(int tensorParallel, int pipelineParallel, int dataParallel,
    int virtualStages, int microBatch, int localBatch, String recompute, boolean sequenceParallel,
    int zeroStage, boolean overlapGradReduce, boolean overlapParamGather, boolean tpCommOverlap,
    boolean gradAccumFusion, RunSplit split, boolean lossFusion, boolean bf16GradReduce,
    int contextParallel, String cpCommType, java.util.List<String> recomputeModules,
    int expertParallel, int expertTensorParallel, boolean moeOverlap, String dispatcher,
    int shardReplicas, int recomputeLayers) {
  /** The context exchanges a run may state, by Megatron-LM's {@code cp_comm_type} words. */
  public static final java.util.List<String> CP_COMM_TYPES = java.util.List.of("p2p",
      "all_gather", "a2a");
  /** The dispatchers a run may state: Megatron-Core's alltoall, or flex's deepep or hybridep. */
  public static final java.util.List<String> DISPATCHERS = java.util.List.of("alltoall", "deepep",
      "hybridep");

  /**
   * A run with NCCL's all-to-all token dispatcher.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size, or 0 for the world size's rest
   * @param virtualStages model chunks per pipeline stage
   * @param microBatch sequences per microbatch
   * @param localBatch sequences per iteration on one replica
   * @param recompute {@code none}, {@code selective}, {@code full} or {@code op}
   * @param sequenceParallel sequence parallelism
   * @param zeroStage 0, 1 or 3
   * @param overlapGradReduce the gradient reduction's overlap
   * @param overlapParamGather the parameter gather's overlap
   * @param tpCommOverlap the tensor-parallel overlap
   * @param gradAccumFusion gradient-accumulation fusion
   * @param split the pipeline split
   * @param lossFusion the fused loss
   * @param bf16GradReduce gradients reduced in bf16
   * @param contextParallel the context-parallel size
   * @param cpAllGather keys and values all-gathered
   * @param recomputeModules selectively recomputed modules
   * @param expertParallel expert-parallel size
   * @param expertTensorParallel expert tensor-parallel size
   * @param moeOverlap the expert all-to-alls' overlap
   */
  public RunParallel(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatch, int localBatch, String recompute,
      boolean sequenceParallel, int zeroStage, boolean overlapGradReduce,
      boolean overlapParamGather, boolean tpCommOverlap, boolean gradAccumFusion, RunSplit split,
      boolean lossFusion, boolean bf16GradReduce, int contextParallel, boolean cpAllGather,
      java.util.List<String> recomputeModules, int expertParallel, int expertTensorParallel,
      boolean moeOverlap) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatch, localBatch,
        recompute, sequenceParallel, zeroStage, overlapGradReduce, overlapParamGather,
        tpCommOverlap, gradAccumFusion, split, lossFusion, bf16GradReduce, contextParallel,
        cpAllGather ? "all_gather" : "p2p", recomputeModules, expertParallel,
        expertTensorParallel, moeOverlap, "alltoall", 1, 0);
  }

  /**
   * This run with its ZeRO-3 state sharded inside groups and replicated across {@code r} of
   * them (HSDP: torchtitan's {@code data_parallel_replicate_degree} beside FSDP).
   *
   * @param r the replicas of the sharded state
   * @return the run
   */
  public RunParallel withShardReplicas(int r) {
    return new RunParallel(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatch, localBatch, recompute, sequenceParallel, zeroStage, overlapGradReduce,
        overlapParamGather, tpCommOverlap, gradAccumFusion, split, lossFusion, bf16GradReduce,
        contextParallel, cpCommType, recomputeModules, expertParallel, expertTensorParallel,
        moeOverlap, dispatcher, r, recomputeLayers);
  }

  /** Validates the sizes. */
  public RunParallel {
    Require.positive(shardReplicas, "replicas of the sharded state");
    Require.that(recomputeLayers >= 0, "recomputed layers must be >= 0");
    Require.that(recomputeLayers == 0 || recompute.equals("full"),
        "recomputing some layers is full recomputation's");
    Require.that(shardReplicas == 1 || zeroStage == 3, "hybrid sharding is ZeRO-3's");
    Require.that(DISPATCHERS.contains(dispatcher), "unknown token dispatcher " + dispatcher);
    Require.that(CP_COMM_TYPES.contains(cpCommType), "unknown context exchange " + cpCommType);
    Require.nonNull(split, "split");
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.positive(contextParallel, "context-parallel size");
    recomputeModules = java.util.List.copyOf(recomputeModules);
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.positive(pipelineParallel, "pipeline-parallel size");
    Require.that(dataParallel >= 0, "data-parallel size must be >= 0");
    Require.positive(virtualStages, "virtual stages");
    Require.positive(microBatch, "micro batch");
    Require.positive(localBatch, "local batch");
    Require.that(recompute.equals("none") || recompute.equals("selective")
        || recompute.equals("full") || recompute.equals("op"),
        "recompute must be none, selective, full or op");
  }

  /**
   * A run with the even pipeline split.
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size, or 0 for the world size's rest
   * @param virtualStages model chunks per pipeline stage
   * @param microBatch sequences per microbatch
   * @param localBatch sequences per iteration on one replica
   * @param recompute {@code none}, {@code selective}, {@code full} or {@code op}
   * @param sequenceParallel sequence parallelism
   * @param zeroStage 0, 1 or 3
   * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
   * @param overlapParamGather Megatron-LM's {@code overlap_param_gather}
   * @param tpCommOverlap Megatron-LM's {@code tp_comm_overlap}
   * @param gradAccumFusion gradient-accumulation fusion
   */
  public RunParallel(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatch, int localBatch, String recompute,
      boolean sequenceParallel, int zeroStage, boolean overlapGradReduce,
      boolean overlapParamGather, boolean tpCommOverlap, boolean gradAccumFusion) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatch, localBatch,
        recompute, sequenceParallel, zeroStage, overlapGradReduce, overlapParamGather,
        tpCommOverlap, gradAccumFusion, RunSplit.NONE, false, false, 1, false,
        java.util.List.of(), 1, 1, false);
  }

  /**
   * This run with its sequences split over GPUs by an exchange.
   *
   * @param cp the context-parallel size, >= 1
   * @param type {@code p2p}, {@code all_gather} or {@code a2a} ({@link #CP_COMM_TYPES})
   * @return the run
   */
  public RunParallel withContext(int cp, String type) {
    return new RunParallel(tensorParallel, pipelineParallel, dataParallel, virtualStages,
        microBatch, localBatch, recompute, sequenceParallel, zeroStage, overlapGradReduce,
        overlapParamGather, tpCommOverlap, gradAccumFusion, split, lossFusion, bf16GradReduce,
        cp, type, recomputeModules, expertParallel, expertTensorParallel, moeOverlap,
        dispatcher, shardReplicas, recomputeLayers);
  }

  /**
   * Whether context parallelism all-gathered the keys and values.
   *
   * @return true for {@code all_gather}
   */
  public boolean cpAllGather() {
    return cpCommType.equals("all_gather");
  }

  /**
   * A run with only the gradient reduction's overlap stated, fused gradient accumulation (the
   * frameworks' default).
   *
   * @param tensorParallel tensor-parallel size
   * @param pipelineParallel pipeline-parallel size
   * @param dataParallel data-parallel size, or 0 for the world size's rest
   * @param virtualStages model chunks per pipeline stage
   * @param microBatch sequences per microbatch
   * @param localBatch sequences per iteration on one replica
   * @param recompute {@code none}, {@code selective}, {@code full} or {@code op}
   * @param sequenceParallel sequence parallelism
   * @param zeroStage 0, 1 or 3
   * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
   */
  public RunParallel(int tensorParallel, int pipelineParallel, int dataParallel,
      int virtualStages, int microBatch, int localBatch, String recompute,
      boolean sequenceParallel, int zeroStage, boolean overlapGradReduce) {
    this(tensorParallel, pipelineParallel, dataParallel, virtualStages, microBatch, localBatch,
        recompute, sequenceParallel, zeroStage, overlapGradReduce, false, false, true);
  }
}
