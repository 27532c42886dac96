package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.sim.MemoryFit;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * The best Megatron-LM configuration by exhaustive search over a grid, each point simulated with
 * the planner's own layer prices: tensor-parallel sizes inside a node that divide the heads,
 * pipeline sizes that divide the layers, the data-parallel size that fills the cluster, 1F1B or
 * the interleaved schedule with every number of model chunks per stage that divides the layers
 * evenly (Megatron-LM's {@code --num-layers-per-virtual-pipeline-stage}; the microbatches must be a
 * multiple of the pipeline size; not when the request allows 1F1B only), micro batches of 1, 2, 4
 * and 8 sequences, each recomputation mode (and under full recomputation the fewest first blocks
 * of each chunk that fit, {@code --recompute-num-layers}, where keeping every activation does
 * not), sequence parallelism on and off, and the distributed optimizer on and off. A point whose
 * stages would cross a node they do not fill ({@link UniformPipeline#checkNodes}) or whose peak
 * memory exceeds the GPU's is skipped. Ties go to the earlier point in that order.
 */
public final class MegatronGrid {
  private static final int[] MICRO = {1, 2, 4, 8};

  private final LayerCostModel layers;

  /**
   * Creates the search.
   *
   * @param layers the layer prices
   */
  public MegatronGrid(LayerCostModel layers) {
    this.layers = Require.nonNull(layers, "layers");
  }

  /**
   * A simulated grid point.
   *
   * @param config the configuration
   * @param evaluated its simulation
   */
  public record Point(ParallelConfig config, PlanSimulator.Evaluated evaluated) {}

  /**
   * Searches the grid.
   *
   * @param req the model, cluster, global batch and prices
   * @return the fastest configuration that fits, or empty when none does
   */
  public Optional<Point> best(PlanRequest req) {
    return search(req).best();
  }

  /**
   * What the grid search found.
   *
   * @param best the fastest configuration that fits, or empty when none does
   * @param leastPeakBytesPerGpu the smallest peak memory per GPU of any simulated configuration,
   *     bytes ({@code NaN} when none could be simulated): what a GPU would need for the grid to
   *     have a point that fits
   */
  public record Search(Optional<Point> best, double leastPeakBytesPerGpu) {}

  /**
   * Searches the grid and also reports the least memory any configuration needs.
   *
   * @param req the model, cluster, global batch and prices
   * @return the search's outcome
   */
  public Search search(PlanRequest req) {
    double[] leastPeak = {Double.NaN};
    PlanSimulator sim = new PlanSimulator(layers);
    Point best = null;
    boolean partial = req.runtime().searchesPartialRecompute();
    // The configurations keeping every activation that fit: where one does, recomputing some of
    // its blocks is no faster.
    java.util.Set<ParallelConfig> keepingFits = new java.util.HashSet<>();
    for (ParallelConfig c : configurations(req)) {
      Optional<Point> p = point(req, sim, c, leastPeak);
      if (p.isPresent() && c.recompute() == Recompute.NONE) {
        keepingFits.add(c);
      }
      if (partial && c.recompute() == Recompute.FULL && !keepingFits.contains(
          c.withRecompute(Recompute.NONE))) {
        Optional<Point> fewest = fewestRecomputed(req, sim, c, leastPeak);
        if (fewest.isPresent() && (p.isEmpty() || seconds(fewest.get()) < seconds(p.get()))) {
          p = fewest;
        }
      }
      if (p.isPresent() && (best == null || seconds(p.get()) < seconds(best))) {
        best = p.get();
      }
    }
    return new Search(Optional.ofNullable(best), leastPeak[0]);
  }

  private static double seconds(Point p) {
    return p.evaluated().simulation().iterationSeconds();
  }

  /** A configuration simulated, where it fits; its peak counts toward {@code leastPeak[0]}. */
  private static Optional<Point> point(PlanRequest req, PlanSimulator sim, ParallelConfig c,
      double[] leastPeak) {
    Optional<PlanSimulator.Evaluated> e = sim.simulate(req, c);
    if (e.isPresent() && !(e.get().simulation().peakMemoryBytesPerGpu() >= leastPeak[0])) {
      leastPeak[0] = e.get().simulation().peakMemoryBytesPerGpu();
    }
    if (e.isEmpty() || !MemoryFit.fits(e.get().simulation().peakMemoryBytesPerGpu(),
        req.memoryPerGpu())) {
      return Optional.empty();
    }
    return Optional.of(new Point(c, e.get()));
  }

  /**
   * A configuration under full recomputation recomputing instead only the first blocks of each
   * chunk ({@code --recompute-num-layers}, 1 to one less than the largest chunk): the fewest
   * that fit, by bisection, which is also the fastest of them, since recomputing one block more
   * never needs more memory nor takes less time.
   */
  private static Optional<Point> fewestRecomputed(PlanRequest req, PlanSimulator sim,
      ParallelConfig c, double[] leastPeak) {
    int most = FewestRecomputed.most(c.chunkLayers(req.model().layers()));
    return most < 1 ? Optional.empty() : FewestRecomputed.search(most,
        r -> point(req, sim, c.withRecomputeLayers(r), leastPeak));
  }


  /**
   * A configuration with each context-parallel size the search considers ({@link
   * io.meshplan.interop.space.SearchRules#contextDegrees}: the data-parallel GPUs become {@code
   * dp / CP} replicas of {@code CP} GPUs), each exchange of {@link
   * io.meshplan.plan.ContextExchange#searched} above size 1 (Megatron-Core's {@code
   * cp_comm_type} p2p, all_gather and a2a) and, for a mixture-of-experts model, each expert layout
   * ({@link io.meshplan.interop.space.SearchRules#expertLayouts}).
   */
  static java.util.List<ParallelConfig> expertAndContext(PlanRequest req,
      ParallelConfig c) {
    java.util.List<ParallelConfig> out = new java.util.ArrayList<>();
    io.meshplan.model.MoeShape moe = req.model().arch().moe();
    for (int cp : io.meshplan.interop.space.SearchRules.contextDegrees(req, c.dataParallel())) {
      for (io.meshplan.plan.ContextExchange x
          : io.meshplan.plan.ContextExchange.searched(req.model(), c.tensorParallel(), cp)) {
        ParallelConfig withCp = cp == 1 ? c : new ParallelConfig(c.tensorParallel(),
            c.pipelineParallel(), c.dataParallel() / cp, c.virtualStages(), c.microBatchSize(),
            c.globalBatchSize(), c.recompute(), c.sequenceParallel(), c.zeroStage())
            .withContext(cp, x);
        if (!moe.routed()) {
          out.add(withCp);
          continue;
        }
        for (int[] e : io.meshplan.interop.space.SearchRules.expertLayouts(moe, c.dataParallel(),
            c.tensorParallel())) {
          out.add(withCp.withExperts(e[0], e[1]));
        }
      }
    }
    return out;
  }

  /** The grid's configurations that Megatron-LM accepts on this model and cluster, in order. */
  static java.util.List<ParallelConfig> configurations(PlanRequest req) {
    ModelSpec m = req.model();
    int gpus = req.cluster().gpuCount();
    java.util.List<ParallelConfig> out = new java.util.ArrayList<>();
    for (int tp = 1; tp <= req.cluster().gpusPerNode(); tp++) {
      if (req.cluster().gpusPerNode() % tp != 0 || gpus % tp != 0) {
        continue;
      }
      for (int pp = 1; pp <= m.layers() && (long) tp * pp <= gpus; pp++) {
        if (m.layers() % pp != 0 || gpus % (tp * pp) != 0) {
          continue;
        }
        int dp = gpus / (tp * pp);
        for (int vpp = 1; (long) pp * vpp <= m.layers(); vpp++) {
          if (vpp > 1 && (pp < 2 || m.layers() % (pp * vpp) != 0 || !req.interleave())) {
            continue;
          }
          for (int mb : MICRO) {
            for (Recompute rc : req.runtime().searchedRecompute()) {
              for (boolean sp : tp > 1 ? new boolean[] {false, true} : new boolean[] {false}) {
                for (boolean dist : dp > 1 ? new boolean[] {false, true}
                    : new boolean[] {false}) {
                  ParallelConfig base = new ParallelConfig(tp, pp, dp, vpp, mb,
                      req.globalBatch(), rc, sp, dist);
                  for (ParallelConfig c : expertAndContext(req, base)) {
                    if (accepts(req, c)) {
                      out.add(c);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * Whether a grid configuration binds on the request's model and cluster with its precision,
   * attention and overlaps ({@link io.meshplan.plan.BoundConfig#accepts}, the rules every
   * command binds by) and its stages' submeshes fit the nodes.
   */
  static boolean accepts(PlanRequest req, ParallelConfig c) {
    ModelSpec m = req.model();
    if (!io.meshplan.plan.BoundConfig.accepts(m, req.cluster(), c, m.dtype(), req.attention(),
        req.overlaps())) {
      return false;
    }
    try {
      UniformPipeline.checkNodes(c.gpus() / c.pipelineParallel(), c.pipelineParallel(),
          req.cluster());
      return true;
    } catch (InputException | IllegalArgumentException e) {
      // Megatron-LM accepts it, but its stages do not fit the nodes.
      return false;
    }
  }
}
