package io.meshplan.interop.cost;

import io.meshplan.cluster.AxisPlacement;
import io.meshplan.cluster.BusBytesCommModel;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.ExpertDispatchBandwidth;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.model.ExpertDispatcher;
import io.meshplan.model.MoeShape;
import io.meshplan.model.OptimizerState;
import io.meshplan.cluster.Collective;
import io.meshplan.sim.StageCommBytes;
import io.meshplan.cluster.CommModel;
import io.meshplan.sim.MemoryBreakdown;
import io.meshplan.sim.StageCost;
import io.meshplan.model.Overlaps;
import io.meshplan.sim.HiddenComm;
import io.meshplan.sim.Overlap;
import io.meshplan.util.Require;
import java.util.List;

/**
 * Turns the planned layers of one stage into what the simulator needs, adding the work that
 * happens once per iteration on the data-parallel axis (axis 0 of the stage's logical mesh).
 *
 * <p>Mixed-precision Adam (Micikevicius et al. ICLR'18; Rajbhandari et al. SC'20, section 3): per
 * parameter a GPU holds the 16-bit weight (2 bytes; 4 in fp32 training), an fp32 gradient
 * accumulator (4 bytes) and the optimizer state: fp32 master weight, first and second moment
 * (12 bytes; 8 in fp32 training, where the weight is its own master copy). ZeRO (Rajbhandari et
 * al.) shards these over the data-parallel group:
 * <ul>
 *   <li>stage 0: nothing sharded; gradients are all-reduced once per iteration;
 *   <li>stage 1 (Megatron-LM's distributed optimizer): optimizer state sharded; gradients
 *       reduce-scattered, updated weights all-gathered;
 *   <li>stage 2 (DeepSpeed stage 2, FSDP SHARD_GRAD_OP): gradients and optimizer state sharded,
 *       weights replicated; every microbatch reduce-scatters its gradients, updated weights are
 *       all-gathered once per iteration (see {@link #REDUCE_BUCKET_ELEMENTS});
 *   <li>stage 3 (FSDP): weights, gradients and optimizer state sharded; every microbatch
 *       all-gathers the weights for its forward and again for its backward and reduce-scatters
 *       its gradients.
 * </ul>
 * Communication volume per GPU (nccl-tests bus bytes, see {@link BusBytesCommModel}) on the
 * data-parallel axis of {@code d} GPUs, with {@code G} the fp32 gradient bytes and {@code W} the
 * 16-bit weight bytes of one replica's GPU: stage 0 all-reduces {@code 2(d-1)/d * G} per iteration;
 * stage 1 reduce-scatters {@code (d-1)/d * G} and all-gathers {@code (d-1)/d * W} per iteration;
 * stage 2 reduce-scatters {@code (d-1)/d * G} per microbatch and all-gathers {@code (d-1)/d * W}
 * per iteration; stage 3 sends {@code 2 * (d-1)/d * W + (d-1)/d * G} per microbatch.
 * The optimizer step streams 30 bytes per parameter it updates (reads gradient, master weight and
 * both moments, 16 bytes; writes master, moments and the 16-bit copy, 14 bytes) at the HBM rate of
 * the kernel model. With bf16 optimizer state ({@link OptimizerState#BF16}: the bf16 weights are
 * Adam's own, its moments and the kept gradients bf16) a GPU holds 2 + 2 + 4 = 8 bytes per
 * trained parameter, sharded by the same stages, and the step streams 14 bytes
 * ({@link OptimizerState#stepBytes}); the reduction moves what {@link
 * Overlaps#bf16GradReduce} says, as FSDP2's {@code reduce_dtype} sets it apart from the
 * gradients' dtype.
 *
 * <p>Stages 2 and 3 are priced as they run under a pipeline too, every microbatch: Megatron-FSDP
 * (v1), which the Megatron-LM export writes for them ({@code optim_grads}, {@code
 * optim_grads_params}), reduce-scatters sharded gradients even inside the schedules' {@code
 * no_sync} ({@code megatron_fsdp.py}, "For grads shard mode there will actually always be gradient
 * sync happening", NVIDIA/Megatron-LM at d98e8a6), and its argument check refuses pipelines only
 * for {@code --use-torch-fsdp2} ({@code megatron/training/arguments.py}:1034-1035); DeepSpeed's
 * pipeline engine refuses both stages ({@code deepspeed/runtime/pipe/engine.py}:76-77 at
 * edaa722), so its export does. That per-microbatch work is data-parallel communication inside
 * the passes: {@link StageCost#shardSeconds}, which the simulator's breakdown counts on the
 * data-parallel axis, not as tensor-parallel communication.
 */
public final class StageCostBuilder {
  /**
   * Elements of the 16-bit gradient bucket ZeRO-2 keeps whole on each GPU: DeepSpeed's default
   * {@code reduce_bucket_size} (500,000,000). In {@code deepspeed/runtime/zero/stage_1_and_2.py},
   * {@code DeepSpeedZeroOptimizer.__init__} installs backward hooks when {@code partition_grads}
   * ("ZeRO-2") is set ({@code if self.partition_gradients or self.overlap_comm:
   * self.create_reduce_and_remove_grad_hooks()}), so every backward, not only the last of an
   * accumulation, reduces its gradients into this GPU's partition; {@code backward()} allocates
   * the bucket ({@code ipg_buffer}, {@code torch.empty(int(self.reduce_bucket_size),
   * dtype=self.dtype)}) on every micro step with {@code contiguous_gradients} (default true), a
   * second one with {@code overlap_comm}, which meshplan's export leaves off. The bucket is
   * priced whole because DeepSpeed allocates it whole, whatever the stage's size.
   */
  public static final double REDUCE_BUCKET_ELEMENTS = 5e8;

  /**
   * The smallest gradient bucket of Megatron-Core's data-parallel buffers, elements: its default
   * bucket is {@code max(40000000, 1000000 * dp)} parameters for a data-parallel group of {@code
   * dp} GPUs (context parallelism included) when the reduction is overlapped ({@code
   * DistributedDataParallel.__init__}, {@code megatron/core/distributed/
   * distributed_data_parallel.py} at d98e8a64dd).
   */
  public static final double MIN_BUCKET_ELEMENTS = 4e7;

