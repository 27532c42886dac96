package io.meshplan.sweep;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.interop.MegatronGrid;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.PlanResult;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelFlops;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.function.IntConsumer;

/**
 * Plans one sweep point, as {@code plan} does (Alpa's inter- and intra-op passes, {@link
 * InterOpPlanner}) or, in manual mode, as the best Megatron-LM configuration of {@link
 * MegatronGrid}. The training setup is {@code plan}'s default: the GPU's training precision
 * ({@link io.meshplan.cluster.GpuSpec#trainingType}), its usable memory ({@link
 * io.meshplan.cluster.GpuSpec#usableMemoryBytes}), catalog collective and send/recv prices.
 * Layer prices come from a {@link LayerCostCache}, so points of one model share their layer
 * solves; the stage DPs of one point run on the calling thread (points run side by side instead).
 */
public final class PointEvaluator {
  private final LayerCostCache cache;
  private final SolverOptions solver;
  private final java.util.Map<String, ModelSpec> configModels;
  private final SweepHardware hardware;
  private final Pricing pricing;

  /**
   * Creates the evaluator of points that name presets.
   *
   * @param cache the shared layer prices
   * @param solver the intra-op ILP settings
   */
  public PointEvaluator(LayerCostCache cache, SolverOptions solver) {
    this(cache, solver, java.util.Map.of());
  }

  /**
   * Creates the evaluator.
   *
   * @param cache the shared layer prices
   * @param solver the intra-op ILP settings
   * @param configModels the grid's config.json models by the name the points carry; a point
   *     whose model is not here names a preset
   */
  public PointEvaluator(LayerCostCache cache, SolverOptions solver,
      java.util.Map<String, ModelSpec> configModels) {
    this(cache, solver, configModels, SweepHardware.SHIPPED);
  }

  /**
   * Creates the evaluator of points whose GPUs and fabrics are those of a catalog.
   *
   * @param cache the shared layer prices
   * @param solver the intra-op ILP settings
   * @param configModels the grid's config.json models by the name the points carry; a point
   *     whose model is not here names a preset
   * @param hardware the GPUs and fabrics the points name ({@link SweepGrid#hardware})
   */
  public PointEvaluator(LayerCostCache cache, SolverOptions solver,
      java.util.Map<String, ModelSpec> configModels, SweepHardware hardware) {
    this(cache, solver, configModels, hardware, Pricing.shipped());
  }

  /**
   * Creates the evaluator with its prices.
   *
   * @param cache the shared layer prices
   * @param solver the intra-op ILP settings
   * @param configModels the grid's config.json models by the name the points carry
   * @param hardware the GPUs and fabrics the points name
   * @param pricing the prices: the shipped fitted factors, or kernel-level ({@code --prices
   *     kernel})
   */
  public PointEvaluator(LayerCostCache cache, SolverOptions solver,
      java.util.Map<String, ModelSpec> configModels, SweepHardware hardware, Pricing pricing) {
    this.pricing = Require.nonNull(pricing, "pricing");
    this.cache = Require.nonNull(cache, "cache");
    this.solver = Require.nonNull(solver, "solver");
    this.configModels = java.util.Map.copyOf(configModels);
    this.hardware = Require.nonNull(hardware, "hardware");
  }

  /**
   * The model of a point: a config.json model of the grid, else the preset it names.
   *
   * @param p the point
   * @param configModels the grid's config.json models by name
   * @return the model, at its own sequence
   * @throws InputException when the name is neither
   */
  public static ModelSpec model(SweepPoint p, java.util.Map<String, ModelSpec> configModels) {
    ModelSpec m = configModels.get(p.model());
    return m != null ? m : Presets.get(p.model());
  }

  /**
   * Plans a point.
   *
   * @param p the point
   * @param manual whether to search Megatron-LM configurations instead of planning
   * @param progress told the percentage of the point's search done (plan mode only)
   * @return the result; a combination the planner refuses is {@link PointStatus#REJECTED}
   */
  public PointResult evaluate(SweepPoint p, boolean manual, IntConsumer progress) {
    PlannerOptions options = PlannerOptions.defaults().withThreads(1).withSolver(solver)
        .withSharedLayers(cache).withProgress(progress);
    try {
      PricedJob priced = Planner.price(job(p, model(p, configModels), hardware),
          pricing, options);
      return manual ? manual(p, priced)
          : planned(p, Planner.plan(priced, options));
    } catch (InputException e) {
      return PointResult.failed(p, PointStatus.REJECTED, Double.NaN, Double.NaN, e.getMessage());
    }
  }

  private static PointResult planned(SweepPoint p, PlanResult r) {
    if (r instanceof PlanResult.Infeasible inf) {
      return PointResult.failed(p, PointStatus.INFEASIBLE,
          inf.neededBytesPerGpu() > 0 ? inf.neededBytesPerGpu() : Double.NaN, Double.NaN,
          inf.message());
    }
    PipelinePlan plan = ((PlanResult.Planned) r).plan();
    PipelinePlan.Prediction pr = plan.prediction();
    return new PointResult(p, PointStatus.OK, pr.iterationSeconds(), pr.tokensPerSecond(),
        pr.tflopsPerGpu(), pr.mfu(), pr.peakMemoryBytesPerGpu(), Double.NaN, Double.NaN,
        stages(plan), "");
  }

