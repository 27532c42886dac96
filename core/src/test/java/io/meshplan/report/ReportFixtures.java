package io.meshplan.report;

import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.MemoryBreakdown;
import io.meshplan.sim.P2pCost;
import io.meshplan.sim.PipelineSimulator;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationInput;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCommBytes;
import io.meshplan.sim.StageCost;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A real simulation (the simulator run on hand-made stage costs) and the plan that goes with it:
 * gpt-1.7b's 24 layers in 4 stages of 6 on a 2 x 8 cluster, each stage a 1 x 4 submesh with a
 * 2 x 2 logical mesh.
 */
final class ReportFixtures {
  static final double GIB = 1024.0 * 1024 * 1024;
  static final int STAGES = 4;

  private ReportFixtures() {}

  static SimulationResult simulate(int microbatches) {
    List<StageCost> costs = new ArrayList<>();
    for (int s = 0; s < STAGES; s++) {
      // Stage s holds (s + 1) GiB of weights; activations 0.5 GiB per microbatch.
      MemoryBreakdown m = new MemoryBreakdown((s + 1) * GIB, (s + 1) * GIB, 6 * (s + 1) * GIB,
          0.5 * GIB, 0.25 * GIB);
      costs.add(new StageCost(4, 2, 2, 0.010 + 0.001 * s, 0.020, 0.0, 0.002, 64e6, 0.015, true,
          0.0, 0.003, 1e13, 1e13, m,
          // Per GPU: 1 GiB tensor-parallel per microbatch, 2 GiB data-parallel per iteration.
          new StageCommBytes(GIB, 0, 0, 2 * GIB)));
    }
    SimulationInput in = new SimulationInput(costs, new Schedule.OneFOneB(), microbatches,
        P2pCost.alphaBeta(5e-6, 25e9), 16, 312e12, 2048.0 * 2 * microbatches);
    return new PipelineSimulator(in).simulate();
  }

  static PipelinePlan plan(String modelName, SimulationResult sim, int microbatches) {
    ModelSpec p = Presets.get("gpt-1.7b");
    ModelSpec m = new ModelSpec(modelName, p.family(), p.layers(), p.hidden(), p.heads(),
        p.kvHeads(), p.ffn(), p.vocab(), p.seq(), p.batch(), p.dtype(), p.arch());
    List<StagePlan> stages = new ArrayList<>();
    int per = m.layers() / STAGES;
    for (int s = 0; s < STAGES; s++) {
      List<TensorSharding> t = List.of(
          new TensorSharding("layer_0/attention/wq", "bf16[2304,2304]", "{devices=[1,2,2]<=[4]"
              + " last_tile_dim_replicate}", "column-parallel over 2 GPUs"),
          new TensorSharding("layer_0/feed_forward/w2 <&\"'>", "bf16[9216,2304]",
              "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "row-parallel over 2 GPUs"));
      stages.add(new StagePlan(s * per, s * per + per - 1, 1, 4, 4 * s, 2, 2, Recompute.NONE,
          false, 0, false, 0.010, 0.020, sim.stages().get(s).memory().totalBytes(), t));
    }
    PipelinePlan.Prediction pred = new PipelinePlan.Prediction(sim.iterationSeconds(),
        sim.tokensPerSecond(), sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu());
    return new PipelinePlan(m, "2x8:a100-80gb", 2 * microbatches, 2, microbatches, 1, stages,
        pred);
  }

  static ReportInput input(String modelName, int microbatches, boolean compare) {
    SimulationResult sim = simulate(microbatches);
    ReportSide main = new ReportSide("test plan of " + modelName,
        Optional.of(plan(modelName, sim, microbatches)), sim);
    Optional<ReportSide> other = Optional.empty();
    if (compare) {
      SimulationResult sim2 = simulate(2 * microbatches);
      other = Optional.of(new ReportSide("twice the microbatches",
          Optional.of(plan(modelName, sim2, 2 * microbatches)), sim2));
    }
    return new ReportInput(main, other, new ReportSide.Cluster(2, 8, 80 * GIB));
  }
}
