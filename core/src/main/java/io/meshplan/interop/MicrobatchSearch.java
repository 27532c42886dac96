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
import io.meshplan.model.Recompute;
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
    List<Integer> recomputed = new ArrayList<>();
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = table.settings.get(s.tag());
      int r = table.recomputed.get(s.tag());
      recomputed.add(r);
      List<LayerCost> ls = table.assembler.stageLayers(st.layer(), s.firstLayer(),
          s.lastLayer() - s.firstLayer() + 1, s.firstLayer() == 0, s.lastLayer() == last, r);
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
          st.layer().contextParallel(), st.layer().cpExchange(), st.shardGroup(),
          recomputed.get(i)));
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
    /**
     * Options by the stage's span, by reference (spans alike are one object and hold the same
     * layers), then by submesh.
     */
    private final Map<StageAssembler.Span, List<List<StageOption>>> memo =
        new java.util.IdentityHashMap<>();
    /** The layer settings by mesh ({@link #stageSettings}). */
    private final Map<Long, List<LayerSetting>> meshSettings = new HashMap<>();
    /** The ZeRO stages by data-parallel size ({@link SearchRules#zeroStages(PlanRequest, int)}). */
    private final Map<Integer, int[]> meshZeros = new HashMap<>();
    /** Each full-recomputation setting's twin keeping every activation ({@link #keeping}). */
    private final Map<LayerSetting, LayerSetting> twins = new java.util.IdentityHashMap<>();
    /** Whether the runtime searches partial recomputation ({@link #partialRecompute}). */
    private final boolean partialSearched;
    final List<StageSetting> settings = new ArrayList<>();
    /** Per option, beside its setting: the first blocks it recomputes, 0 for all or none. */
    final List<Integer> recomputed = new ArrayList<>();
    final StageAssembler assembler;

    Table(int microbatchSize) {
      this.microbatches = req.globalBatch() / microbatchSize;
      this.microbatchSize = microbatchSize;
      this.assembler = new StageAssembler(req, layers);
      this.partialSearched = req.runtime().searchesPartialRecompute();
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
      List<List<StageOption>> row = memo.computeIfAbsent(span,
          k -> new ArrayList<>(java.util.Collections.nCopies(submeshes(), null)));
      List<StageOption> options = row.get(submesh);
      if (options == null) {
        options = build(first, last, span.head(), space.shapes().get(submesh), span.embedding());
        row.set(submesh, options);
      }
      return options;
    }

    /**
     * The layer settings of a stage of {@code d} replicas of {@code t} GPUs ({@link
     * SearchRules#stageSettings}), found once per mesh: every block range asks again.
     */
    private List<LayerSetting> stageSettings(int d, int t) {
      return meshSettings.computeIfAbsent((long) d << 32 | t,
          k -> List.copyOf(SearchRules.stageSettings(req, d, t, microbatchSize)));
    }

    /**
     * The options of a stage, in order of latency, then static and activation memory; an option
     * no better than another in all three is dropped (the DP would never prefer it).
     */
    private List<StageOption> build(int first, int last, boolean head, SubmeshShape shape,
        boolean embedding) {
      List<StageOption> all = new ArrayList<>();
      int devices = shape.devices();
      boolean partial = partialRecompute(first, last);
      // For partial recomputation: the options by setting, and each tensor-parallel size's
      // builder.
      Map<Plain, StageOption> plain = new HashMap<>();
      Map<Integer, StageCostBuilder> builders = new HashMap<>();
      for (int t : SearchRules.tensorDegrees(req, devices)) {
        int d = devices / t;
        List<LayerSetting> lss = stageSettings(d, t);
        // Only a mesh some setting runs on is priced: its collectives' placement scans the mesh.
        StageCostBuilder builder = lss.isEmpty() ? null : assembler.builder(d, t);
        int[] zeros = meshZeros.computeIfAbsent(d, k -> SearchRules.zeroStages(req, d));
        for (LayerSetting ls : lss) {
          List<LayerCost> stageLayers = assembler.stageLayers(ls, first, last);
          if (stageLayers == null) {
            continue;
          }
          for (int zero : zeros) {
            List<StageSetting> sts = new ArrayList<>(List.of(new StageSetting(d, t, zero, ls)));
            for (int g : SearchRules.shardGroups(req, d, t, zero, ls.contextParallel(),
                ls.expertParallel())) {
              sts.add(new StageSetting(d, t, zero, ls, g));
            }
            for (StageSetting st : sts) {
              StageOption o = add(all, builder, stageLayers, st, head, 0);
              if (partial) {
                plain.put(new Plain(t, ls, zero, st.shardGroup()), o);
                builders.put(t, builder);
              }
            }
          }
        }
      }
      List<StageOption> kept = ParetoFilter.nonDominated(all);
      if (!partial) {
        return kept;
      }
      // Partial recomputation between each full-recomputation option the filter kept and its
      // twin that keeps every activation. Options the filter dropped are not widened, a
      // restriction of the search: their partial counts are not always dominated too.
      List<StageOption> widened = new ArrayList<>(kept);
      // The fastest kept option that fits each number in flight: a partial option no faster
      // than it at the one count it is made for is of no use to the DP.
      int most = Math.min(microbatches, req.model().layers() - last);
      double[] fastest = new double[most + 1];
      java.util.Arrays.fill(fastest, Double.POSITIVE_INFINITY);
      for (StageOption o : kept) {
        for (int n = 1; n <= most && o.memoryBytes(n) <= req.memoryPerGpu(); n++) {
          fastest[n] = Math.min(fastest[n], o.latencySeconds());
        }
      }
      for (StageOption full : kept) {
        StageSetting st = settings.get(full.tag());
        if (st.layer().recompute() != Recompute.FULL) {
          continue;
        }
        StageOption none = plain.get(new Plain(st.tensorParallel(), keeping(st), st.zeroStage(),
            st.shardGroup()));
        if (none != null) {
          addPartial(widened, builders.get(st.tensorParallel()), st, first, last, embedding,
              head, none, full, fastest);
        }
      }
      return widened.size() == kept.size() ? kept : ParetoFilter.nonDominated(widened);
    }

    /**
     * The setting of the same mesh keeping every activation that a setting recomputing every
     * block is the twin of: the very object {@link #stageSettings} lists, found by value once.
     */
    private LayerSetting keeping(StageSetting st) {
      return twins.computeIfAbsent(st.layer(), ls -> {
        LayerSetting none = ls.withRecompute(Recompute.NONE);
        List<LayerSetting> listed = stageSettings(st.dataParallel(), st.tensorParallel());
        int i = listed.indexOf(none);
        return i >= 0 ? listed.get(i) : none;
      });
    }

    /**
     * A stage option's setting as {@link #build} looks its twin up: the tensor-parallel size
     * (which, with the stage's GPUs, gives its mesh), the layer setting by reference (each is one
     * object of {@link #stageSettings}), the ZeRO stage and the shard group.
     *
     * @param tensor the tensor-parallel size
     * @param layer the layer setting
     * @param zero the ZeRO stage
     * @param group the shard group, 0 for none
     */
    private record Plain(int tensor, LayerSetting layer, int zero, int group) {
      @Override
      public boolean equals(Object o) {
        return o instanceof Plain p && p.tensor == tensor && p.layer == layer && p.zero == zero
            && p.group == group;
      }

      @Override
      public int hashCode() {
        return ((System.identityHashCode(layer) * 31 + tensor) * 31 + zero) * 31 + group;
      }
    }

    /**
     * Whether a stage of these blocks may recompute its first blocks only: the search chooses
     * between keeping and recomputing every block ({@link Recompute#NONE} and {@link
     * Recompute#FULL} both searched), and the stage has two blocks or more.
     */
    private boolean partialRecompute(int first, int last) {
      return last > first && partialSearched;
    }

    /**
     * Adds, for each number of microbatches in flight at which the stage keeping every block's
     * activations ({@code none}) does not fit and recomputing every block ({@code full}) does,
     * the stage recomputing its fewest first blocks that fits then (Megatron-Core's block
     * method), unless it would be no faster than the fastest option that fits then ({@code
     * fastest}, by count in flight). Recomputing one block more never needs more memory and never
     * takes less time, so the fewest blocks that fit is the fastest such stage. A stage followed by
     * {@code s - 1} others holds {@code min(s, microbatches)} microbatches in flight, and at most
     * {@code layers - last} stages can follow from it on.
     */
    private void addPartial(List<StageOption> all, StageCostBuilder builder, StageSetting st,
        int first, int last, boolean embedding, boolean head, StageOption none,
        StageOption full, double[] fastest) {
      double cap = req.memoryPerGpu();
      int blocks = last - first + 1;
      int most = fastest.length - 1;
      Map<Integer, StageOption> built = new HashMap<>();
      java.util.function.IntFunction<StageOption> at = r -> built.computeIfAbsent(r,
          k -> partialOption(builder, st, first, blocks, embedding, head, k));
      int lo = 1;
      for (int s = 1; s <= most; s++) {
        if (none.memoryBytes(s) <= cap) {
          continue;
        }
        if (full.memoryBytes(s) > cap) {
          break;
        }
        if (none.latencySeconds() >= fastest[s]) {
          // Even keeping every activation would be no faster than what fits already.
          continue;
        }
        StageOption previous = built.get(lo);
        if (previous != null && fits(previous, s, cap)) {
          // The count found for fewer in flight fits this many too, and no fewer can.
          continue;
        }
        // The fewest blocks that fit s in flight, from the guess that each block recomputed
        // frees an equal share of the difference between keeping all and recomputing all;
        // more in flight need at least as many, so the search starts from the last count.
        double share = (none.activationBytes() - full.activationBytes()) / blocks;
        double over = none.memoryBytes(s) - cap;
        int r = Math.max(lo, Math.min(blocks - 1,
            share > 0 ? (int) Math.ceil(over / (s * share)) : blocks - 1));
        while (r < blocks && !fits(at.apply(r), s, cap)) {
          r++;
        }
        while (r > lo && fits(at.apply(r - 1), s, cap)) {
          r--;
        }
        if (r >= blocks) {
          break;
        }
        lo = r;
        StageOption o = at.apply(r);
        if (o.latencySeconds() < fastest[s] && !all.contains(o)) {
          all.add(o);
        }
      }
    }

    private static boolean fits(StageOption o, int inFlight, double cap) {
      return o != null && o.memoryBytes(inFlight) <= cap;
    }

    /** The stage recomputing its first {@code r} blocks, as an option not yet in the list. */
    private StageOption partialOption(StageCostBuilder builder, StageSetting st, int first,
        int blocks, boolean embedding, boolean head, int r) {
      List<LayerCost> layers = assembler.stageLayers(st.layer(), first, blocks, embedding, head,
          r);
      return layers == null ? null : add(null, builder, layers, st, head, r);
    }

    /**
     * Prices one setting of a stage, recomputing its first {@code recomputedBlocks} blocks or,
     * with 0, as its setting says, and adds it as an option to {@code all} unless that is null.
     */
    private StageOption add(List<StageOption> all, StageCostBuilder builder,
        List<LayerCost> stageLayers, StageSetting st, boolean head, int recomputedBlocks) {
      StageCost c = builder.build(stageLayers, st.dataParallel(), st.tensorParallel(),
          st.zeroStage(), st.shardGroup(), st.layer().sequenceParallel(), head);
      int tag = settings.size();
      settings.add(st);
      recomputed.add(recomputedBlocks);
      StageOption o = new StageOption(c.forwardSeconds() + c.backwardSeconds()
              + StageCostBuilder.iterationTail(c) / microbatches,
          c.memory().weightsBytes() + c.memory().gradientsBytes()
              + c.memory().optimizerStateBytes() + c.memory().temporaryBytes(),
          c.memory().activationBytesPerMicrobatch(), tag);
      if (all != null) {
        all.add(o);
      }
      return o;
    }
  }

}