  /** Elements Megatron-Core's default bucket grows by per data-parallel GPU. */
  public static final double BUCKET_ELEMENTS_PER_GPU = 1e6;

  private final CommModel stageComm;
  private final java.util.function.Function<io.meshplan.cluster.LogicalMesh, CommModel> meshComm;
  /** The expert, context-parallel and hybrid-sharded meshes priced so far, by their axes. */
  private final java.util.Map<MeshAxes, CommModel> meshes = new java.util.HashMap<>();
  /** DeepEP's or Hybrid-EP's prices on each expert mesh priced so far. */
  private final java.util.Map<LogicalMesh, PairPrices> pairs = new java.util.HashMap<>();
  private final double hbmBytesPerSecond;
  private final int weightBytes;
  private final Overlaps overlaps;
  private final ClusterSpec cluster;
  private final OptimizerState state;
  /**
   * The last two passes built ({@link #passes}): the stage search builds one list of layers under
   * several ZeRO stages and shard groups, which share them, two ways (ZeRO 0 and 1 keep their
   * gradients in another precision and may fuse their accumulation). A builder serves one search
   * task, on one thread.
   */
  private Passes last;
  private Passes previous;

  /**
   * Creates the builder with nothing overlapped but, when asked, the gradient reduction.
   *
   * @param stageComm collective prices on the stage's logical mesh (axis 0 data-parallel), seconds
   * @param hbmBytesPerSecond the HBM bandwidth a streaming kernel reaches, bytes/s
   * @param weightBytes bytes of a weight in the compute precision (2 for bf16/fp16, 4 for fp32)
   * @param overlapGradSync whether the framework overlaps the gradient reduction with the
   *     backward pass (bucketed reduction as in PyTorch DDP and Megatron-LM's {@code
   *     --overlap-grad-reduce})
   */
  public StageCostBuilder(CommModel stageComm, double hbmBytesPerSecond, int weightBytes,
      boolean overlapGradSync) {
    this(stageComm, hbmBytesPerSecond, weightBytes, Overlaps.NONE.withGradReduce(overlapGradSync));
  }

  /**
   * Creates the builder.
   *
   * @param stageComm collective prices on the stage's logical mesh (axis 0 data-parallel), seconds
   * @param hbmBytesPerSecond the HBM bandwidth a streaming kernel reaches, bytes/s
   * @param weightBytes bytes of a weight in the compute precision (2 for bf16/fp16, 4 for fp32)
   * @param overlaps what the framework overlaps and fuses
   */
  public StageCostBuilder(CommModel stageComm, double hbmBytesPerSecond, int weightBytes,
      Overlaps overlaps) {
    this(stageComm, null, hbmBytesPerSecond, weightBytes, overlaps);
  }

  /**
   * Creates a builder that can also price the expert-parallel work of mixture-of-experts stages.
   *
   * @param stageComm collective prices on the stage's logical mesh (axis 0 data-parallel), seconds
   * @param meshComm collective prices on any logical mesh placed as the stage's (the expert
   *     mesh), seconds; null when no stage has experts
   * @param hbmBytesPerSecond the HBM bandwidth a streaming kernel reaches, bytes/s
   * @param weightBytes bytes of a weight in the compute precision (2 for bf16/fp16, 4 for fp32)
   * @param overlaps what the framework overlaps and fuses
   */
  public StageCostBuilder(CommModel stageComm,
      java.util.function.Function<io.meshplan.cluster.LogicalMesh, CommModel> meshComm,
      double hbmBytesPerSecond, int weightBytes, Overlaps overlaps) {
    this(stageComm, meshComm, null, hbmBytesPerSecond, weightBytes, overlaps);
  }

  /**
   * Creates a builder that prices the expert-parallel work of mixture-of-experts stages with
   * any dispatcher.
   *
   * @param stageComm collective prices on the stage's logical mesh (axis 0 data-parallel), seconds
   * @param meshComm collective prices on any logical mesh placed as the stage's, seconds
   * @param cluster the cluster the meshes are placed on, whose placement DeepEP's and
   *     Hybrid-EP's prices need; null when only the all-to-all dispatcher runs
   * @param hbmBytesPerSecond the HBM bandwidth a streaming kernel reaches, bytes/s
   * @param weightBytes bytes of a weight in the compute precision (2 for bf16/fp16, 4 for fp32)
   * @param overlaps what the framework overlaps and fuses, and its dispatcher
   */
  public StageCostBuilder(CommModel stageComm,
      java.util.function.Function<io.meshplan.cluster.LogicalMesh, CommModel> meshComm,
      ClusterSpec cluster, double hbmBytesPerSecond, int weightBytes, Overlaps overlaps) {
    this(stageComm, meshComm, cluster, hbmBytesPerSecond, weightBytes, overlaps,
        OptimizerState.FP32);
  }

  /**
   * Creates a builder for an optimizer-state precision.
   *
   * @param stageComm collective prices on the stage's logical mesh (axis 0 data-parallel), seconds
   * @param meshComm collective prices on any logical mesh placed as the stage's, seconds
   * @param cluster the cluster the meshes are placed on; null when only the all-to-all
   *     dispatcher runs
   * @param hbmBytesPerSecond the HBM bandwidth a streaming kernel reaches, bytes/s
   * @param weightBytes bytes of a weight in the compute precision (2 for bf16/fp16, 4 for fp32)
   * @param overlaps what the framework overlaps and fuses, and its dispatcher
   * @param state the precision of the optimizer's weights, moments and gradients
   */
  public StageCostBuilder(CommModel stageComm,
      java.util.function.Function<io.meshplan.cluster.LogicalMesh, CommModel> meshComm,
      ClusterSpec cluster, double hbmBytesPerSecond, int weightBytes, Overlaps overlaps,
      OptimizerState state) {
    this.state = Require.nonNull(state, "optimizer state");
    Require.that(state == OptimizerState.FP32 || weightBytes == 2,
        "bf16 optimizer state needs 2-byte weights");
    this.meshComm = meshComm;
    this.cluster = cluster;
    this.overlaps = Require.nonNull(overlaps, "overlaps");
    this.stageComm = Require.nonNull(stageComm, "stage communication model");
    Require.that(hbmBytesPerSecond > 0, "HBM bandwidth must be > 0");
    this.hbmBytesPerSecond = hbmBytesPerSecond;
    Require.that(weightBytes == 2 || weightBytes == 4, "weights are 2 or 4 bytes");
    this.weightBytes = weightBytes;
  }

