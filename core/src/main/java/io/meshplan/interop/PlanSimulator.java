package io.meshplan.interop;

import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.PipelineSimulator;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Simulates a Megatron-LM configuration or a saved plan with the same layer prices the planner
 * uses, so that the two are comparable (Narayanan et al. SC'21: a configuration is tensor,
 * pipeline and data parallel sizes with column- then row-parallel layouts; here it is a plan whose
 * weight layouts are fixed to those).
 */
public final class PlanSimulator {
  private final LayerCostModel layers;

  /**
   * Creates the simulator.
   *
   * @param layers the layer prices
   */
  public PlanSimulator(LayerCostModel layers) {
    this.layers = Require.nonNull(layers, "layer cost model");
  }

  /**
   * Simulates a Megatron-LM configuration.
   *
   * @param req the model, cluster and prices (its batch and microbatch fields are ignored)
   * @param c the configuration, already checked against the model and cluster
   * @return the simulation, or empty when a layer cannot take Megatron's layouts at this size
   */
  public Optional<Evaluated> simulate(PlanRequest req, ParallelConfig c) {
    return simulate(req, c, false);
  }

  /**
   * Simulates a Megatron-LM configuration, optionally under the GPipe schedule (all forwards,
   * then all backwards; Huang et al. 2019) instead of 1F1B.
   *
   * @param req the model, cluster and prices
   * @param c the configuration, already checked against the model and cluster
   * @param gpipe whether to use GPipe (not with virtual stages)
   * @return the simulation, or empty when a layer cannot take Megatron's layouts at this size
   */
  public Optional<Evaluated> simulate(PlanRequest req, ParallelConfig c, boolean gpipe) {
    Require.that(!gpipe || c.virtualStages() == 1, "GPipe has no virtual stages");
    InterOpPlanner.checkMicrobatches(c.microbatches());
    ModelSpec model = req.model();
    int chunks = c.pipelineParallel() * c.virtualStages();
    int perChunk = model.layers() / chunks;
    int zero = c.dataParallel() > 1 ? c.zeroStage() : 0;
    LayerSetting ls = new LayerSetting(c.tensorParallel(), c.microBatchSize(), c.recompute(),
        c.sequenceParallel(), true);
    StageAssembler asm = new StageAssembler(req, layers);
    StageCostBuilder builder = asm.builder(c.dataParallel(), c.tensorParallel());
    List<StageCost> costs = new ArrayList<>();
    List<List<LayerCost>> stageLayers = new ArrayList<>();
    int[] firstDevice = new int[chunks];
    int groupDevices = c.dataParallel() * c.tensorParallel();
    for (int k = 0; k < chunks; k++) {
      List<LayerCost> ls2 = asm.stageLayers(ls, perChunk, k == 0, k == chunks - 1);
      if (ls2 == null) {
        return Optional.empty();
      }
      stageLayers.add(ls2);
      costs.add(builder.build(ls2, c.dataParallel(), c.tensorParallel(), zero, k == chunks - 1));
      firstDevice[k] = (k % c.pipelineParallel()) * groupDevices;
    }
    Schedule schedule = c.virtualStages() > 1 ? new Schedule.Interleaved(c.virtualStages())
        : gpipe ? new Schedule.GPipe() : new Schedule.OneFOneB();
    SimulationResult sim = asm.simulate(costs, firstDevice, c.globalBatchSize(),
        c.microbatches(), schedule);
    List<StagePlan> stages = new ArrayList<>();
    for (int g = 0; g < c.pipelineParallel(); g++) {
      double fwd = 0;
      double bwd = 0;
      for (int v = 0; v < c.virtualStages(); v++) {
        StageCost sc = costs.get(v * c.pipelineParallel() + g);
        fwd += sc.forwardSeconds();
        bwd += sc.backwardSeconds();
      }
      int first = g * perChunk;
      // A group of whole nodes is an n x M submesh; a smaller or unaligned one is one row.
      int gpn = req.cluster().gpusPerNode();
      int n = groupDevices % gpn == 0 ? groupDevices / gpn : 1;
      int m = groupDevices / n;
      stages.add(new StagePlan(first, first + perChunk - 1, n, m, g * groupDevices,
          c.dataParallel(), c.tensorParallel(), c.recompute(), c.sequenceParallel(), zero, true,
          fwd, bwd,
          sim.stages().get(g).memory().totalBytes(),
          InterOpPlanner.largestTensors(stageLayers.get(g)),
          Optional.of(InterOpPlanner.axisBytes(sim.stages().get(g).commBytesPerGpu()))));
    }
    PipelinePlan plan = c.virtualStages() == 1 ? new PipelinePlan(model,
        req.cluster().toShortString(), c.globalBatchSize(),
        c.microBatchSize() * c.dataParallel(), c.microbatches(), 1, stages,
        InterOpPlanner.prediction(sim)) : null;
    return Optional.of(new Evaluated(Optional.ofNullable(plan), sim));
  }

  /**
   * Simulates a saved plan again.
   *
   * @param req the model, cluster and prices
   * @param plan the plan
   * @return the simulation
   * @throws InputException when the plan does not fit the cluster or model
   */
  public SimulationResult simulate(PlanRequest req, PipelinePlan plan) {
    InterOpPlanner.checkMicrobatches(plan.microbatches());
    ModelSpec model = req.model();
    int L = model.layers();
    StageAssembler asm = new StageAssembler(req, layers);
    List<StageCost> costs = new ArrayList<>();
    int[] firstDevice = new int[plan.stages().size()];
    for (int i = 0; i < plan.stages().size(); i++) {
      StagePlan s = plan.stages().get(i);
      LayerSetting ls = new LayerSetting(s.tensorParallel(), plan.microBatchSize(s),
          s.recompute(), s.sequenceParallel(), s.megatronLayouts());
      List<LayerCost> list = asm.stageLayers(ls, s.layerCount(), s.firstLayer() == 0,
          s.lastLayer() == L - 1);
      if (list == null) {
        throw new InputException("stage " + i + " cannot run with tensor-parallel size "
            + s.tensorParallel());
      }
      StageCostBuilder b = asm.builder(s.dataParallel(), s.tensorParallel());
      costs.add(b.build(list, s.dataParallel(), s.tensorParallel(), s.zeroStage(),
          i == plan.stages().size() - 1));
      firstDevice[i] = s.firstDevice();
    }
    return asm.simulate(costs, firstDevice, plan.globalBatchSize(), plan.microbatches(),
        new Schedule.OneFOneB());
  }

  /**
   * A simulated configuration.
   *
   * @param plan the configuration as a plan (empty for the interleaved schedule, whose stages
   *     hold several model chunks and are not a plan of contiguous layer ranges)
   * @param simulation the simulation
   */
  public record Evaluated(Optional<PipelinePlan> plan, SimulationResult simulation) {}
}
