package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.cost.StageCostBuilder;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
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
   * @throws InputException when a stage would cross a node it does not fill ({@link
   *     UniformPipeline#checkNodes})
   */
  public Optional<Evaluated> simulate(PlanRequest req, ParallelConfig c, boolean gpipe) {
    Require.that(!gpipe || c.virtualStages() == 1, "GPipe has no virtual stages");
    SearchRules.checkMicrobatches(c.microbatches());
    UniformPipeline.checkNodes(c.gpus() / c.pipelineParallel(), c.pipelineParallel(),
        req.cluster());
    StageAssembler asm = new StageAssembler(req, layers);
    UniformPipeline pipeline = pipeline(req, c);
    List<StageCost> costs = pipeline.costs(asm);
    if (costs == null) {
      return Optional.empty();
    }
    Schedule schedule = c.virtualStages() > 1 ? new Schedule.Interleaved(c.virtualStages())
        : gpipe ? new Schedule.GPipe() : new Schedule.OneFOneB();
    return Optional.of(pipeline.evaluate(req, asm, costs, c.globalBatchSize(), c.microbatches(),
        schedule));
  }

  /**
   * The pipeline of a Megatron-LM configuration: its stages' devices, setting (Megatron-LM's
   * layouts) and chunks.
   *
   * @param req the model, cluster and prices
   * @param c the configuration, already checked against the model and cluster
   * @return the pipeline
   */
  static UniformPipeline pipeline(PlanRequest req, ParallelConfig c) {
    int chunks = c.pipelineParallel() * c.virtualStages();
    // The stages' data-parallel group is data x context-parallel GPUs: ZeRO shards over it.
    int zero = (long) c.dataParallel() * c.contextParallel() > 1 ? c.zeroStage() : 0;
    LayerSetting ls = new LayerSetting(c.tensorParallel(), c.microBatchSize(), c.recompute(),
        c.sequenceParallel(), true, c.expertParallel(), c.expertTensorParallel(),
        c.contextParallel(), c.cpExchange(), c.recomputeModules());
    return new UniformPipeline(c.pipelineParallel(), c.dataParallel(),
        c.tensorParallel(), ls, zero, c.unevenStages() ? c.chunkLayers(req.model().layers())
            : UniformPipeline.evenChunks(req.model().layers(), chunks))
        .withShardGroup(c.shardGroup()).withRecomputeLayers(c.recomputeLayers());
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
    SearchRules.checkMicrobatches(plan.microbatches());
    ModelSpec model = req.model();
    int L = model.layers();
    StageAssembler asm = new StageAssembler(req, layers);
    List<StageCost> costs = new ArrayList<>();
    int[] firstDevice = new int[plan.stages().size()];
    for (int i = 0; i < plan.stages().size(); i++) {
      StagePlan s = plan.stages().get(i);
      LayerSetting ls = new LayerSetting(s.tensorParallel(), plan.microBatchSize(s),
          s.recompute(), s.sequenceParallel(), s.megatronLayouts(), s.expertParallel(),
          s.expertTensorParallel(), s.contextParallel(), s.cpExchange());
      List<LayerCost> list = asm.stageLayers(ls, s.firstLayer(), s.layerCount(), i == 0,
          i == plan.stages().size() - 1, s.recomputeLayers());
      if (list == null) {
        throw new InputException("stage " + i + " cannot run with tensor-parallel size "
            + s.tensorParallel());
      }
      int dpCp = s.dataParallel() * s.contextParallel();
      StageCostBuilder b = asm.builder(dpCp, s.tensorParallel());
      costs.add(b.build(list, dpCp, s.tensorParallel(), s.zeroStage(), s.shardGroup(),
          s.sequenceParallel(), i == plan.stages().size() - 1));
      firstDevice[i] = s.firstDevice();
    }
    return asm.simulate(costs, firstDevice, plan.globalBatchSize(), plan.microbatches(),
        plan.virtualStages() > 1 ? new Schedule.Interleaved(plan.virtualStages())
            : new Schedule.OneFOneB());
  }

  /**
   * A simulated configuration.
   *
   * @param plan the configuration as a plan (with the interleaved schedule, its stages are the
   *     model chunks)
   * @param simulation the simulation
   */
  public record Evaluated(PipelinePlan plan, SimulationResult simulation) {}
}