  /**
   * Builds a stage without sequence parallelism.
   *
   * @param layers the stage's layers in order, each planned for one replica
   * @param dataParallel the data-parallel degree (axis 0 of the logical mesh)
   * @param tensorParallel the tensor-parallel degree (axis 1)
   * @param zeroStage 0, 1, 2 or 3, as in the class comment
   * @param lastStage whether this is the pipeline's last stage (it sends nothing on)
   * @return the stage cost
   */
  public StageCost build(List<LayerCost> layers, int dataParallel, int tensorParallel,
      int zeroStage, boolean lastStage) {
    return build(layers, dataParallel, tensorParallel, zeroStage, false, lastStage);
  }

  /**
   * Builds a stage. Its overlaps apply where the framework that runs the stage has them: the
   * tensor-parallel overlap with sequence parallelism, gradient-accumulation fusion under ZeRO
   * stages 0 and 1 (Megatron-LM), the parameter gather's overlap under ZeRO-1, FSDP prefetch
   * under ZeRO-3.
   *
   * @param layers the stage's layers in order, each planned for one replica
   * @param dataParallel the data-parallel degree (axis 0 of the logical mesh)
   * @param tensorParallel the tensor-parallel degree (axis 1)
   * @param zeroStage 0, 1, 2 or 3, as in the class comment
   * @param sequenceParallel whether the stage's layers use sequence parallelism
   * @param lastStage whether this is the pipeline's last stage (it sends nothing on)
   * @return the stage cost
   */
  public StageCost build(List<LayerCost> layers, int dataParallel, int tensorParallel,
      int zeroStage, boolean sequenceParallel, boolean lastStage) {
    return build(layers, dataParallel, tensorParallel, zeroStage, 0, sequenceParallel,
        lastStage);
  }

  /**
   * Builds a stage whose ZeRO-3 state may be sharded inside groups of its data-parallel GPUs
   * (hybrid sharding, {@link #shardHybrid}).
   *
   * @param layers the stage's layers in order, each planned for one replica
   * @param dataParallel the data-parallel degree (axis 0 of the logical mesh)
   * @param tensorParallel the tensor-parallel degree (axis 1)
   * @param zeroStage 0, 1, 2 or 3, as in the class comment
   * @param shardGroup under ZeRO-3, the data-parallel GPUs each copy of the state is sharded
   *     over: 0 for all of them, else a divisor of {@code dataParallel}
   * @param sequenceParallel whether the stage's layers use sequence parallelism
   * @param lastStage whether this is the pipeline's last stage (it sends nothing on)
   * @return the stage cost
   */
  public StageCost build(List<LayerCost> layers, int dataParallel, int tensorParallel,
      int zeroStage, int shardGroup, boolean sequenceParallel, boolean lastStage) {
    Require.that(!layers.isEmpty(), "a stage needs at least one layer");
    Require.that(shardGroup == 0 || zeroStage == 3 && shardGroup > 1
        && shardGroup < dataParallel && dataParallel % shardGroup == 0,
        () -> "shard group " + shardGroup + " needs ZeRO-3 and must divide the stage's "
            + dataParallel + " data-parallel GPUs");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage must be 0, 1, 2 or 3");
    boolean fuse = overlaps.gradAccumFusion() && zeroStage <= 1;
    boolean overlapTensor = overlaps.tensorComm() && sequenceParallel && tensorParallel > 1;
    // Overlaps#bf16GradReduce: half the bytes reduced, and kept under ZeRO 0 and 1.
    boolean bf16 = overlaps.bf16GradReduce() && weightBytes == 2;
    int d = dataParallel;
    Passes passes = passes(layers, state.gradientBytes(bf16 && zeroStage <= 1 ? 2 : 4),
        bf16 ? 2 : 4, fuse, overlapTensor, d, tensorParallel);
    StageTally s = passes.tally().copy();
    StageTally experts = passes.experts() == null ? null : passes.experts().copy();
    CommModel expertComm = passes.expertComm();
    if (shardGroup > 0) {
      shardHybrid(s, hybridComm(d, shardGroup, tensorParallel), shardGroup, layers);
    } else {
      shardState(s, stageComm, d, zeroStage, layers, false);
    }
    if (experts != null) {
      shardState(experts, expertComm, expertComm.mesh().size(0), zeroStage, layers, true);
      s.merge(experts);
    }
    double optimizerSeconds = s.updated * state.stepBytes() / hbmBytesPerSecond;
    double send = lastStage ? 0 : layers.get(layers.size() - 1).boundaryBytes();
    return new StageCost(d * tensorParallel, d, tensorParallel, s.fwd, s.bwd,
        Math.min(s.rec, s.bwd), s.comm, send, s.gradSync, overlaps.gradReduce(), s.gather,
        optimizerSeconds, s.flops, s.hw,
        new MemoryBreakdown(s.weights, s.grads, s.optimizer, s.saved, s.temp),
        new StageCommBytes(s.tensorBytes, s.tensorGatherBytes, s.dataBytesPerMicrobatch,
            s.dataBytes, s.expertBytesPerMicrobatch, s.contextBytesPerMicrobatch),
        new HiddenComm(s.hidden, s.slowdown, s.hiddenIteration),
        Math.min(s.exchange, s.comm), Math.max(0, Math.min(s.shard, s.comm - s.exchange)),
        s.gradSyncTail);
  }

