package io.meshplan.planner;

import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.MegatronGrid;
import io.meshplan.interop.PlanSimulator;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardRequest;
import io.meshplan.intraop.ShardResult;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.SimulationResult;
import java.util.Optional;
import io.meshplan.interop.GridPlanner;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.PlanResult;
import io.meshplan.interop.RuntimeBest;
import io.meshplan.interop.RuntimePlanner;
import io.meshplan.model.Attention;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.plan.RuntimeSpace;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;

/**
 * meshplan's entry point: plans a training job on its cluster. The command line, the sweep and
 * the Spark executors all plan through here, so the training policy ({@link TrainingJob#of}), the
 * pricing ({@link Pricing}) and the search ({@link PlannerOptions}) are applied in one place. The
 * other jobs enter here too: simulating a configuration or a saved plan ({@link #simulate}), the
 * grid of Megatron-LM configurations ({@link #megatronGrid}), sharding one computation ({@link
 * #shard}); an HLO module is planned by {@link ModulePlanner}, and a training run of {@code
 * calibrate --train} simulated by {@link TrainRunSimulator}, both beside this class.
 *
 * <p>Example: LLaMA2-13B on the Alpa simulation study's 50 x 4 V100-32GB cluster, global batch
 * 1,024, catalog prices:
 *
 * <pre>{@code
 * TrainingJob job = TrainingJob.of(Presets.get("llama2-13b"),
 *     ClusterSpec.parse("50x4:v100-32gb")).withGlobalBatch(1024);
 * PlanResult r = Planner.plan(job, Pricing.catalog(), PlannerOptions.defaults());
 * }</pre>
 */
public final class Planner {
  private Planner() {}

  /**
   * Plans a job.
   *
   * @param job the job
   * @param pricing the collective and send/recv prices
   * @param options the search
   * @return the best plan found with its simulation, or why nothing fits
   * @throws io.meshplan.util.InputException when the job cannot be planned as asked
   */
  public static PlanResult plan(TrainingJob job, Pricing pricing, PlannerOptions options) {
    return plan(price(job, pricing, options), options);
  }

  /**
   * Prices a job: the planner's request (its schedule is chosen by {@link #plan}) and its layer
   * prices, solved on {@code options}' threads (or shared through its cache).
   *
   * @param job the job
   * @param pricing the collective and send/recv prices
   * @param options the solver, threads and shared prices
   * @return the priced job
   */
  public static PricedJob price(TrainingJob job, Pricing pricing, PlannerOptions options) {
    Require.nonNull(job, "job");
    Require.nonNull(pricing, "pricing");
    Require.nonNull(options, "options");
    ModelSpec model = job.trainedModel();
    PlanRequest req = new PlanRequest(model, job.cluster(), job.globalBatch(),
        job.microbatches(), job.memoryPerGpu(), pricing,
        io.meshplan.model.Fp8Training.storage(job.dtype()).bytes(), job.overlaps(), true,
        job.attention());
    IlpLayerCostModel layers = options.sharedLayers()
        .map(cache -> cache.layers(req, options.solver()))
        .orElseGet(() -> new IlpLayerCostModel(model, job.cluster(), req.comm(), job.dtype(),
            job.attention(), job.overlaps().lossFusion(),
            pricing.computeScale(job.cluster().gpu()), pricing.attentionKernel(),
            options.solver(),
            new LocalExecutor(options.threads())));
    return new PricedJob(job, pricing, req, layers);
  }

