package io.meshplan.interop.cost;

import io.meshplan.sim.Overlap;
import io.meshplan.sim.StageCost;
import java.util.List;

/**
 * A stage's figures on one GPU as the build goes: first its layers' sums for one replica, then
 * with the data-parallel work of its ZeRO stage. Units as in {@link StageCost}.
 */
final class StageTally implements Cloneable {
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
  /** The part of {@code gradSync} that reduces the last bucket of gradients, seconds. */
  double gradSyncTail;
  double dataBytes;
  double dataBytesPerMicrobatch;
  /** Bytes of the expert-parallel exchange of one microbatch. */
  double expertBytesPerMicrobatch;
  /** Bytes of the context-parallel exchange of one microbatch. */
  double contextBytesPerMicrobatch;
  /** Forward and backward compute alone, without communication, seconds per microbatch. */
  double fwdCompute;
  double bwdCompute;
  double hidden;
  double slowdown;
  double hiddenIteration;
  double params;
  double gradParams;
  /** The part of {@code params} no gradient updates (a LoRA base), storage elements. */
  double frozen;
  /** The expert-parallel exchange inside {@code comm}, seconds per microbatch. */
  double exchange;
  /** ZeRO-2/3's per-microbatch data-parallel work inside {@code comm}, seconds. */
  double shard;
  private int weightBytes;
  private io.meshplan.model.OptimizerState state;
  private double keptGradBytes;
  private double wireGradBytes;

  private StageTally() {
  }