  /**
   * The stage's passes before any data-parallel work, built on the layers' sums ({@link
   * StageTally#StageTally}): the expert-parallel exchange, the experts' model state split off, and
   * the context-parallel exchange. None of it depends on the ZeRO stage or the shard group, so
   * those of the last call are reused when it built the same layers alike on the same mesh; the
   * caller builds on copies.
   */
  private Passes passes(List<LayerCost> layers, double kept, double wire, boolean fuse,
      boolean overlapTensor, int d, int t) {
    if (last != null && last.of(layers, kept, wire, fuse, overlapTensor, d, t)) {
      return last;
    }
    if (previous != null && previous.of(layers, kept, wire, fuse, overlapTensor, d, t)) {
      Passes p = previous;
      previous = last;
      last = p;
      return p;
    }
    StageTally s = new StageTally(layers, weightBytes, state, kept, wire, fuse, overlapTensor);
    ExpertExchange ex = routed(layers);
    StageTally experts = null;
    CommModel expertComm = null;
    if (ex != null) {
      expertComm = expertComm(d, t, ex);
      exchange(s, layers, exchangePrices(expertComm), overlaps.moeComm());
      experts = s.split(expertShare(layers));
    }
    RingExchange ring = ring(layers);
    if (ring != null) {
      ring(s, layers, contextComm(d, t, ring.contextParallel()));
    }
    previous = last;
    last = new Passes(List.copyOf(layers), kept, wire, fuse, overlapTensor, d, t, s, experts,
        expertComm);
    return last;
  }

