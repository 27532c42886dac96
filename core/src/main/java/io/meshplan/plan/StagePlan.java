package io.meshplan.plan;

import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;

/**
 * One pipeline stage of a plan.
 *
 * @param firstLayer first layer of the stage (0 is the embedding when the plan has one; see
 *     {@link PipelinePlan#layerNames})
 * @param lastLayer last layer of the stage, inclusive
 * @param submeshNodes rows of the stage's submesh (nodes)
 * @param submeshGpus columns of the stage's submesh (GPUs per node it uses)
 * @param firstDevice the cluster device id of the submesh's first GPU (row-major over nodes)
 * @param dataParallel the logical mesh's data-parallel axis (axis 0)
 * @param tensorParallel the logical mesh's tensor axis (axis 1)
 * @param recompute the stage's activation recomputation
 * @param sequenceParallel sequence parallelism inside the stage's tensor-parallel groups
 * @param zeroStage the ZeRO stage over the stage's data-parallel groups (Rajbhandari et al.
 *     SC'20): 0 none, 1 optimizer state sharded (Megatron-LM's distributed optimizer), 2
 *     gradients and optimizer state sharded (DeepSpeed stage 2, FSDP SHARD_GRAD_OP), 3 weights,
 *     gradients and optimizer state sharded (FSDP)
 * @param megatronLayouts whether the weights take Megatron-LM's layouts (column- then
 *     row-parallel) rather than the ILP's own choice
 * @param forwardSeconds forward time of one microbatch on one replica, seconds
 * @param backwardSeconds backward time of one microbatch (recomputation included), seconds
 * @param peakMemoryBytes peak memory per GPU of this stage, bytes
 * @param tensors the shardings of the stage's largest tensors
 * @param commBytesPerGpu bytes one GPU of the stage sends per iteration, by axis; empty in plans
 *     written before meshplan counted them
 * @param expertParallel the expert-parallel size of a mixture-of-experts model's blocks, 1
 *     otherwise
 * @param expertTensorParallel the expert tensor-parallel size, 1 otherwise
 * @param contextParallel the context-parallel size: each of the {@code dataParallel} replicas is
 *     {@code contextParallel x tensorParallel} GPUs that split its sequences
 * @param cpExchange how context parallelism exchanges the sequence's shares ({@link
 *     ContextExchange})
 * @param shardGroup under ZeRO-3, the data-parallel replicas each copy of the state is sharded
 *     over: 0 for all of them, else a divisor of {@code dataParallel} (hybrid sharding, {@link
 *     ParallelConfig#shardGroup})
 * @param recomputeLayers under full recomputation, the stage's first blocks recomputed and the
 *     rest keeping their activations (Megatron-LM's {@code --recompute-method block
 *     --recompute-num-layers}, {@link ParallelConfig#recomputeLayers}), fewer than the stage's
 *     blocks; 0 when every block takes the stage's {@code recompute}
 */
