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
 *   <li>stage 3 (FSDP): weights, gradients and optimizer state sharded; every microbatch
 *       all-gathers the weights for its forward and again for its backward and reduce-scatters
 *       its gradients.
 * </ul>
 * Communication volume per GPU (nccl-tests bus bytes, see {@link BusBytesCommModel}) on the
 * data-parallel axis of {@code d} GPUs, with {@code G} the fp32 gradient bytes and {@code W} the
 * 16-bit weight bytes of one replica's GPU: stage 0 all-reduces {@code 2(d-1)/d * G} per iteration;
 * stage 1 reduce-scatters {@code (d-1)/d * G} and all-gathers {@code (d-1)/d * W} per iteration;
 * stage 3 sends {@code 2 * (d-1)/d * W + (d-1)/d * G} per microbatch.
 * The optimizer step streams 30 bytes per parameter it updates (reads gradient, master weight and
 * both moments, 16 bytes; writes master, moments and the 16-bit copy, 14 bytes) at the HBM rate of
 * the kernel model.
 */
public final class StageCostBuilder {
  /** Bytes of Adam's memory traffic per updated parameter in mixed precision. */
  public static final double ADAM_BYTES_PER_PARAMETER = 30.0;

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
   * @param zeroStage 0, 1 or 3, as in the class comment
   * @param lastStage whether this is the pipeline's last stage (it sends nothing on)
   * @return the stage cost
   */
  public StageCost build(List<LayerCost> layers, int dataParallel, int tensorParallel,
      int zeroStage, boolean lastStage) {
    Require.that(!layers.isEmpty(), "a stage needs at least one layer");
    Require.that(zeroStage == 0 || zeroStage == 1 || zeroStage == 3, "ZeRO stage must be 0, 1 or 3");
    double fwd = 0;
    double bwd = 0;
    double rec = 0;
    double comm = 0;
    double params = 0;
    double gradParams = 0;
    double tensorGather = 0;
    double saved = 0;
    double temp = 0;
    double flops = 0;
    double hw = 0;
    double tensorBytes = 0;
    double tensorGatherBytes = 0;
    for (LayerCost l : layers) {
      tensorBytes += l.tensorCommBytes();
      tensorGatherBytes += l.updateGatherBytes();
      fwd += l.forwardSeconds();
      bwd += l.backwardSeconds();
      rec += l.recomputeSeconds();
      comm += l.tensorCommSeconds();
      params += l.parameters();
      gradParams += l.gradientParameters();
      tensorGather += l.updateGatherSeconds();
      saved += l.savedActivationBytes();
      temp = Math.max(temp, l.temporaryBytes());
      flops += l.modelFlops();
      hw += l.hardwareFlops();
    }
    int d = dataParallel;
    double masterBytes = weightBytes == 4 ? 8.0 : 12.0;
    double weights = params * weightBytes;
    double grads = gradParams * 4.0;
    double optimizer = gradParams * masterBytes;
    double gradSync = 0;
    double gather = tensorGather;
    double updated = gradParams;
    double dataBytes = 0;
    double dataBytesPerMicrobatch = 0;
    if (d > 1) {
      switch (zeroStage) {
        case 0 -> {
          gradSync = stageComm.allReduce(grads, 0);
          dataBytes = BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, grads, d);
        }
        case 1 -> {
          gradSync = stageComm.reduceScatter(grads, 0);
          gather += stageComm.allGather(weights, 0);
          dataBytes = BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, grads, d)
              + BusBytesCommModel.bytesSent(Collective.ALL_GATHER, weights, d);
          optimizer /= d;
          updated /= d;
        }
        default -> {
          double gatherOnce = stageComm.allGather(weights, 0);
          double scatter = stageComm.reduceScatter(grads, 0);
          fwd += gatherOnce;
          bwd += gatherOnce + scatter;
          comm += 2 * gatherOnce + scatter;
          dataBytesPerMicrobatch = 2 * BusBytesCommModel.bytesSent(Collective.ALL_GATHER,
              weights, d) + BusBytesCommModel.bytesSent(Collective.REDUCE_SCATTER, grads, d);
          weights /= d;
          grads /= d;
          optimizer /= d;
          updated /= d;
          // FSDP keeps one layer's gathered weights at a time.
          temp += maxLayerWeights(layers) * weightBytes;
        }
      }
    }
    double optimizerSeconds = updated * ADAM_BYTES_PER_PARAMETER / hbmBytesPerSecond;
    double send = lastStage ? 0 : layers.get(layers.size() - 1).boundaryBytes();
    return new StageCost(d * tensorParallel, d, tensorParallel, fwd, bwd, rec, comm, send,
        gradSync, overlapGradSync, gather, optimizerSeconds, flops, hw,
        new MemoryBreakdown(weights, grads, optimizer, saved,
            temp),
        new StageCommBytes(tensorBytes, tensorGatherBytes, dataBytesPerMicrobatch, dataBytes));
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