  /**
   * A copy to build on, leaving this one as it is.
   *
   * @return the copy
   */
  StageTally copy() {
    try {
      return (StageTally) super.clone();
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Moves the model state of {@code expertParams} weights (held whole by each GPU of the
   * replica, with their gradients) out of this tally into a new one, which the compute windows
   * are shared with.
   */
  StageTally split(double expertParams) {
    StageTally e = new StageTally();
    e.weightBytes = weightBytes;
    e.state = state;
    e.keptGradBytes = keptGradBytes;
    e.wireGradBytes = wireGradBytes;
    e.params = expertParams;
    e.gradParams = expertParams;
    e.state();
    e.fwdCompute = fwdCompute;
    e.bwdCompute = bwdCompute;
    params -= e.params;
    gradParams -= e.gradParams;
    weights -= e.weights;
    grads -= e.grads;
    optimizer -= e.optimizer;
    updated -= e.updated;
    return e;
  }

  /** Adds the model state and data-parallel work of another part of the stage. */
  void merge(StageTally e) {
    params += e.params;
    gradParams += e.gradParams;
    frozen += e.frozen;
    weights += e.weights;
    grads += e.grads;
    optimizer += e.optimizer;
    updated += e.updated;
    gradSync += e.gradSync;
    gradSyncTail += e.gradSyncTail;
    gather += e.gather;
    dataBytes += e.dataBytes;
    dataBytesPerMicrobatch += e.dataBytesPerMicrobatch;
    expertBytesPerMicrobatch += e.expertBytesPerMicrobatch;
    contextBytesPerMicrobatch += e.contextBytesPerMicrobatch;
    fwd += e.fwd;
    bwd += e.bwd;
    comm += e.comm;
    hidden += e.hidden;
    slowdown += e.slowdown;
    hiddenIteration += e.hiddenIteration;
    temp += e.temp;
    shard += e.shard;
  }

  /**
   * The layers' sums (the largest temporary), with unsharded model state.
   *
   * @param weightBytes bytes of a weight
   * @param state the optimizer state's precision
   * @param keptGradBytes bytes of a kept gradient (4, or 2 in Megatron-LM's bf16 buffer or
   *     under bf16 optimizer state)
   * @param wireGradBytes bytes of a gradient as the data-parallel reduction moves it
   * @param fuse whether the gradient accumulation is fused into the weight-gradient GEMMs
   * @param overlapTensor whether each layer's tensor-parallel communication runs under its
   *     compute, pass by pass
   */
  StageTally(List<LayerCost> layers, int weightBytes, io.meshplan.model.OptimizerState state,
      double keptGradBytes, double wireGradBytes, boolean fuse, boolean overlapTensor) {
    this.weightBytes = weightBytes;
    this.state = state;
    this.keptGradBytes = keptGradBytes;
    this.wireGradBytes = wireGradBytes;
    for (LayerCost l : layers) {
      tensorBytes += l.tensorCommBytes();
      tensorGatherBytes += l.updateGatherBytes();
      addPasses(l, fuse, overlapTensor);
      params += l.parameters();
      gradParams += l.gradientParameters();
      frozen += l.frozenParameters();
      gather += l.updateGatherSeconds();
      saved += l.savedActivationBytes();
      temp = Math.max(temp, l.temporaryBytes());
      flops += l.modelFlops();
      hw += l.hardwareFlops();
    }
    state();
  }

  /**
   * The unsharded model state of {@code params} weights and {@code gradParams} gradients: the
   * weights in the compute type, fp32 gradients (bf16 in Megatron-LM's buffer when it reduces
   * in bf16), and Adam's fp32 master and moments (the master is the weight itself in fp32
   * training); under bf16 optimizer state bf16 gradients and moments, and no master.
   */
  private void state() {
    weights = params * weightBytes;
    grads = gradParams * keptGradBytes;
    optimizer = gradParams * state.stateBytes(weightBytes);
    updated = gradParams;
  }

  /**
   * Adds a layer's forward and backward: serial, or with its tensor-parallel communication
   * under the same pass's compute ({@link Overlap#under}); without the separate gradient
   * accumulation when it is fused.
   */
  private void addPasses(LayerCost l, boolean fuse, boolean overlapTensor) {
    double acc = fuse ? l.accumulateSeconds() : 0;
    double fComm = l.forwardCommSeconds();
    double bComm = l.tensorCommSeconds() - fComm;
    double fK = l.forwardComputeSeconds();
    double bK = Math.max(0, l.backwardComputeSeconds() - acc);
    fwdCompute += fK;
    bwdCompute += bK;
    rec += l.recomputeSeconds();
    if (!overlapTensor) {
      fwd += l.forwardSeconds();
      bwd += l.backwardSeconds() - acc;
      comm += l.tensorCommSeconds();
      return;
    }
    Overlap f = Overlap.under(fK, fComm);
    Overlap b = Overlap.under(bK, Math.max(0, bComm));
    fwd += f.seconds();
    bwd += b.seconds();
    comm += f.exposedSeconds() + b.exposedSeconds();
    hidden += f.hiddenSeconds() + b.hiddenSeconds();
    slowdown += f.slowdownSeconds() + b.slowdownSeconds();
  }

  /**
   * The bytes of the trained weights, in the compute type: what a sharded optimizer gathers after
   * its update. Frozen weights (a LoRA base) are not in the optimizer's buffers: Megatron-Core's
   * {@code DistributedDataParallel} builds its parameter and gradient buffers from the parameters
   * that require gradients only ({@code megatron/core/distributed/distributed_data_parallel.py}
   * lines 175-181, d98e8a6: "Collect all trainable parameters"), so its distributed optimizer
   * gathers the adapters of a LoRA run and not its base.
   *
   * @return bytes
   */
  double trainedWeights() {
    return Math.max(0, params - frozen) * weightBytes;
  }

  /** The bytes a reduction of this tally's whole gradients moves. */
  double gradWire() {
    return gradParams * wireGradBytes;
  }

  /** Adds a window of data-parallel communication to a pass: its exposed part and slowdown. */
  void addForward(Overlap o) {
    fwd += o.addedSeconds();
    count(o);
  }

  void addBackward(Overlap o) {
    bwd += o.addedSeconds();
    count(o);
  }

  private void count(Overlap o) {
    comm += o.exposedSeconds();
    hidden += o.hiddenSeconds();
    slowdown += o.slowdownSeconds();
  }

  /** Adds a window of per-microbatch data-parallel work (ZeRO-2/3) to the forward pass. */
  void shardForward(Overlap o) {
    addForward(o);
    shard += o.exposedSeconds();
  }

  /** Adds a window of per-microbatch data-parallel work (ZeRO-2/3) to the backward pass. */
  void shardBackward(Overlap o) {
    addBackward(o);
    shard += o.exposedSeconds();
  }
}