  /**
   * A stage's passes before any data-parallel work ({@link #passes}) and what they were built
   * from.
   *
   * @param layers the layers summed
   * @param kept bytes of a kept gradient
   * @param wire bytes of a gradient on the wire
   * @param fuse whether gradient accumulation is fused
   * @param overlap whether tensor-parallel communication runs under compute
   * @param d the stage's data-parallel GPUs per tensor rank
   * @param t its tensor-parallel size
   * @param tally the passes and the dense model state, never handed out: callers build on copies
   * @param experts the routed experts' model state, or null for a dense stage
   * @param expertComm collective prices on the expert mesh, or null for a dense stage
   */
  private record Passes(List<LayerCost> layers, double kept, double wire, boolean fuse,
      boolean overlap, int d, int t, StageTally tally, StageTally experts,
      CommModel expertComm) {
    /**
     * Whether these are the passes of these layers (the same objects, in order: a cost is
     * immutable, and comparing references keeps this cheaper than summing) under these settings.
     */
    boolean of(List<LayerCost> ls, double k, double w, boolean f, boolean o, int dp, int tp) {
      if (ls.size() != layers.size() || k != kept || w != wire || f != fuse || o != overlap
          || dp != d || tp != t) {
        return false;
      }
      for (int i = 0; i < ls.size(); i++) {
        if (ls.get(i) != layers.get(i)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The sizes of a three-axis logical mesh, outermost first.
   *
   * @param outer axis 0
   * @param middle axis 1
   * @param inner axis 2
   */
  private record MeshAxes(int outer, int middle, int inner) {}

  /**
   * Shards the model state of {@code s} over {@code d} GPUs by the ZeRO stage; the last gradient
   * bucket is found only for the stages that reduce by bucket.
   */
  private void shardState(StageTally s, CommModel comm, int d, int zeroStage,
      List<LayerCost> layers, boolean experts) {
    if (d > 1) {
      switch (zeroStage) {
        case 0 -> allReduceGradients(s, comm, d, lastBucket(layers, d, experts));
        case 1 -> shardOptimizer(s, comm, d, lastBucket(layers, d, experts), !experts);
        case 2 -> shardGradients(s, comm, d, layers);
        default -> shardAll(s, comm, d, layers);
      }
    }
  }

  /**
   * Collective prices on the mesh {@code (d / g) x g x TP} of a stage whose {@code d}
   * data-parallel GPUs per tensor rank are {@code d / g} replicas of {@code g}-GPU shard groups
   * of consecutive data-parallel ranks (torchtitan's {@code dp_replicate x dp_shard} mesh,
   * Megatron-Core's distributed-optimizer instances): axis 1 the shard group, axis 0 the
   * replicas.
   */
  private CommModel hybridComm(int d, int g, int t) {
    Require.nonNull(meshComm, "collective prices for the hybrid-sharded mesh");
    return meshes.computeIfAbsent(new MeshAxes(d / g, g, t), k -> meshComm.apply(
        io.meshplan.cluster.LogicalMesh.of(d / g, g, t)));
  }

  /** The context-parallel exchange of the stage's blocks, or null without it. */
  private static RingExchange ring(List<LayerCost> layers) {
    for (LayerCost l : layers) {
      if (l.ring().split()) {
        return l.ring();
      }
    }
    return null;
  }

  /**
   * Collective prices on the mesh {@code DP x CP x TP} of a stage whose {@code d} data-parallel
   * GPUs per tensor rank are {@code d / CP} replicas of {@code CP} context-parallel GPUs each
   * (Megatron-Core's rank order: tensor, then context, then data parallelism).
   */
  private CommModel contextComm(int d, int t, int cp) {
    Require.that(d % cp == 0, () -> "context parallelism " + cp + " must divide the stage's "
        + d + " data-parallel GPUs");
    Require.nonNull(meshComm, "collective prices for the context-parallel mesh");
    return meshes.computeIfAbsent(new MeshAxes(d / cp, cp, t), k -> meshComm.apply(
        io.meshplan.cluster.LogicalMesh.of(d / cp, cp, t)));
  }

  /**
   * Adds the context-parallel exchange of every block to its passes ({@link RingExchange}): the
   * ring moves the other {@code CP - 1} GPUs' keys and values, an all-gather's bytes over the CP
   * axis, under the attention kernels of the pass (forward once, backward the K/V again and their
   * gradients back, twice), with compute slowed while it runs ({@link Overlap#under}); the
   * all-gather form runs the same gather, and a reduce-scatter of the gradients, serially. Full
   * recomputation runs the forward's exchange again in the backward. Bytes count on the
   * data-parallel axis, which the CP group is carved from.
   */
  private static void ring(StageTally s, List<LayerCost> layers, CommModel comm) {
    for (LayerCost l : layers) {
      RingExchange r = l.ring();
      if (!r.split()) {
        continue;
      }
      int cp = r.contextParallel();
      if (r.headSwap()) {
        // Two all-to-alls of the mixer's tensors each way, forward and backward, serially.
        Overlap swap = Overlap.serial(0, comm.allToAll(r.kvBytes(), 1));
        s.addForward(swap);
        s.addBackward(swap);
        s.exchange += 2 * swap.exposedSeconds();
        for (int p = 1; p < r.passes(); p++) {
          s.addBackward(swap);
          s.exchange += swap.exposedSeconds();
        }
        s.contextBytesPerMicrobatch += BusBytesCommModel.bytesSent(Collective.ALL_TO_ALL,
            r.kvBytes(), cp) * (1 + r.passes());
        continue;
      }
      double whole = r.kvBytes() * cp;
      double gather = comm.allGather(whole, 1);
      Overlap f;
      Overlap b;
      if (r.allGather()) {
        f = Overlap.serial(0, gather);
        b = Overlap.serial(0, gather + comm.reduceScatter(whole, 1));
      } else {
        f = Overlap.under(r.attentionForwardSeconds(), gather);
        b = Overlap.under(r.attentionBackwardSeconds(), 2 * gather);
      }
      s.addForward(f);
      s.addBackward(b);
      s.exchange += f.exposedSeconds() + b.exposedSeconds();
      for (int p = 1; p < r.passes(); p++) {
        s.addBackward(f);
        s.exchange += f.exposedSeconds();
      }
      s.contextBytesPerMicrobatch += BusBytesCommModel.bytesSent(Collective.ALL_GATHER, whole,
          cp) * (2 + r.passes());
    }
  }

  /** The exchange of the stage's mixture-of-experts blocks, or null for a dense stage. */
  private static ExpertExchange routed(List<LayerCost> layers) {
    for (LayerCost l : layers) {
      if (l.experts().routed()) {
        return l.experts();
      }
    }
    return null;
  }

  /** The routed experts' weights one GPU holds over the stage's layers, elements. */
  private static double expertShare(List<LayerCost> layers) {
    double p = 0;
    for (LayerCost l : layers) {
      p += l.experts().expertParameters();
    }
    return p;
  }

  /**
   * Collective prices on the expert mesh {@code expert-DP x EP x ETP} of a stage of {@code d x t}
   * GPUs (Megatron-Core's expert rank order, ETP innermost), placed as the stage's mesh is.
   */
  private CommModel expertComm(int d, int t, ExpertExchange ex) {
    int ep = ex.expertParallel();
    int etp = ex.expertTensorParallel();
    long gpus = (long) d * t;
    Require.that(gpus % ((long) ep * etp) == 0, () -> "expert parallelism " + ep + " x expert "
        + "tensor parallelism " + etp + " must divide the stage's " + gpus + " GPUs");
    Require.nonNull(meshComm, "collective prices for the expert mesh");
    int edp = (int) (gpus / ((long) ep * etp));
    return meshes.computeIfAbsent(new MeshAxes(edp, ep, etp),
        k -> meshComm.apply(io.meshplan.cluster.LogicalMesh.of(edp, ep, etp)));
  }

  /**
   * Adds the expert-parallel exchange of every block of the stage to its passes, per microbatch
   * and serially (nothing hides it): each dispatch and each combine is an all-to-all of the
   * busiest GPU's buffer over the EP axis, with expert tensor parallelism an all-gather (after a
   * dispatch) or reduce-scatter (before a combine) of the {@code ETP} times larger received rows
   * over the ETP axis. The bytes count on the data-parallel axis: the expert-parallel group is
   * made of GPUs of different replicas.
   */
  private static void exchange(StageTally s, List<LayerCost> layers, PairPrices prices,
      boolean overlap) {
    // A stage repeats a layer in runs: each run is priced once, times its length, in order.
    for (int i = 0; i < layers.size(); ) {
      LayerCost l = layers.get(i);
      int n = 1;
      while (i + n < layers.size() && layers.get(i + n) == l) {
        n++;
      }
      i += n;
      ExpertExchange x = l.experts();
      if (!x.routed()) {
        continue;
      }
      double pair = prices.seconds(x);
      double fwd = pair * x.forwardExchanges() / 2;
      double bwd = pair * x.backwardExchanges() / 2;
      if (overlap) {
        exchangeUnder(s, l, fwd, bwd, n);
      } else {
        s.fwd += n * fwd;
        s.bwd += n * bwd;
        s.comm += n * (fwd + bwd);
        s.exchange += n * (fwd + bwd);
      }
      s.expertBytesPerMicrobatch += n * prices.bytes(x)
          * (x.forwardExchanges() + x.backwardExchanges()) / 2;
    }
  }

  /**
   * The seconds and bus bytes of one dispatch and its combine on a stage's expert mesh {@code
   * comm}: the expert-parallel exchange its dispatcher prices, then with expert tensor
   * parallelism an all-gather (after the dispatch) and a reduce-scatter (before the combine) of
   * the ETP times larger received rows over the ETP axis (2).
   */
  private sealed interface PairPrices permits AllToAllPair, DeduplicatedPair {
    /** The expert mesh's collective prices. */
    CommModel comm();

    /** The expert-parallel exchange alone, seconds. */
    double exchangeSeconds(ExpertExchange x);

    /** The bus bytes one GPU sends in {@link #exchangeSeconds}. */
    double exchangeBytes(ExpertExchange x);

    default double seconds(ExpertExchange x) {
      double b = x.exchangeBytes();
      int etp = x.expertTensorParallel();
      return exchangeSeconds(x)
          + (etp > 1 ? comm().allGather(b * etp, 2) + comm().reduceScatter(b * etp, 2) : 0);
    }

    default double bytes(ExpertExchange x) {
      double b = x.exchangeBytes();
      int etp = x.expertTensorParallel();
      return exchangeBytes(x)
          + (etp > 1 ? 2 * BusBytesCommModel.bytesSent(Collective.ALL_GATHER, b * etp, etp) : 0);
    }
  }

  /** NCCL's all-to-all dispatcher: two all-to-alls of the buffer over the EP axis (1). */
  private record AllToAllPair(CommModel comm) implements PairPrices {
    @Override
    public double exchangeSeconds(ExpertExchange x) {
      return 2 * comm.allToAll(x.exchangeBytes(), 1);
    }

    @Override
    public double exchangeBytes(ExpertExchange x) {
      return 2 * BusBytesCommModel.bytesSent(Collective.ALL_TO_ALL, x.exchangeBytes(),
          x.expertParallel());
    }
  }

  /**
   * DeepEP's or Hybrid-EP's dispatch and combine ({@link ExpertDispatchBandwidth}): each token
   * once per destination, {@code T U h b}, where {@code T h b = exchangeBytes / k} (the
   * all-to-all buffer holds {@code k} copies of each token) and {@code U} is the expected number
   * of distinct destinations among {@code parts} (nodes, or the GPUs of a group inside one node)
   * a token's experts fall in; out at the published dispatch bandwidth and back at the combine
   * bandwidth, bytes/s.
   */
  private record DeduplicatedPair(CommModel comm, int parts, double dispatch, double combine)
      implements PairPrices {
    @Override
    public double exchangeSeconds(ExpertExchange x) {
      double bytes = tokenBytes(x);
      return bytes / dispatch + bytes / combine;
    }

    @Override
    public double exchangeBytes(ExpertExchange x) {
      return 2 * tokenBytes(x);
    }

    private double tokenBytes(ExpertExchange x) {
      MoeShape moe = x.routing();
      Require.that(moe.routed(), "a deduplicating dispatcher needs the layer's routing");
      return x.exchangeBytes() / moe.topK() * moe.expectedParts(parts);
    }
  }

  /**
   * The prices of the stage's dispatches and combines under the overlaps' dispatcher, made once
   * per expert mesh: NCCL's all-to-alls, or DeepEP's or Hybrid-EP's kernels priced where the
   * expert-parallel axis lies on the cluster.
   */
  private PairPrices exchangePrices(CommModel comm) {
    ExpertDispatcher dispatcher = overlaps.dispatcher();
    if (!dispatcher.deduplicates()) {
      return new AllToAllPair(comm);
    }
    return pairs.computeIfAbsent(comm.mesh(), mesh -> {
      Require.nonNull(cluster, "the cluster, to price the " + dispatcher.word() + " dispatcher");
      AxisPlacement p = AxisPlacement.of(cluster, mesh, 1);
      int nodes = p.nodesSpanned();
      double fabric = cluster.nodeNetworkBandwidth() / p.groupsPerNode()
          / p.gpusPerNodeInGroup();
      boolean hybrid = dispatcher == ExpertDispatcher.HYBRIDEP;
      int ranks = mesh.size(1);
      return new DeduplicatedPair(comm, nodes == 1 ? ranks : nodes,
          ExpertDispatchBandwidth.of(hybrid, false, cluster, nodes, ranks, fabric),
          ExpertDispatchBandwidth.of(hybrid, true, cluster, nodes, ranks, fabric));
    });
  }

  /**
   * The exchange of one block under compute (Megatron-Core's {@code
   * --overlap-moe-expert-parallel-comm}). Its combined 1F1B runs the forward of one microbatch's
   * block beside the backward of another's in three steps, each a communication on one stream
   * beside compute on the other ({@code TransformerLayerSchedulePlan.run} in {@code
   * megatron/core/models/common/model_chunk_schedule_plan.py}, read at d98e8a6):
   * <ol>
   *   <li>the backward's combine beside the forward's compute before its dispatch (norms,
   *       attention, router);
   *   <li>the forward's and the backward's dispatch beside the experts' backward and forward
   *       compute ({@link ExpertExchange#expertBackwardSeconds}, {@link
   *       ExpertExchange#expertForwardSeconds});
   *   <li>the forward's combine beside the backward's compute before the experts (attention,
   *       norms and router backward).
   * </ol>
   * Each step is a window ({@link Overlap#under}): an all-to-all longer than the compute beside it
   * stays exposed even when the block's compute as a whole is longer. Each pass's all-to-alls
   * (and ETP gathers) are its dispatch and combine, of equal size. The first and last microbatches,
   * which have no partner, are not treated apart. {@code n} such blocks run in the stage, each
   * exchanging {@code fwd} and {@code bwd} seconds in its passes.
   */
  private static void exchangeUnder(StageTally s, LayerCost l, double fwd, double bwd, int n) {
    ExpertExchange x = l.experts();
    double fwdCompute = l.forwardComputeSeconds();
    double bwdCompute = l.backwardComputeSeconds();
    double expertFwd = Math.min(x.expertForwardSeconds(), fwdCompute);
    double expertBwd = Math.min(x.expertBackwardSeconds(), bwdCompute);
    Overlap combineBwd = Overlap.under(fwdCompute - expertFwd, bwd / 2);
    Overlap dispatches = Overlap.under(expertFwd + expertBwd, (fwd + bwd) / 2);
    Overlap combineFwd = Overlap.under(bwdCompute - expertBwd, fwd / 2);
    double share = fwd + bwd > 0 ? fwd / (fwd + bwd) : 0;
    s.fwd += n * (combineFwd.addedSeconds() + dispatches.addedSeconds() * share);
    s.bwd += n * (combineBwd.addedSeconds() + dispatches.addedSeconds() * (1 - share));
    for (Overlap o : new Overlap[] {combineBwd, dispatches, combineFwd}) {
      s.comm += n * o.exposedSeconds();
      s.hidden += n * o.hiddenSeconds();
      s.slowdown += n * o.slowdownSeconds();
      s.exchange += n * o.exposedSeconds();
    }
  }

  /** ZeRO stage 0: the gradients are all-reduced once per iteration. */
  private void allReduceGradients(StageTally s, CommModel comm, int d, double last) {
    s.gradSync = comm.allReduce(s.gradWire(), 0);
    s.gradSyncTail = Math.min(s.gradSync, comm.allReduce(share(s, last) * s.gradWire(), 0));
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, s.gradWire(), d);
  }

  /**
   * ZeRO stage 1: the optimizer state is sharded; gradients are reduce-scattered and updated
   * weights all-gathered once per iteration. With the parameter gather overlapped (Megatron-LM's
   * {@code --overlap-param-gather}), the gather runs under the next iteration's first forward
   * pass, bucket by bucket, except the first bucket's: Megatron-Core dispatches it in the forward
   * pre-hook of the first module that needs it and waits for it there ({@code
   * _ParamAndGradBucketGroup.finish_param_sync}, {@code param_and_grad_buffer.py} at
   * d98e8a64dd), so it runs before any forward compute. What the forward does not hide, and the
   * compute it slows, stays in the iteration.
   */
  private void shardOptimizer(StageTally s, CommModel comm, int d, double last,
      boolean leading) {
    s.gradSync = comm.reduceScatter(s.gradWire(), 0);
    double share = share(s, last);
    s.gradSyncTail = Math.min(s.gradSync, comm.reduceScatter(share * s.gradWire(), 0));
    double paramGather = comm.allGather(s.trainedWeights(), 0);
    if (overlaps.paramGather()) {
      double first = leading ? Math.min(paramGather, comm.allGather(share * s.trainedWeights(), 0))
          : 0;
      Overlap o = Overlap.serial(0, first).plus(Overlap.under(s.fwdCompute, paramGather - first));
      s.gather += o.addedSeconds();
      s.hiddenIteration += o.hiddenSeconds();
    } else {
      s.gather += paramGather;
    }
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.gradWire(), d)
        + BusBytesCommModel.bytesSent(Collective.ALL_GATHER, s.trainedWeights(), d);
    s.optimizer /= d;
    s.updated /= d;
  }

  /**
   * ZeRO stage 2: gradients and optimizer state are sharded, weights replicated; every
   * microbatch's backward reduce-scatters its gradients into this GPU's partition, and the updated
   * weights are all-gathered once per iteration. With the prefetch overlap on (DeepSpeed's {@code
   * overlap_comm}, FSDP's SHARD_GRAD_OP) each bucket's reduce-scatter runs under the backward of
   * the layers after it, and only the first layer's, the last of the backward, is exposed. The
   * gradient bucket of {@link #REDUCE_BUCKET_ELEMENTS} 16-bit elements is a temporary, two of them
   * with the overlap.
   *
   * @param layers the stage's layers
   */
  private void shardGradients(StageTally s, CommModel comm, int d, List<LayerCost> layers) {
    double scatter = comm.reduceScatter(s.gradWire(), 0);
    if (overlaps.fsdpPrefetch()) {
      double scatterFirst = s.gradParams > 0
          ? scatter * layers.get(0).gradientParameters() / s.gradParams : 0;
      s.shardBackward(Overlap.serial(0, scatterFirst).plus(
          Overlap.under(s.bwdCompute, Math.max(0, scatter - scatterFirst))));
    } else {
      s.shardBackward(Overlap.serial(0, scatter));
    }
    s.gather += comm.allGather(s.trainedWeights(), 0);
    s.dataBytesPerMicrobatch = BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER,
        s.gradWire(), d);
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_GATHER, s.trainedWeights(), d);
    s.grads /= d;
    s.optimizer /= d;
    s.updated /= d;
    // DeepSpeed allocates a second bucket when it overlaps the reduction (overlap_comm).
    s.temp += REDUCE_BUCKET_ELEMENTS * weightBytes * (overlaps.fsdpPrefetch() ? 2 : 1);
  }