  /**
   * Simulates one Megatron-LM style configuration of a priced job ({@code simulate} of flags,
   * and the prediction {@code export} writes), on the job's layer prices.
   *
   * @param priced the job with its prices
   * @param config the configuration, already checked against the model and cluster
   * @param gpipe whether to use the GPipe schedule instead of 1F1B (not with virtual stages)
   * @return the plan of the configuration and its simulation, or empty when a layer cannot take
   *     Megatron's layouts at this tensor-parallel size
   * @throws io.meshplan.util.InputException when a stage would cross a node it does not fill
   */
  public static Optional<PlanSimulator.Evaluated> simulate(PricedJob priced,
      ParallelConfig config, boolean gpipe) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(config, "configuration");
    priced.request().model().checkHybridLayout(config.tensorParallel(),
        config.contextParallel());
    return new PlanSimulator(priced.layers()).simulate(priced.request(), config, gpipe);
  }

  /**
   * Simulates a saved plan of a model again, on the job's layer prices ({@code simulate --plan},
   * {@code --compare}); stored stage times are not replayed.
   *
   * @param priced the plan's job with its prices
   * @param saved the plan
   * @return its simulation
   */
  public static SimulationResult simulate(PricedJob priced, PipelinePlan saved) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(saved, "plan");
    for (io.meshplan.plan.StagePlan st : saved.stages()) {
      priced.request().model().checkHybridLayout(st.tensorParallel(), st.contextParallel());
    }
    return new PlanSimulator(priced.layers()).simulate(priced.request(), saved);
  }

  /**
   * Searches every Megatron-LM configuration of a priced job ({@code sweep --manual}) and keeps
   * the fastest that fits, on the job's layer prices.
   *
   * @param priced the job with its prices
   * @return the best configuration, or the least memory any needs
   */
  public static MegatronGrid.Search megatronGrid(PricedJob priced) {
    Require.nonNull(priced, "priced job");
    return new MegatronGrid(priced.layers()).search(priced.request());
  }

  /**
   * The dense peak one GPU of the job reaches in its training precision, FLOP/s: the FP8 peak
   * for FP8 training (its GEMMs may run there), else the kernel model's dense peak of the
   * precision's element size ({@link KernelTimeModel#densePeak}).
   *
   * @param job the job
   * @return FLOP/s
   */
  public static double densePeakFlopsPerGpu(TrainingJob job) {
    Require.nonNull(job, "job");
    return io.meshplan.model.Fp8Training.on(job.dtype())
        ? io.meshplan.cluster.Fp8Gemms.of(job.cluster().gpu()).orElseThrow().peakFlops()
        : KernelTimeModel.densePeak(job.cluster().gpu(), job.dtype().bytes());
  }

  /**
   * Shards one computation on one logical mesh ({@code meshplan shard}): prices the mesh (Alpa's
   * abstract units, or the cluster's GPU kernels in the computation's precision and the
   * pricing's collectives) and solves Alpa's intra-operator ILP ({@link AutoSharding}).
   *
   * @param job the computation, the mesh and its prices
   * @return the sharding, or why none fits
   */
  public static ShardResult shard(ShardJob job) {
    Require.nonNull(job, "job");
    return AutoSharding.shard(new ShardRequest(job.graph(), meshEnv(job), job.solver(),
        job.residentParameters(), job.fixed()));
  }

  /**
   * The mesh environment of a shard job. On a cluster the kernels run in the computation's own
   * precision ({@link KernelTimeModel#xlaPrecision}) and unscaled: {@code shard} has always
   * priced a profile's collectives but not its compute scale.
   */
  private static MeshEnv meshEnv(ShardJob job) {
    if (job.prices() instanceof ShardJob.Units u) {
      return MeshEnv.abstractUnits(job.mesh(), u.alphas(), u.betas(), job.memoryPerDevice());
    }
    ShardJob.OnCluster c = (ShardJob.OnCluster) job.prices();
    return MeshEnv.onCluster(c.cluster().gpu(), c.pricing().collectives(c.cluster(), job.mesh()),
        job.memoryPerDevice(), KernelTimeModel.xlaPrecision(c.cluster().gpu(),
            MeshEnv.computeElementBytes(job.graph())), 1);
  }

  /**
   * Plans a priced job within what one runtime launches ({@link RuntimePlanner}), with the job's
   * attention: a runtime without that kernel launches nothing ({@link #attentionFor} gives one it
   * has).
   *
   * @param priced the job with its prices
   * @param options the search
   * @param runtime the runtime's launch check on the job's cluster
   * @return the fastest plan the runtime launches, or why it launches none that fits
   */
  public static PlanResult planFor(PricedJob priced, PlannerOptions options,
      LaunchCheck runtime) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(options, "options");
    Require.nonNull(runtime, "runtime");
    PlanRequest req = priced.request().withInterleaving(options.interleave());
    return withExecutor(options, ex -> new RuntimePlanner(priced.layers(), options.progress(),
        ex).plan(req, runtime));
  }

  /**
   * The fastest plan each runtime launches, beside the job's best plan: a runtime that has not the
   * job's attention kernel is planned with one it has, on prices of their own.
   *
   * @param priced the job with its prices
   * @param options the search
   * @param best the job's best plan, which a runtime that launches it as it is takes as its own
   * @param runtimes the runtimes' launch checks on the job's cluster
   * @return one result per runtime, in their order
   */
  public static List<RuntimeBest> bests(PricedJob priced, PlannerOptions options,
      java.util.Optional<PlanResult.Planned> best, List<LaunchCheck> runtimes) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(options, "options");
    RuntimeBest[] out = new RuntimeBest[runtimes.size()];
    Map<Attention, List<Integer>> byAttention = new java.util.TreeMap<>();
    for (int i = 0; i < runtimes.size(); i++) {
      byAttention.computeIfAbsent(attentionFor(priced.job().attention(),
          runtimes.get(i).space()), a -> new ArrayList<>()).add(i);
    }
    for (Map.Entry<Attention, List<Integer>> group : byAttention.entrySet()) {
      boolean own = group.getKey() == priced.job().attention();
      PricedJob job = own ? priced : price(priced.job().withAttention(group.getKey()),
          priced.pricing(), options);
      List<LaunchCheck> checks = new ArrayList<>();
      group.getValue().forEach(i -> checks.add(runtimes.get(i)));
      PlanRequest req = job.request().withInterleaving(options.interleave());
      List<RuntimeBest> found = withExecutor(options, ex -> new RuntimePlanner(job.layers(),
          options.progress(), ex).bests(req, own ? best : java.util.Optional.empty(), checks));
      for (int k = 0; k < checks.size(); k++) {
        out[group.getValue().get(k)] = found.get(k);
      }
    }
    return List.of(out);
  }

  /**
   * The attention a runtime's plan uses: the job's when the runtime has that kernel, else the
   * first it has.
   *
   * @param jobs the job's attention
   * @param space what the runtime runs
   * @return the attention
   */
  public static Attention attentionFor(Attention jobs, RuntimeSpace space) {
    if (space.attention().contains(jobs)) {
      return jobs;
    }
    for (Attention a : Attention.values()) {
      if (space.attention().contains(a)) {
        return a;
      }
    }
    return jobs;
  }

  /** Runs on the options' executor, or on this process's threads. */
  private static <T> T withExecutor(PlannerOptions options,
      java.util.function.Function<io.meshplan.exec.TaskExecutor, T> search) {
    if (options.executor().isPresent()) {
      return search.apply(options.executor().get());
    }
    try (LocalExecutor local = new LocalExecutor(options.threads())) {
      return search.apply(local);
    }
  }

  /**
   * Plans a priced job.
   *
   * @param priced the job with its prices
   * @param options the search
   * @return the best plan found with its simulation, or why nothing fits
   */
  public static PlanResult plan(PricedJob priced, PlannerOptions options) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(options, "options");
    PlanRequest req = priced.request().withInterleaving(options.interleave());
    if (options.search() == PlannerOptions.Search.MEGATRON_GRID) {
      return new GridPlanner(priced.layers()).plan(req);
    }
    if (options.executor().isPresent()) {
      return new InterOpPlanner(priced.layers(), options.progress(), options.executor().get())
          .plan(req);
    }
    try (LocalExecutor local = new LocalExecutor(options.threads())) {
      return new InterOpPlanner(priced.layers(), options.progress(), local).plan(req);
    }
  }
}
