package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.cost.StageCostBuilder;
import io.meshplan.interop.dp.GroupedStageCostTable;
import io.meshplan.interop.dp.PackedStageDp;
import io.meshplan.interop.dp.ParetoFilter;
import io.meshplan.interop.dp.Stage;
import io.meshplan.interop.dp.StageCostTable;
import io.meshplan.interop.dp.StageDpProblem;
import io.meshplan.interop.dp.StageDpResult;
import io.meshplan.interop.dp.StageOption;
import io.meshplan.interop.dp.StagePartition;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.StageSetting;
import io.meshplan.interop.space.SubmeshPlacement;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The search of one microbatch size, the unit of work of {@link InterOpPlanner}'s tasks: the stage
 * cost table of that size built from planned layers, the {@link PackedStageDp} over it and the
 * 1F1B simulation of its partition placed on the nodes ({@link #oneFOneB}), or the {@link
 * Interleaver}'s search for an interleaved pipeline that beats a given iteration ({@link
 * #interleaved}).
 */
final class MicrobatchSearch {
  private final PlanRequest req;
  private final LayerCostModel layers;
  private final SearchSpace space;

  /**
   * Creates the search.
   *
   * @param req the request
   * @param layers prices layers
   */
  MicrobatchSearch(PlanRequest req, LayerCostModel layers) {
    this.req = Require.nonNull(req, "request");
    this.layers = Require.nonNull(layers, "layer cost model");
    this.space = SearchSpace.of(req);
  }

  /**
   * Plans the size with the stage DP and simulates its 1F1B pipeline.
   *
   * @param g sequences per microbatch
   * @return the plan, or the least memory per GPU a partition needed
   */
  MicrobatchOutcome oneFOneB(int g) {
    ClusterSpec cluster = req.cluster();
    Table table = new Table(g);
    GroupedStageCostTable grouped = new GroupedStageCostTable(table, space.group());
    StageDpResult r = PackedStageDp.solve(new StageDpProblem(space.shapes(), cluster.nodes(),
        cluster.gpusPerNode(), grouped, req.memoryPerGpu(), req.globalBatch() / g));
    if (r instanceof StageDpResult.Feasible f) {
      return MicrobatchOutcome.planned(g, toPlan(table, grouped.ungroup(f.plan()), g), 1);
    }
    StageDpResult.Infeasible inf = (StageDpResult.Infeasible) r;
    return MicrobatchOutcome.without(g, inf.minimumMemoryBytes().orElse(Double.NaN), "", false,
        0);
  }

  /**
   * The fastest interleaved pipeline of the size that fits and beats an iteration time.
   *
   * @param g sequences per microbatch
   * @param beatSeconds the iteration to beat, seconds
   * @return the plan, or an outcome without one when none beats it
   */
  MicrobatchOutcome interleaved(int g, double beatSeconds) {
    Interleaver search = new Interleaver(req, new StageAssembler(req, layers), space.shapes(), g);
    Optional<PlanSimulator.Evaluated> e = search.best(beatSeconds, false);
    return e.map(x -> MicrobatchOutcome.planned(g, new PlanResult.Planned(x.plan(),
            x.simulation(), PlanResult.SearchStats.NONE), search.simulations()))
        .orElse(MicrobatchOutcome.without(g, Double.NaN, "", false, search.simulations()));
  }

  private PlanResult.Planned toPlan(Table table, StagePartition dp, int g) {
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    List<StageCost> costs = new ArrayList<>();
    List<StageSetting> settings = new ArrayList<>();
    List<List<LayerCost>> stageLayers = new ArrayList<>();
    // PackedStageDp returns only partitions that can be placed.
    int[] firstDevice = SubmeshPlacement.place(PackedStageDp.submeshes(dp), cluster.nodes(),
        cluster.gpusPerNode()).orElseThrow();
    int last = model.layers() - 1;
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = table.settings.get(s.tag());
      List<LayerCost> ls = table.assembler.stageLayers(st.layer(), s.firstLayer(),
          s.lastLayer());
      costs.add(table.assembler.builder(st.dataParallel(), st.tensorParallel()).build(ls,
          st.dataParallel(), st.tensorParallel(), st.zeroStage(), st.shardGroup(),
          st.layer().sequenceParallel(), s.lastLayer() == last));
      settings.add(st);
      stageLayers.add(ls);
    }
    int b = req.globalBatch() / g;
    SimulationResult sim = table.assembler.simulate(costs, firstDevice, req.globalBatch(), b,
        new Schedule.OneFOneB());
    List<StagePlan> stages = new ArrayList<>();
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = settings.get(i);
      StageCost c = costs.get(i);
      stages.add(new StagePlan(s.firstLayer(), s.lastLayer(), s.submesh().n(), s.submesh().m(),
          firstDevice[i], st.dataParallel() / st.layer().contextParallel(), st.tensorParallel(),
          st.layer().recompute(),
          st.layer().sequenceParallel(), st.zeroStage(), st.layer().megatron(),
          c.forwardSeconds(), c.backwardSeconds(),
          sim.stages().get(i).memory().totalBytes(), PlanFigures.largestTensors(stageLayers.get(i)),
          Optional.of(StageAssembler.axisBytes(sim.stages().get(i).commBytesPerGpu())),
          st.layer().expertParallel(), st.layer().expertTensorParallel(),
          st.layer().contextParallel(), st.layer().cpExchange(), st.shardGroup()));
    }
    PipelinePlan plan = new PipelinePlan(PlanSource.Preset.of(model, req.attention(), req.overlaps(),
        req.pricing().attentionKernel()),
        cluster.toShortString(), req.globalBatch(), g, b,
        1, stages, StageAssembler.prediction(sim));
    return new PlanResult.Planned(plan, sim, PlanResult.SearchStats.NONE);
  }

  /** The stage cost table of one microbatch size, built on demand and remembered. */
  private final class Table implements StageCostTable {
    private final int microbatchSize;
    private final int microbatches;
    /** Options by the stage's span and submesh: spans alike hold the same layers. */
    private final Map<List<Object>, List<StageOption>> memo = new HashMap<>();
    final List<StageSetting> settings = new ArrayList<>();
    final StageAssembler assembler;

    Table(int microbatchSize) {
      this.microbatches = req.globalBatch() / microbatchSize;
      this.microbatchSize = microbatchSize;
      this.assembler = new StageAssembler(req, layers);
    }

    @Override
    public int layers() {
      return req.model().layers();
    }

    @Override
    public int submeshes() {
      return space.shapes().size();
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      StageAssembler.Span span = assembler.span(first, last);
      SubmeshShape shape = space.shapes().get(submesh);
      return memo.computeIfAbsent(List.of(span, submesh),
          k -> build(first, last, span.head(), shape));
    }

    /**
     * The options of a stage, in order of latency, then static and activation memory; an option
     * no better than another in all three is dropped (the DP would never prefer it).
     */
    private List<StageOption> build(int first, int last, boolean head, SubmeshShape shape) {
      List<StageOption> all = new ArrayList<>();
      int devices = shape.devices();
      for (int t : SearchRules.tensorDegrees(req, devices)) {
        int d = devices / t;
        List<LayerSetting> lss = SearchRules.stageSettings(req, d, t, microbatchSize);
        // Only a mesh some setting runs on is priced: its collectives' placement scans the mesh.
        StageCostBuilder builder = lss.isEmpty() ? null : assembler.builder(d, t);
        for (LayerSetting ls : lss) {
          List<LayerCost> stageLayers = assembler.stageLayers(ls, first, last);
          if (stageLayers == null) {
            continue;
          }
          for (int zero : SearchRules.zeroStages(req, d)) {
            add(all, builder, stageLayers, new StageSetting(d, t, zero, ls), head);
            for (int g : SearchRules.shardGroups(req, d, t, zero, ls.contextParallel(),
                ls.expertParallel())) {
              add(all, builder, stageLayers, new StageSetting(d, t, zero, ls, g), head);
            }
          }
        }
      }
      return ParetoFilter.nonDominated(all);
    }

    /** Prices one setting of a stage and adds it as an option. */
    private void add(List<StageOption> all, StageCostBuilder builder,
        List<LayerCost> stageLayers, StageSetting st, boolean head) {
      StageCost c = builder.build(stageLayers, st.dataParallel(), st.tensorParallel(),
          st.zeroStage(), st.shardGroup(), st.layer().sequenceParallel(), head);
      int tag = settings.size();
      settings.add(st);
      all.add(new StageOption(c.forwardSeconds() + c.backwardSeconds()
              + StageCostBuilder.iterationTail(c) / microbatches,
          c.memory().weightsBytes() + c.memory().gradientsBytes()
              + c.memory().optimizerStateBytes() + c.memory().temporaryBytes(),
          c.memory().activationBytesPerMicrobatch(), tag));
    }
  }

}