  /**
   * ZeRO stage 3: weights, gradients and optimizer state are sharded; every microbatch gathers the
   * weights for its forward and again for its backward and reduce-scatters its gradients. With
   * FSDP's prefetch each layer's gather runs under the compute of the layer before it, and each
   * layer's reduce-scatter under the backward of the layers after it in backward order: only the
   * first layer's forward gather and its reduce-scatter, the last of the backward, are exposed
   * (the last block's weights stay gathered between its forward and backward, as torchtitan does
   * not reshard them after the forward).
   *
   * @param layers the stage's layers
   */
  private void shardAll(StageTally s, CommModel comm, int d, List<LayerCost> layers) {
    double gatherOnce = comm.allGather(s.weights, 0);
    double scatter = comm.reduceScatter(s.gradWire(), 0);
    gatherAndReduce(s, gatherOnce, scatter, layers);
    s.dataBytesPerMicrobatch = 2 * BusBytesCommModel.bytesSent(Collective.ALL_GATHER,
        s.weights, d) + BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.gradWire(), d);
    shardStateOver(s, d, layers);
  }

  /**
   * Every microbatch's ZeRO-3 passes: the weights gathered for the forward and again for the
   * backward, the gradients reduced after it. With FSDP's prefetch only the first layer's
   * gather and its reduction, the last of the backward, are exposed and the rest runs under the
   * pass's compute ({@link Overlap#under}); without it all is serial.
   *
   * @param gatherOnce one gather of all the stage's weights, seconds
   * @param reduce the reduction of all its gradients, seconds
   */
  private void gatherAndReduce(StageTally s, double gatherOnce, double reduce,
      List<LayerCost> layers) {
    if (overlaps.fsdpPrefetch()) {
      LayerCost first = layers.get(0);
      double gatherFirst = s.params > 0 ? gatherOnce * first.parameters() / s.params : 0;
      double reduceFirst = s.gradParams > 0
          ? reduce * first.gradientParameters() / s.gradParams : 0;
      s.shardForward(Overlap.serial(0, gatherFirst).plus(
          Overlap.under(s.fwdCompute, Math.max(0, gatherOnce - gatherFirst))));
      s.shardBackward(Overlap.serial(0, reduceFirst).plus(
          Overlap.under(s.bwdCompute, Math.max(0, gatherOnce + reduce - reduceFirst))));
    } else {
      s.shardForward(Overlap.serial(0, gatherOnce));
      s.shardBackward(Overlap.serial(0, gatherOnce + reduce));
    }
  }

  /** ZeRO-3's model state per GPU, sharded over {@code n} GPUs, and one layer gathered. */
  private void shardStateOver(StageTally s, int n, List<LayerCost> layers) {
    s.weights /= n;
    s.grads /= n;
    s.optimizer /= n;
    s.updated /= n;
    // FSDP keeps one layer's gathered weights at a time.
    s.temp += maxLayerWeights(layers) * weightBytes;
  }

  /**
   * Hybrid sharding (HSDP: Zhao et al., PyTorch FSDP, VLDB 2023, section 3.2.3): ZeRO-3 inside
   * each shard group of {@code g} GPUs (axis 1 of {@code comm}), the sharded state replicated
   * across the {@code d / g} groups (axis 0). Every microbatch gathers the weights over the group
   * for its forward and again for its backward, reduce-scatters its gradients over the group, and
   * all-reduces the group's shard of them, {@code 1/g} of the gradients, across the replicas:
   * FSDP2 reduces on every backward that syncs gradients, and torchtitan syncs on each
   * microbatch (it never turns gradient synchronisation off); Megatron-FSDP all-reduces across
   * the replicas on the last microbatch only ({@link Overlaps#hsdpStepReduce}). The passes
   * overlap as ZeRO-3's do ({@link #gatherAndReduce}); model state per GPU is {@code 1/g} of
   * the replica's.
   *
   * @param layers the stage's layers
   */
  private void shardHybrid(StageTally s, CommModel comm, int g, List<LayerCost> layers) {
    double gatherOnce = comm.allGather(s.weights, 1);
    double replicas = comm.allReduce(s.gradWire() / g, 0);
    boolean onceAStep = overlaps.hsdpStepReduce();
    // Megatron-FSDP: the replicas' all-reduce once per step, with the last microbatch's
    // reduce-scatters, timed as ZeRO-0's gradient reduction is (iterationTail).
    double reduce = comm.reduceScatter(s.gradWire(), 1) + (onceAStep ? 0 : replicas);
    int r = comm.mesh().size(0);
    if (onceAStep) {
      s.gradSync = replicas;
      s.dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, s.gradWire() / g, r);
    }
    gatherAndReduce(s, gatherOnce, reduce, layers);
    s.dataBytesPerMicrobatch = 2 * BusBytesCommModel.bytesSent(Collective.ALL_GATHER,
        s.weights, g) + BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.gradWire(), g)
        + (onceAStep ? 0 : BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, s.gradWire() / g,
            r));
    shardStateOver(s, g, layers);
  }

  /**
   * The once-per-iteration work of a stage that the pipeline does not hide: the gradient
   * reduction (beyond the last backward when the framework overlaps them), the gather of updated
   * weights and the optimizer step. Alpa's DP objective counts microbatch latencies only; spreading
   * this over the microbatches lets it tell apart options that differ here (a wider data-parallel
   * group, a sharded optimizer) while keeping the objective exact for a single stage.
   *
   * @param c the stage
   * @return seconds per iteration
   */
  public static double iterationTail(StageCost c) {
    // As the simulator runs it: the last bucket's reduction after the backward, the rest under it.
    double sync = c.gradSyncOverlappable()
        ? Overlap.under(c.backwardSeconds(), c.gradSyncSeconds() - c.gradSyncTailSeconds())
            .addedSeconds() + c.gradSyncTailSeconds()
        : c.gradSyncSeconds();
    return sync + c.paramGatherSeconds() + c.optimizerSeconds();
  }

  /**
   * The gradients of Megatron-Core's last bucket, elements per GPU: the buffer takes a stage's
   * parameters in reverse (backward) order and closes a bucket once it holds at least {@code
   * max(MIN_BUCKET_ELEMENTS, BUCKET_ELEMENTS_PER_GPU * d)} of them ({@code
   * _compute_default_per_buffer_param_layout}, {@code param_and_grad_buffer.py} at d98e8a64dd);
   * what is left when the stage's first parameters are reached is the last bucket, the one whose
   * gradients the backward computes last and whose reduction nothing after it hides (on the first
   * stage, the embedding's). meshplan closes buckets at its layers' bounds, where Megatron-Core
   * closes them at any parameter's. The dense parameters and the routed experts' are separate
   * buffers, each with its own last bucket.
   *
   * @param layers the stage's layers, in forward order
   * @param d the data-parallel GPUs the buffer reduces over
   * @param experts whether the buffer is the routed experts'
   * @return elements per GPU
   */
  static double lastBucket(List<LayerCost> layers, int d, boolean experts) {
    double size = Math.max(MIN_BUCKET_ELEMENTS, BUCKET_ELEMENTS_PER_GPU * d);
    double open = 0;
    double closed = 0;
    for (int i = layers.size() - 1; i >= 0; i--) {
      LayerCost l = layers.get(i);
      double routed = l.experts().expertParameters();
      open += experts ? routed : Math.max(0, l.gradientParameters() - routed);
      if (open >= size) {
        closed = open;
        open = 0;
      }
    }
    return open > 0 ? open : closed;
  }

  /** A bucket's share of the tally's gradients, in [0, 1]. */
  private static double share(StageTally s, double bucket) {
    return s.gradParams > 0 ? Math.min(1, bucket / s.gradParams) : 0;
  }

  private static double maxLayerWeights(List<LayerCost> layers) {
    double m = 0;
    for (LayerCost l : layers) {
      m = Math.max(m, l.parameters());
    }
    return m;
  }
}