public record StagePlan(
    int firstLayer,
    int lastLayer,
    int submeshNodes,
    int submeshGpus,
    int firstDevice,
    int dataParallel,
    int tensorParallel,
    io.meshplan.model.Recompute recompute,
    boolean sequenceParallel,
    int zeroStage,
    boolean megatronLayouts,
    double forwardSeconds,
    double backwardSeconds,
    double peakMemoryBytes,
    List<TensorSharding> tensors,
    Optional<AxisBytes> commBytesPerGpu,
    int expertParallel,
    int expertTensorParallel,
    int contextParallel,
    ContextExchange cpExchange,
    int shardGroup,
    int recomputeLayers) {

  /** Validates the fields. */
  public StagePlan {
    // An empty range [f, f - 1]: a model chunk with the embedding or the head alone.
    Require.that(firstLayer >= 0 && lastLayer >= firstLayer - 1, "stage layers must be a range, "
        + "got [" + firstLayer + ", " + lastLayer + "]");
    Require.positive(submeshNodes, "submesh nodes");
    Require.positive(submeshGpus, "submesh GPUs");
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.positive(contextParallel, "context-parallel size");
    Require.nonNull(cpExchange, "context exchange");
    Require.that(firstDevice >= 0, "first device must be >= 0");
    Require.positive(dataParallel, "data-parallel size");
    Require.positive(tensorParallel, "tensor-parallel size");
    Require.that((long) dataParallel * contextParallel * tensorParallel
        == (long) submeshNodes * submeshGpus, "logical mesh " + dataParallel + "x"
        + (contextParallel > 1 ? contextParallel + "x" : "") + tensorParallel
        + " does not match submesh " + submeshNodes + "x" + submeshGpus);
    Require.nonNull(recompute, "recompute");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage must be 0, 1, 2 or 3,"
        + " got " + zeroStage);
    Require.nonNegative(forwardSeconds, "forward seconds");
    Require.nonNegative(backwardSeconds, "backward seconds");
    Require.nonNegative(peakMemoryBytes, "peak memory bytes");
    tensors = List.copyOf(tensors);
    Require.nonNull(commBytesPerGpu, "communication bytes");
    Require.that(shardGroup == 0 || zeroStage == 3 && shardGroup > 1
        && shardGroup < dataParallel && dataParallel % shardGroup == 0,
        () -> "shard group " + shardGroup + " needs ZeRO stage 3 and must divide the stage's "
            + dataParallel + " data-parallel replicas");
    Require.that(recomputeLayers == 0 || recompute == io.meshplan.model.Recompute.FULL
        && recomputeLayers > 0 && recomputeLayers < lastLayer - firstLayer + 1,
        () -> recomputeLayers + " recomputed blocks need full recomputation and fewer than the"
            + " stage's " + (lastLayer - firstLayer + 1));
  }

  /**
   * A stage whose blocks all take its recomputation.
   *
   * @param firstLayer first layer
   * @param lastLayer last layer
   * @param submeshNodes submesh nodes
   * @param submeshGpus submesh GPUs per node
   * @param firstDevice first device
   * @param dataParallel data-parallel size
   * @param tensorParallel tensor-parallel size
   * @param recompute recomputation
   * @param sequenceParallel sequence parallelism
   * @param zeroStage the ZeRO stage
   * @param megatronLayouts Megatron-LM's layouts
   * @param forwardSeconds forward seconds
   * @param backwardSeconds backward seconds
   * @param peakMemoryBytes peak memory
   * @param tensors the largest tensors
   * @param commBytesPerGpu bytes per GPU by axis
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpExchange the context exchange
   * @param shardGroup the ZeRO-3 shard group, 0 for all replicas
   */
  public StagePlan(int firstLayer, int lastLayer, int submeshNodes, int submeshGpus,
      int firstDevice, int dataParallel, int tensorParallel,
      io.meshplan.model.Recompute recompute, boolean sequenceParallel, int zeroStage,
      boolean megatronLayouts, double forwardSeconds, double backwardSeconds,
      double peakMemoryBytes, List<TensorSharding> tensors, Optional<AxisBytes> commBytesPerGpu,
      int expertParallel, int expertTensorParallel, int contextParallel,
      ContextExchange cpExchange, int shardGroup) {
    this(firstLayer, lastLayer, submeshNodes, submeshGpus, firstDevice, dataParallel,
        tensorParallel, recompute, sequenceParallel, zeroStage, megatronLayouts, forwardSeconds,
        backwardSeconds, peakMemoryBytes, tensors, commBytesPerGpu, expertParallel,
        expertTensorParallel, contextParallel, cpExchange, shardGroup, 0);
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
   * A stage that shards its ZeRO state over its whole data-parallel group.
   *
   * @param firstLayer first layer
   * @param lastLayer last layer
   * @param submeshNodes submesh nodes
   * @param submeshGpus submesh GPUs per node
   * @param firstDevice first device
   * @param dataParallel data-parallel size
   * @param tensorParallel tensor-parallel size
   * @param recompute recomputation
   * @param sequenceParallel sequence parallelism
   * @param zeroStage the ZeRO stage
   * @param megatronLayouts Megatron-LM's layouts
   * @param forwardSeconds forward seconds
   * @param backwardSeconds backward seconds
   * @param peakMemoryBytes peak memory
   * @param tensors the largest tensors
   * @param commBytesPerGpu bytes per GPU by axis
   * @param expertParallel EP
   * @param expertTensorParallel ETP
   * @param contextParallel CP
   * @param cpAllGather the all-gather context exchange
   */
  public StagePlan(int firstLayer, int lastLayer, int submeshNodes, int submeshGpus,
      int firstDevice, int dataParallel, int tensorParallel,
      io.meshplan.model.Recompute recompute, boolean sequenceParallel, int zeroStage,
      boolean megatronLayouts, double forwardSeconds, double backwardSeconds,
      double peakMemoryBytes, List<TensorSharding> tensors, Optional<AxisBytes> commBytesPerGpu,
      int expertParallel, int expertTensorParallel, int contextParallel, boolean cpAllGather) {
    this(firstLayer, lastLayer, submeshNodes, submeshGpus, firstDevice, dataParallel,
        tensorParallel, recompute, sequenceParallel, zeroStage, megatronLayouts, forwardSeconds,
        backwardSeconds, peakMemoryBytes, tensors, commBytesPerGpu, expertParallel,
        expertTensorParallel, contextParallel, ContextExchange.of(cpAllGather), 0);
  }
  /**
   * A stage without expert parallelism.
   *
   * @param firstLayer first layer
   * @param lastLayer last layer
   * @param submeshNodes nodes of the submesh
   * @param submeshGpus GPUs per node of the submesh
   * @param firstDevice the first device
   * @param dataParallel data-parallel size
   * @param tensorParallel tensor-parallel size
   * @param recompute recomputation
   * @param sequenceParallel sequence parallelism
   * @param zeroStage the ZeRO stage
   * @param megatronLayouts Megatron-LM's layouts
   * @param forwardSeconds forward seconds
   * @param backwardSeconds backward seconds
   * @param peakMemoryBytes peak memory bytes
   * @param tensors tensor shardings
   * @param commBytesPerGpu bytes by axis
   */
  public StagePlan(int firstLayer, int lastLayer, int submeshNodes, int submeshGpus,
      int firstDevice, int dataParallel, int tensorParallel,
      io.meshplan.model.Recompute recompute, boolean sequenceParallel, int zeroStage,
      boolean megatronLayouts, double forwardSeconds, double backwardSeconds,
      double peakMemoryBytes, List<TensorSharding> tensors, Optional<AxisBytes> commBytesPerGpu) {
    this(firstLayer, lastLayer, submeshNodes, submeshGpus, firstDevice, dataParallel,
        tensorParallel, recompute, sequenceParallel, zeroStage, megatronLayouts, forwardSeconds,
        backwardSeconds, peakMemoryBytes, tensors, commBytesPerGpu, 1, 1, 1, false);
  }


  /**
   * A stage without its communication volume (as plan files of meshplan before it counted bytes
   * describe it).
   *
   * @param firstLayer first layer
   * @param lastLayer last layer, inclusive
   * @param submeshNodes submesh rows
   * @param submeshGpus submesh columns
   * @param firstDevice the first GPU
   * @param dataParallel data-parallel size
   * @param tensorParallel tensor-parallel size
   * @param recompute recomputation
   * @param sequenceParallel sequence parallelism
   * @param zeroStage 0, 1, 2 or 3
   * @param megatronLayouts Megatron-LM layouts
   * @param forwardSeconds forward of one microbatch, seconds
   * @param backwardSeconds backward of one microbatch, seconds
   * @param peakMemoryBytes peak memory per GPU, bytes
   * @param tensors the largest tensors' shardings
   */
  public StagePlan(int firstLayer, int lastLayer, int submeshNodes, int submeshGpus,
      int firstDevice, int dataParallel, int tensorParallel, io.meshplan.model.Recompute recompute,
      boolean sequenceParallel, int zeroStage, boolean megatronLayouts, double forwardSeconds,
      double backwardSeconds, double peakMemoryBytes, List<TensorSharding> tensors) {
    this(firstLayer, lastLayer, submeshNodes, submeshGpus, firstDevice, dataParallel,
        tensorParallel, recompute, sequenceParallel, zeroStage, megatronLayouts, forwardSeconds,
        backwardSeconds, peakMemoryBytes, tensors, Optional.empty());
  }

  /**
   * The stage's GPUs.
   *
   * @return submesh rows times columns
   */
  public int devices() {
    return submeshNodes * submeshGpus;
  }

  /**
   * The number of layers.
   *
   * @return last - first + 1
   */
  public int layerCount() {
    return lastLayer - firstLayer + 1;
  }

  /**
   * What a stage of {@code blocks} blocks records of a configuration's count of first blocks
   * recomputed ({@link ParallelConfig#recomputeLayers}): the count, or 0 where it reaches the
   * stage's blocks, since the stage then recomputes them all, as Megatron-Core's block method
   * does.
   *
   * @param count the configuration's count, >= 0
   * @param blocks the stage's blocks
   * @return the stage's {@link #recomputeLayers}
   */
  public static int recomputeLayersOf(int count, int blocks) {
    return count < blocks ? count : 0;
  }

  /**
   * The stage's recomputation in reports' words: its mode, and under partial full recomputation
   * the blocks recomputed of the stage's, as {@code full 3/8}.
   *
   * @return the label
   */
  public String recomputeLabel() {
    return recompute.label() + (recomputeLayers > 0 ? " " + recomputeLayers + "/" + layerCount()
        : "");
  }
}