  private static PointResult manual(SweepPoint p, PricedJob priced) {
    MegatronGrid.Search s = Planner.megatronGrid(priced);
    PlanRequest req = priced.request();
    if (s.best().isEmpty()) {
      return PointResult.failed(p, PointStatus.INFEASIBLE, s.leastPeakBytesPerGpu(), Double.NaN,
          "no Megatron-LM configuration of " + p.model() + " fits on " + p.cluster()
              + (Double.isNaN(s.leastPeakBytesPerGpu()) ? ""
                  : ": the smallest needs " + io.meshplan.util.Units.formatBytes(
                      s.leastPeakBytesPerGpu()) + " per GPU, and "
                      + io.meshplan.util.Units.formatBytes(req.memoryPerGpu())
                      + " is available"));
    }
    ParallelConfig c = s.best().get().config();
    SimulationResult sim = s.best().get().evaluated().simulation();
    String layout = String.format(Locale.ROOT, "tp=%d pp=%d dp=%d%s%s micro-batch=%d"
        + " recompute=%s%s%s", c.tensorParallel(), c.pipelineParallel(), c.dataParallel(),
        c.contextParallel() > 1 ? " cp=" + c.contextParallel()
            + (c.cpExchange() == io.meshplan.plan.ContextExchange.P2P ? ""
                : " cp-comm-type=" + c.cpExchange().word()) : "",
        c.expertParallel() > 1 || c.expertTensorParallel() > 1 ? " ep=" + c.expertParallel()
            + " etp=" + c.expertTensorParallel() : "", c.microBatchSize(),
        c.recompute().name().toLowerCase(Locale.ROOT), c.sequenceParallel() ? " sp" : "",
        c.distributedOptimizer() ? " dist-opt" : "");
    return new PointResult(p, PointStatus.OK, sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu(), Double.NaN, Double.NaN,
        layout, "");
  }

  /**
   * The stages in words: "layers 0-39 on 8x8 dp8 tp8 | ...", with the microbatches (and the chunks
   * per stage of an interleaved plan, whose layers are the ranges of each stage's chunks).
   */
  static String stages(PipelinePlan plan) {
    StringJoiner j = new StringJoiner(" | ", plan.microbatches()
        + (plan.microbatches() == 1 ? " microbatch of " : " microbatches of ")
        + plan.microbatchSequences() + (plan.virtualStages() > 1 ? ", interleaved "
            + plan.virtualStages() + " chunks per stage" : "") + ": ", "");
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      j.add("layers " + plan.layersOf(i) + " on " + s.submeshNodes() + "x"
          + s.submeshGpus() + " dp" + s.dataParallel()
          + (s.contextParallel() > 1 ? " " + s.cpExchange().label(s.contextParallel()) : "")
          + " tp" + s.tensorParallel()
          + (s.expertParallel() > 1 ? " ep" + s.expertParallel() : "")
          + (s.expertTensorParallel() > 1 ? " etp" + s.expertTensorParallel() : ""));
    }
    return j.toString();
  }

  /**
   * A lower bound on a point's iteration time: its model FLOPs (Narayanan et al. SC'21, without
   * recomputation) at every GPU's dense peak in the training precision, seconds. No plan can be
   * faster, since its MFU would exceed 1.
   *
   * @param p the point
   * @return seconds
   */
  public static double lowerBoundSeconds(SweepPoint p) {
    return lowerBoundSeconds(p, Presets.get(p.model()), SweepHardware.SHIPPED);
  }

  /**
   * A lower bound on a point's iteration time (see {@link #lowerBoundSeconds(SweepPoint)}) for
   * the model the point names.
   *
   * @param p the point
   * @param base its model
   * @param hardware the GPUs and fabrics the point names
   * @return seconds
   */
  static double lowerBoundSeconds(SweepPoint p, ModelSpec base, SweepHardware hardware) {
    TrainingJob job = job(p, base, hardware);
    double flops = ModelFlops.trainingFlopsPerToken(job.trainedModel(), p.seq())
        * (double) p.tokensPerIteration();
    // FP8 GEMMs may run up to the FP8 peak, above the bf16 one.
    return flops / (p.gpus() * Planner.densePeakFlopsPerGpu(job));
  }

  /**
   * The training job of a point: its configuration ({@link TrainingConfig}: batch, microbatches,
   * overlaps, and the precision and attention, each the GPU's default for "auto") bound to its
   * model at its sequence and its cluster, as every command binds one.
   *
   * @param p the point
   * @param base the point's model
   * @param hardware the GPUs and fabrics the point names
   * @return the job
   * @throws InputException when a name is not in its catalog
   */
  static TrainingJob job(SweepPoint p, ModelSpec base, SweepHardware hardware) {
    // A grid names hosts; on rack-scale GPUs (GB200, GB300) they are grouped into their NVLink
    // domains, as --cluster HOSTSx4:gb200 groups them.
    ClusterSpec cs = ClusterSpec.ofHosts(p.nodes() + "x" + p.gpusPerNode() + ":" + p.gpu(),
        p.nodes(), p.gpusPerNode(), hardware.gpu(p.gpu()), hardware.hostGpus(p.gpu()),
        hardware.fabric(p.fabric()));
    TrainingConfig config = TrainingConfig.searched(p.globalBatch(), p.microbatches())
        .withOverlaps(p.overlaps()).withAttention("auto".equals(p.attention())
            ? java.util.Optional.empty()
            : java.util.Optional.of(io.meshplan.model.Attention.parse(p.attention())));
    ModelSpec model = base.withSequence(p.seq());
    if (!"auto".equals(p.dtype())) {
      // fp8:RECIPE names the FP8 recipe (SweepGridReader#dtype); fp8 alone is delayed scaling.
      config = config.withDtype(io.meshplan.model.Fp8Training.parse(
          io.meshplan.model.Fp8Scaling.stripRecipe(p.dtype())));
      model = model.withFp8Scaling(io.meshplan.model.Fp8Scaling.ofPrecision(p.dtype()));
    }
    return TrainingJob.of(config.bind(model, cs));
  }
}
