package io.meshplan.sim;

import java.util.ArrayList;
import java.util.List;

/** Builds stage costs for tests. */
final class Stages {
  private Stages() {}

  /** One GPU, no communication, no memory, FLOPs 0: only the times. */
  static StageCost times(double forward, double backward) {
    return builder(forward, backward).build();
  }

  static Builder builder(double forward, double backward) {
    return new Builder(forward, backward);
  }

  static List<StageCost> repeat(StageCost s, int n) {
    List<StageCost> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(s);
    }
    return list;
  }

  static SimulationInput input(List<StageCost> stages, Schedule schedule, int microbatches,
      P2pCost p2p) {
    int gpus = 0;
    int groups = stages.size() / schedule.chunks();
    for (int g = 0; g < groups; g++) {
      gpus += stages.get(g).devices();
    }
    return new SimulationInput(stages, schedule, microbatches, p2p, gpus, 1e15, 1024);
  }

  static SimulationResult run(List<StageCost> stages, Schedule schedule, int microbatches,
      P2pCost p2p) {
    return new PipelineSimulator(input(stages, schedule, microbatches, p2p)).simulate();
  }

  static final class Builder {
    private final double forward;
    private final double backward;
    private int dp = 1;
    private int tp = 1;
    private double recompute;
    private double tensorComm;
    private double shard;
    private double sendBytes;
    private double gradSync;
    private boolean overlap;
    private double gather;
    private double optimizer;
    private double modelFlops;
    private double hardwareFlops;
    private MemoryBreakdown memory = new MemoryBreakdown(0, 0, 0, 0, 0);

    Builder(double forward, double backward) {
      this.forward = forward;
      this.backward = backward;
    }

    Builder parallel(int dataParallel, int tensorParallel) {
      this.dp = dataParallel;
      this.tp = tensorParallel;
      return this;
    }

    Builder recompute(double s) {
      this.recompute = s;
      return this;
    }

    Builder tensorComm(double s) {
      this.tensorComm = s;
      return this;
    }

    /** Of the tensor communication, the part that is ZeRO-2/3's per-microbatch work. */
    Builder shard(double s) {
      this.shard = s;
      return this;
    }

    Builder send(double bytes) {
      this.sendBytes = bytes;
      return this;
    }

    Builder gradSync(double s, boolean overlappable) {
      this.gradSync = s;
      this.overlap = overlappable;
      return this;
    }

    /** Of the gradient reduction, the last bucket's, which the backward cannot hide. */
    Builder gradSyncTail(double s) {
      this.gradSyncTail = s;
      return this;
    }

    Builder gather(double s) {
      this.gather = s;
      return this;
    }

    Builder optimizer(double s) {
      this.optimizer = s;
      return this;
    }

    Builder flops(double model, double hardware) {
      this.modelFlops = model;
      this.hardwareFlops = hardware;
      return this;
    }

    private StageCommBytes commBytes = StageCommBytes.NONE;
    private double gradSyncTail;

    Builder memory(MemoryBreakdown m) {
      this.memory = m;
      return this;
    }

    Builder commBytes(StageCommBytes b) {
      this.commBytes = b;
      return this;
    }

    StageCost build() {
      return new StageCost(dp * tp, dp, tp, forward, backward, recompute, tensorComm, sendBytes,
          gradSync, overlap, gather, optimizer, modelFlops, hardwareFlops, memory, commBytes,
          HiddenComm.NONE, 0, shard, gradSyncTail);
    }
  }
}
