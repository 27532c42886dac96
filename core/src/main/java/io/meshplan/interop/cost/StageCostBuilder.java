package io.meshplan.interop.cost;

import io.meshplan.cluster.BusBytesCommModel;
import io.meshplan.cluster.Collective;
import io.meshplan.sim.StageCommBytes;
import io.meshplan.cluster.CommModel;
import io.meshplan.sim.MemoryBreakdown;
import io.meshplan.sim.StageCost;
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
 * the kernel model.
 */
public final class StageCostBuilder {
  /** Bytes of Adam's memory traffic per updated parameter in mixed precision. */
  public static final double ADAM_BYTES_PER_PARAMETER = 30.0;

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

  private final CommModel stageComm;
  private final double hbmBytesPerSecond;
  private final int weightBytes;
  private final boolean overlapGradSync;

  /**
   * Creates the builder.
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
    this.overlapGradSync = overlapGradSync;
    this.stageComm = Require.nonNull(stageComm, "stage communication model");
    Require.that(hbmBytesPerSecond > 0, "HBM bandwidth must be > 0");
    this.hbmBytesPerSecond = hbmBytesPerSecond;
    Require.that(weightBytes == 2 || weightBytes == 4, "weights are 2 or 4 bytes");
    this.weightBytes = weightBytes;
  }

  /**
   * Builds a stage.
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
    Require.that(!layers.isEmpty(), "a stage needs at least one layer");
    Require.that(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage must be 0, 1, 2 or 3");
    Tally s = new Tally(layers, weightBytes);
    int d = dataParallel;
    if (d > 1) {
      switch (zeroStage) {
        case 0 -> allReduceGradients(s, d);
        case 1 -> shardOptimizer(s, d);
        case 2 -> shardGradients(s, d);
        default -> shardAll(s, d, maxLayerWeights(layers));
      }
    }
    double optimizerSeconds = s.updated * ADAM_BYTES_PER_PARAMETER / hbmBytesPerSecond;
    double send = lastStage ? 0 : layers.get(layers.size() - 1).boundaryBytes();
    return new StageCost(d * tensorParallel, d, tensorParallel, s.fwd, s.bwd, s.rec, s.comm, send,
        s.gradSync, overlapGradSync, s.gather, optimizerSeconds, s.flops, s.hw,
        new MemoryBreakdown(s.weights, s.grads, s.optimizer, s.saved, s.temp),
        new StageCommBytes(s.tensorBytes, s.tensorGatherBytes, s.dataBytesPerMicrobatch,
            s.dataBytes));
  }

  /**
   * A stage's figures on one GPU as the build goes: first its layers' sums for one replica, then
   * with the data-parallel work of its ZeRO stage. Units as in {@link StageCost}.
   */
  private static final class Tally {
    double fwd;
    double bwd;
    double rec;
    double comm;
    double gather;
    double saved;
    double temp;
    double flops;
    double hw;
    double tensorBytes;
    double tensorGatherBytes;
    double weights;
    double grads;
    double optimizer;
    double updated;
    double gradSync;
    double dataBytes;
    double dataBytesPerMicrobatch;

    /** The layers' sums (the largest temporary), with unsharded model state. */
    Tally(List<LayerCost> layers, int weightBytes) {
      double params = 0;
      double gradParams = 0;
      for (LayerCost l : layers) {
        tensorBytes += l.tensorCommBytes();
        tensorGatherBytes += l.updateGatherBytes();
        fwd += l.forwardSeconds();
        bwd += l.backwardSeconds();
        rec += l.recomputeSeconds();
        comm += l.tensorCommSeconds();
        params += l.parameters();
        gradParams += l.gradientParameters();
        gather += l.updateGatherSeconds();
        saved += l.savedActivationBytes();
        temp = Math.max(temp, l.temporaryBytes());
        flops += l.modelFlops();
        hw += l.hardwareFlops();
      }
      double masterBytes = weightBytes == 4 ? 8.0 : 12.0;
      weights = params * weightBytes;
      grads = gradParams * 4.0;
      optimizer = gradParams * masterBytes;
      updated = gradParams;
    }
  }

  /** ZeRO stage 0: the gradients are all-reduced once per iteration. */
  private void allReduceGradients(Tally s, int d) {
    s.gradSync = stageComm.allReduce(s.grads, 0);
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, s.grads, d);
  }

  /**
   * ZeRO stage 1: the optimizer state is sharded; gradients are reduce-scattered and updated
   * weights all-gathered once per iteration.
   */
  private void shardOptimizer(Tally s, int d) {
    s.gradSync = stageComm.reduceScatter(s.grads, 0);
    s.gather += stageComm.allGather(s.weights, 0);
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.grads, d)
        + BusBytesCommModel.bytesSent(Collective.ALL_GATHER, s.weights, d);
    s.optimizer /= d;
    s.updated /= d;
  }

  /**
   * ZeRO stage 2: gradients and optimizer state are sharded, weights replicated; every
   * microbatch's backward reduce-scatters its gradients into this GPU's partition (serial with
   * the backward here), and the updated weights are all-gathered once per iteration. The
   * gradient bucket of {@link #REDUCE_BUCKET_ELEMENTS} 16-bit elements is a temporary.
   */
  private void shardGradients(Tally s, int d) {
    double scatter = stageComm.reduceScatter(s.grads, 0);
    s.bwd += scatter;
    s.comm += scatter;
    s.gather += stageComm.allGather(s.weights, 0);
    s.dataBytesPerMicrobatch = BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.grads, d);
    s.dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_GATHER, s.weights, d);
    s.grads /= d;
    s.optimizer /= d;
    s.updated /= d;
    s.temp += REDUCE_BUCKET_ELEMENTS * weightBytes;
  }

  /**
   * ZeRO stage 3: weights, gradients and optimizer state are sharded; every microbatch gathers the
   * weights for its forward and again for its backward and reduce-scatters its gradients.
   *
   * @param maxLayerParameters the most weights of one layer on one GPU, elements
   */
  private void shardAll(Tally s, int d, double maxLayerParameters) {
    double gatherOnce = stageComm.allGather(s.weights, 0);
    double scatter = stageComm.reduceScatter(s.grads, 0);
    s.fwd += gatherOnce;
    s.bwd += gatherOnce + scatter;
    s.comm += 2 * gatherOnce + scatter;
    s.dataBytesPerMicrobatch = 2 * BusBytesCommModel.bytesSent(Collective.ALL_GATHER,
        s.weights, d) + BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, s.grads, d);
    s.weights /= d;
    s.grads /= d;
    s.optimizer /= d;
    s.updated /= d;
    // FSDP keeps one layer's gathered weights at a time.
    s.temp += maxLayerParameters * weightBytes;
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
    double sync = c.gradSyncOverlappable() ? Math.max(0, c.gradSyncSeconds() - c.backwardSeconds())
        : c.gradSyncSeconds();
    return sync + c.paramGatherSeconds() + c.optimizerSeconds();
  }

  private static double maxLayerWeights(List<LayerCost> layers) {
    double m = 0;
    for (LayerCost l : layers) {
      m = Math.max(m, l.parameters());
    }
    return m;
  }
}
