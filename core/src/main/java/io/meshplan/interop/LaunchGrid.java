package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelineLayout;
import io.meshplan.sim.MemoryFit;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The fastest Megatron-style configuration ({@link ParallelConfig}) that each of several runtimes
 * launches, from one pass over the configurations of the cluster: tensor-parallel sizes inside a
 * node, every pipeline size, the data-parallel size that fills the cluster, equal stages,
 * Megatron-Core's uneven first and last stages ({@link #stageSplits}) or else its layout of
 * near-equal chunks ({@link #layout}), the interleaved schedule
 * with every chunk count that splits the layers evenly, micro batches of 1, 2, 4 and 8 sequences,
 * each searched recomputation mode, sequence parallelism on and off, ZeRO stages 0 to 3, and the
 * context and expert layouts of {@link MegatronGrid}. A configuration the model or the cluster
 * refuses is skipped; each runtime keeps the configurations its launch check accepts ({@link
 * LaunchCheck#missing(ModelSpec, ParallelConfig, io.meshplan.model.Attention,
 * io.meshplan.model.Overlaps)}), so no runtime's rules are restated here.
 *
 * <p>Each configuration is simulated at most once, for every runtime that accepts it, in
 * ascending order of {@link Interleaver#bound}, a lower bound on its iteration; the pass stops
 * for a runtime once the bound passes the best iteration found for it, so each runtime gets the
 * fastest configuration that fits, as simulating them all would find. Ties keep the configuration
 * first in the enumeration order.
 *
 * <p>Where the search chooses between keeping and recomputing every block, each configuration
 * under full recomputation also stands for those recomputing only the first 1 to N - 1 blocks of
 * each chunk ({@code --recompute-num-layers}), a runtime's check judging them: one candidate,
 * bounded by the same configuration keeping every activation, whose fewest blocks that fit are
 * found by bisection when it is reached (recomputing a block more never needs more memory nor
 * takes less time), and skipped where that configuration fitted.
 */
final class LaunchGrid {
  private static final int[] MICRO = {1, 2, 4, 8};
  private static final int[] ZERO = {0, 1, 2, 3};

  private final LayerCostModel layers;
  private int simulations;

  /**
   * Creates the search.
   *
   * @param layers the layer prices
   */
  LaunchGrid(LayerCostModel layers) {
    this.layers = Require.nonNull(layers, "layers");
  }

  /**
   * What the pass found for one runtime.
   *
   * @param best its fastest configuration that fits, as a plan with its simulation
   * @param whyNone why it has none, when it has none
   */
  record Found(Optional<PlanSimulator.Evaluated> best, String whyNone) {}

  /**
   * A configuration with its pipeline, chunk costs, time bound and the runtimes that take it. With
   * {@code most > 0} it stands for the configurations recomputing the first 1 to {@code most}
   * blocks of each chunk (Megatron-Core's block method): its configuration is that of one block,
   * its costs and bound those of the same configuration keeping every activation (or, where that
   * was not priced, of one block), below all of theirs, and the fewest blocks that fit are found
   * when it is reached ({@link #partial}).
   */
  private record Candidate(ParallelConfig config, UniformPipeline pipeline, List<StageCost> costs,
      double bound, int index, boolean[] takers, int most) {}

  /**
   * Searches.
   *
   * @param req the model, cluster, global batch and prices
   * @param runtimes the runtimes
   * @return one result per runtime, in their order
   */
  List<Found> search(PlanRequest req, List<LaunchCheck> runtimes) {
    StageAssembler asm = new StageAssembler(req, layers);
    List<ParallelConfig> all = configurations(req);
    List<Map<String, Integer>> refusals = new ArrayList<>();
    for (int i = 0; i < runtimes.size(); i++) {
      refusals.add(new LinkedHashMap<>());
    }
    List<Candidate> candidates = new ArrayList<>();
    boolean partial = req.runtime().searchesPartialRecompute();
    Map<ParallelConfig, Candidate> keeping = new java.util.HashMap<>();
    for (ParallelConfig c : all) {
      List<ParallelConfig> forms = new ArrayList<>(List.of(c));
      int most = 0;
      if (partial && c.recompute() == Recompute.FULL) {
        most = FewestRecomputed.most(c.chunkLayers(req.model().layers()));
        if (most > 0) {
          forms.add(c.withRecomputeLayers(1));
        }
      }
      for (ParallelConfig f : forms) {
        boolean[] takers = takers(req, f, runtimes, refusals);
        if (takers == null) {
          continue;
        }
        UniformPipeline p = PlanSimulator.pipeline(req, f);
        // Recomputing blocks takes no less time than keeping every activation: the twin that
        // keeps them, where priced, bounds the partial counts.
        Candidate twin = f.recomputeLayers() > 0 ? keeping.get(f.withRecompute(Recompute.NONE))
            : null;
        if (twin != null) {
          candidates.add(new Candidate(f, p, twin.costs(), twin.bound(), candidates.size(),
              takers, most));
          continue;
        }
        List<StageCost> costs = p.costs(asm);
        if (costs != null) {
          Candidate added = new Candidate(f, p, costs,
              Interleaver.bound(costs, f.pipelineParallel(), f.microbatches()),
              candidates.size(), takers, f.recomputeLayers() > 0 ? most : 0);
          candidates.add(added);
          if (partial && f.recompute() == Recompute.NONE) {
            keeping.put(f, added);
          }
        }
      }
    }
    candidates.sort(Comparator.comparingDouble(Candidate::bound)
        .thenComparingInt(Candidate::index));
    Candidate[] best = new Candidate[runtimes.size()];
    SimulationResult[] bestSim = new SimulationResult[runtimes.size()];
    double[] leastPeak = new double[runtimes.size()];
    java.util.Arrays.fill(leastPeak, Double.POSITIVE_INFINITY);
    // The configurations keeping every activation that fitted.
    java.util.Set<ParallelConfig> keepingFits = new java.util.HashSet<>();
    for (Candidate found : candidates) {
      if (!wanted(found, best, bestSim)) {
        continue;
      }
      Candidate c = found;
      SimulationResult sim;
      if (found.most() > 0) {
        // Where keeping every activation fits, it is faster than recomputing any block.
        if (keepingFits.contains(found.config().withRecompute(Recompute.NONE))) {
          continue;
        }
        Optional<Simulated> fewest = partial(req, asm, found, leastPeak,
            beatable(found, best, bestSim));
        if (fewest.isEmpty()) {
          continue;
        }
        c = fewest.get().candidate();
        sim = fewest.get().simulation();
      } else {
        sim = simulate(asm, c);
      }
      boolean fits = MemoryFit.fits(sim.peakMemoryBytesPerGpu(), req.memoryPerGpu());
      if (partial && fits && c.config().recompute() == Recompute.NONE) {
        keepingFits.add(c.config());
      }
      for (int i = 0; i < runtimes.size(); i++) {
        if (!c.takers()[i]) {
          continue;
        }
        leastPeak[i] = Math.min(leastPeak[i], sim.peakMemoryBytesPerGpu());
        if (fits && (best[i] == null || better(sim, c, bestSim[i], best[i]))) {
          best[i] = c;
          bestSim[i] = sim;
        }
      }
    }
    List<Found> out = new ArrayList<>();
    for (int i = 0; i < runtimes.size(); i++) {
      out.add(best[i] != null ? found(req, asm, best[i], bestSim[i])
          : new Found(Optional.empty(), whyNone(req, all.isEmpty(), refusals.get(i),
              leastPeak[i])));
    }
    return out;
  }

  /** A candidate with its simulation. */
  private record Simulated(Candidate candidate, SimulationResult simulation) {}

  private SimulationResult simulate(StageAssembler asm, Candidate c) {
    simulations++;
    return c.pipeline().simulate(asm, c.costs(), c.config().globalBatchSize(),
        c.config().microbatches(), schedule(c.config()));
  }

  /**
   * The configuration of a partial-recomputation candidate that recomputes the fewest first
   * blocks of each chunk and fits, by bisection over 1 to {@code most} blocks, or to the largest
   * count not bounded above {@code beat} where that is fewer (more cannot beat any taker's
   * best): recomputing one block more never needs more memory and never takes less time, so it
   * is also the fastest that fits. Each configuration simulated counts its peak toward {@code
   * leastPeak} of the runtimes that take it.
   *
   * @return the configuration with its pipeline, costs and simulation, or empty when even the
   *     largest count tried does not fit, or one block is bounded above {@code beat}
   */
  private Optional<Simulated> partial(PlanRequest req, StageAssembler asm, Candidate c,
      double[] leastPeak, double beat) {
    // Counts bounded above every taker's best cannot beat it: the search stops short of them.
    java.util.function.IntPredicate beats = r -> {
      ParallelConfig config = c.config().withRecomputeLayers(r);
      List<StageCost> costs = PlanSimulator.pipeline(req, config).costs(asm);
      return costs != null && Interleaver.bound(costs, config.pipelineParallel(),
          config.microbatches()) <= beat + 1e-12;
    };
    if (!beats.test(1)) {
      return Optional.empty();
    }
    return FewestRecomputed.search(FewestRecomputed.last(c.most(), beats), r -> {
      ParallelConfig config = c.config().withRecomputeLayers(r);
      UniformPipeline p = PlanSimulator.pipeline(req, config);
      List<StageCost> costs = p.costs(asm);
      if (costs == null) {
        return Optional.empty();
      }
      Candidate at = new Candidate(config, p, costs, c.bound(), c.index(), c.takers(), 0);
      SimulationResult sim = simulate(asm, at);
      for (int i = 0; i < leastPeak.length; i++) {
        if (c.takers()[i]) {
          leastPeak[i] = Math.min(leastPeak[i], sim.peakMemoryBytesPerGpu());
        }
      }
      return MemoryFit.fits(sim.peakMemoryBytesPerGpu(), req.memoryPerGpu())
          ? Optional.of(new Simulated(at, sim)) : Optional.empty();
    });
  }


  /** A runtime's best configuration written out as a plan (only the winners are). */
  private static Found found(PlanRequest req, StageAssembler asm, Candidate b,
      SimulationResult sim) {
    return new Found(Optional.of(new PlanSimulator.Evaluated(b.pipeline().plan(req, asm,
        b.costs(), sim, b.config().globalBatchSize(), b.config().microbatches()), sim)), "");
  }

  /**
   * Simulations run so far.
   *
   * @return the count
   */
  int simulations() {
    return simulations;
  }

  /** Which runtimes take a configuration (null when none does); counts the others' reasons. */
  private static boolean[] takers(PlanRequest req, ParallelConfig c, List<LaunchCheck> runtimes,
      List<Map<String, Integer>> refusals) {
    boolean[] takers = new boolean[runtimes.size()];
    boolean any = false;
    for (int i = 0; i < runtimes.size(); i++) {
      Optional<String> why = runtimes.get(i).missing(req.model(), c, req.attention(),
          req.overlaps());
      if (why.isPresent()) {
        refusals.get(i).merge(why.get(), 1, Integer::sum);
      } else {
        takers[i] = true;
        any = true;
      }
    }
    return any ? takers : null;
  }

  /**
   * The iteration a candidate must not be bounded above to beat the best of some runtime that
   * takes it: the slowest such best, or infinity where one has none yet.
   */
  private static double beatable(Candidate c, Candidate[] best, SimulationResult[] bestSim) {
    double beat = 0;
    for (int i = 0; i < best.length; i++) {
      if (c.takers()[i]) {
        beat = Math.max(beat, best[i] == null ? Double.POSITIVE_INFINITY
            : bestSim[i].iterationSeconds());
      }
    }
    return beat;
  }

  /** Whether a candidate may still beat the best of some runtime that takes it. */
  private static boolean wanted(Candidate c, Candidate[] best, SimulationResult[] bestSim) {
    for (int i = 0; i < best.length; i++) {
      if (c.takers()[i] && (best[i] == null
          || c.bound() <= bestSim[i].iterationSeconds() + 1e-12)) {
        return true;
      }
    }
    return false;
  }

  /** The shorter iteration (more than 1e-12 s apart), then the earlier configuration. */
  private static boolean better(SimulationResult sim, Candidate c, SimulationResult bestSim,
      Candidate best) {
    double t = sim.iterationSeconds();
    double b = bestSim.iterationSeconds();
    return t < b - 1e-12 || (Math.abs(t - b) <= 1e-12 && c.index() < best.index());
  }

  private static Schedule schedule(ParallelConfig c) {
    return c.virtualStages() > 1 ? new Schedule.Interleaved(c.virtualStages())
        : new Schedule.OneFOneB();
  }

  /** Why a runtime has no configuration: none exists, it refuses all, or none fits. */
  private static String whyNone(PlanRequest req, boolean noneExists, Map<String, Integer> refused,
      double leastPeak) {
    ModelSpec m = req.model();
    if (noneExists) {
      return "no Megatron-style configuration of " + m.name() + " fits the "
          + req.cluster().gpuCount() + " GPUs of " + req.cluster().toShortString()
          + ": tensor x pipeline x data-parallel sizes must multiply to the GPUs, the pipeline"
          + " must split the " + m.layers() + " layers as Megatron-Core states, and micro batch x"
          + " data-parallel size must divide the global batch of " + req.globalBatch();
    }
    if (Double.isFinite(leastPeak)) {
      return "none of its configurations fits within " + Units.formatBytes(req.memoryPerGpu())
          + " per GPU; the least needs " + Units.formatBytes(leastPeak);
    }
    String most = "";
    int count = 0;
    for (Map.Entry<String, Integer> e : refused.entrySet()) {
      if (e.getValue() > count) {
        most = e.getKey();
        count = e.getValue();
      }
    }
    return most.isEmpty() ? "no configuration it launches can run the model's layers at these"
        + " sizes" : most;
  }

  /**
   * The first and last stages' layer counts a pipeline of {@code pp} stages may take: {0, 0} for
   * the even split when {@code pp} divides the layers, and for each middle share {@code m}, the
   * layers over the stages rounded down and up, the remaining {@code layers - (pp - 2) m} layers
   * split between the first and the last stage, the first taking the smaller half (it also holds
   * the embedding, as the last holds the LM head). Two stages state only the first.
   *
   * @param layers the model's layers
   * @param pp the pipeline size
   * @return {first, last} pairs, 0 where the stage takes the even share
   */
  static List<int[]> stageSplits(int layers, int pp) {
    List<int[]> out = new ArrayList<>();
    if (layers % pp == 0) {
      out.add(new int[] {0, 0});
    }
    if (pp == 2 && layers % 2 != 0) {
      out.add(new int[] {layers / 2, 0});
    }
    if (pp < 3) {
      return out;
    }
    for (int m : new int[] {layers / pp, (layers + pp - 1) / pp}) {
      long rest = layers - (long) (pp - 2) * m;
      if (m < 1 || rest < 2) {
        continue;
      }
      int first = (int) (rest / 2);
      int last = (int) (rest - first);
      boolean even = first == m && last == m;
      boolean seen = out.stream().anyMatch(s -> s[0] == first && s[1] == last);
      if (!even && !seen) {
        out.add(new int[] {first, last});
      }
    }
    return out;
  }

  /** The configurations the model and cluster accept, in enumeration order. */
  static List<ParallelConfig> configurations(PlanRequest req) {
    ModelSpec m = req.model();
    int gpus = req.cluster().gpuCount();
    int perNode = req.cluster().gpusPerNode();
    List<ParallelConfig> out = new ArrayList<>();
    for (int tp = 1; tp <= perNode; tp++) {
      if (perNode % tp != 0 || gpus % tp != 0 || m.heads() % tp != 0) {
        continue;
      }
      for (int pp = 1; pp <= m.layers() && (long) tp * pp <= gpus; pp++) {
        // Stages that would straddle nodes (96 GPUs on racks of 72, 25 on hosts of 4) are not
        // priced as they would run (UniformPipeline#checkNodes), nor can a plan file hold them.
        if (gpus % ((long) tp * pp) != 0 || !UniformPipeline.fitsNodes(gpus / pp, req.cluster())) {
          continue;
        }
        int dp = gpus / (tp * pp);
        for (int[] split : stageSplits(m.layers(), pp)) {
          boolean even = split[0] == 0 && split[1] == 0;
          for (int vpp = 1; (long) pp * vpp <= m.layers(); vpp++) {
            if (vpp > 1 && (!even || pp < 2 || m.layers() % (pp * vpp) != 0
                || !req.interleave())) {
              continue;
            }
            addSettings(req, out, new int[] {tp, pp, dp, vpp},
                c -> c.withStageLayers(split[0], split[1]));
          }
        }
        Optional<PipelineLayout> layout = layout(m.layers(), pp, m.arch().mtpDepth());
        if (layout.isPresent()) {
          addSettings(req, out, new int[] {tp, pp, dp, 1}, c -> c.withSplit(layout.get()));
        }
      }
    }
    return out;
  }

  /**
   * The layout of {@code pp} chunks as even as {@link UniformPipeline#evenChunks} makes them (the
   * extra layers on the chunks after the first), where neither the even split nor uneven first
   * and last stages give those counts: Megatron-Core's {@code --pipeline-model-parallel-layout}.
   *
   * @param layers the model's layers
   * @param pp the pipeline size
   * @param mtpDepth the model's multi-token prediction modules
   * @return the layout, or empty
   */
  static Optional<PipelineLayout> layout(int layers, int pp, int mtpDepth) {
    if (pp < 3 || pp > layers || layers % pp == 0) {
      return Optional.empty();
    }
    int[] chunks = UniformPipeline.evenChunks(layers, pp);
    for (int k = 2; k < pp - 1; k++) {
      if (chunks[k] != chunks[1]) {
        return Optional.of(PipelineLayout.of(chunks, mtpDepth));
      }
    }
    // The middle chunks are equal: uneven first and last stages state this split.
    return Optional.empty();
  }

  /**
   * Adds one shape's configurations: micro batch, recomputation, sequence parallelism, ZeRO.
   *
   * @param shape {tp, pp, dp, vpp}
   * @param split gives a configuration its split of the layers
   */
  private static void addSettings(PlanRequest req, List<ParallelConfig> out, int[] shape,
      java.util.function.UnaryOperator<ParallelConfig> split) {
    ModelSpec m = req.model();
    int tp = shape[0];
    int dp = shape[2];
    for (int mb : MICRO) {
      if (req.globalBatch() % mb != 0) {
        continue;
      }
      for (Recompute rc : req.runtime().searchedRecompute()) {
        for (boolean sp : tp > 1 ? new boolean[] {false, true} : new boolean[] {false}) {
          for (int zero : ZERO) {
            if (zero > 0 && dp == 1) {
              continue;
            }
            ParallelConfig base = split.apply(new ParallelConfig(tp, shape[1], dp, shape[3],
                mb, req.globalBatch(), rc, sp, zero));
            for (ParallelConfig c : MegatronGrid.expertAndContext(req, base)) {
              if (accepted(req, m, c)) {
                out.add(c);
              }
              for (int g : SearchRules.shardGroups(req, dp, tp, zero, c.contextParallel(),
                  c.expertParallel())) {
                ParallelConfig h = c.withShardGroup(g);
                if (accepted(req, m, h)) {
                  out.add(h);
                }
              }
            }
          }
        }
      }
    }
  }

  /** Whether the model and the cluster take a configuration, with a microbatch count asked. */
  private static boolean accepted(PlanRequest req, ModelSpec m, ParallelConfig c) {
    if (!io.meshplan.plan.BoundConfig.accepts(m, req.cluster(), c, m.dtype(), req.attention(),
        req.overlaps())) {
      return false;
    }
    try {
      SearchRules.checkMicrobatches(c.microbatches());
    } catch (InputException | IllegalArgumentException e) {
      // Not a configuration Megatron-Core accepts for this model and cluster.
      return false;
    }
    return req.fixedMicrobatches() == 0 || c.microbatches() == req.fixedMicrobatches();
  }
}
