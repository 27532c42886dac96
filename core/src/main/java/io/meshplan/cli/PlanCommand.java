package io.meshplan.cli;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.export.ExportTarget;
import io.meshplan.export.LaunchChecks;
import io.meshplan.interop.RuntimeBest;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.interop.hlo.HloPlanResult;
import io.meshplan.interop.PlanResult;
import io.meshplan.interop.PlanText;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.plan.PlanSource;
import io.meshplan.planner.ModuleJob;
import io.meshplan.planner.ModulePlanner;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.report.ReportSide;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code meshplan plan}: the whole-cluster plan of a model (Alpa's inter- and intra-op passes). */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = "Plan how to train a model on a cluster: pipeline stages, logical meshes and "
        + "shardings, with the predicted iteration time, throughput, MFU and memory.")
final class PlanCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin ModelOptions model = new ModelOptions();

  @Mixin RetiredBatchOption retiredBatch = new RetiredBatchOption();

  @Mixin ClusterOptions cluster = new ClusterOptions();

  @Option(names = "--hlo", description = "Plan an XLA HLO text dump of a whole training step "
      + "(forward, backward and update, as jax.jit(train_step) lowers it) instead of a --model "
      + "preset: its layer scopes become the pipeline's layers and its batch one microbatch; "
      + "give --microbatches N.")
  Path hlo;

  /** The global batch planned when {@code --global-batch} is not given, sequences. */
  static final int DEFAULT_GLOBAL_BATCH = 1024;

  @Option(names = "--global-batch", description = "Sequences per iteration (default: 1024; "
      + "where no pipeline covers the cluster's GPUs with replicas that share 1024, the GPU "
      + "count's odd factor times the power of two nearest 1024, e.g. 1152 on 576 GPUs, and a "
      + "warning says so).")
  Integer globalBatch;

  @Option(names = "--microbatches", defaultValue = "auto",
      description = "Microbatches per iteration, or auto to let the planner choose (default: "
          + "${DEFAULT-VALUE}).")
  String microbatches;

  @Option(names = "--megatron-grid", description = "Search only Megatron-LM configurations "
      + "(equal stages, Megatron's column/row layouts, one ZeRO stage), which 'export --to "
      + "megatron' expresses exactly; the plan is the fastest one that fits.")
  boolean megatronGrid;

  @Option(names = "--for", paramLabel = "FRAMEWORK", completionCandidates =
      Choices.ExportTargets.class, description = "Plan only what this framework launches (one "
      + "of: ${COMPLETION-CANDIDATES}): its stage layouts, settings, schedules and kernels, as "
      + "'export --to FRAMEWORK' writes them, so that the plan exports. Without it the plan is "
      + "the fastest of all, and the best plan each framework launches is shown beside it.")
  String forFramework;

  @Option(names = "--recompute", completionCandidates = Choices.Recomputes.class,
      description = "Use this recomputation mode in every stage instead of searching none, "
      + "selective and full (op is torchtitan's per-op mode, maxtext:POLICY MaxText's "
      + "remat_policy, see docs/simulating.md). One of: ${COMPLETION-CANDIDATES}.")
  String recompute;

  @Option(names = "--schedule", defaultValue = "auto",
      completionCandidates = Choices.PlanSchedules.class, description = "Pipeline schedule: auto "
      + "(1F1B, or interleaved 1F1B with several model chunks per stage when that is faster) or "
      + "1f1b (default: ${DEFAULT-VALUE}). One of: ${COMPLETION-CANDIDATES}.")
  String schedule;

  @Option(names = "--json", description = "Print the plan as JSON.")
  boolean json;

  @Option(names = "--quiet", description = "Draw no progress line on standard error (none is"
      + " drawn anyway when standard error is not a terminal).")
  boolean quiet;

  @Option(names = "--out", description = "Also write the plan as JSON to this file (for "
      + "'simulate --plan', 'export --plan' and 'deploy --plan'); --json prints it instead."
      + OutputPaths.FILE_ONLY)
  Path out;

  @Option(names = "--report", description = "Also write a self-contained HTML report (cluster, "
      + "pipeline timeline, memory, time breakdown, shardings) to this file."
      + OutputPaths.FILE_ONLY)
  Path report;

  @Mixin ExecutorOptions executor = new ExecutorOptions();

  @Mixin ForceOption force = new ForceOption();

  @Option(names = "--train-tokens", paramLabel = "N", description = "Tokens the whole run trains"
      + " on, 1 to 10^16: the plan's iterations and time to train are printed (with "
      + "--checkpoint-bandwidth, with interruptions).")
  Long trainTokens;

  @Mixin TimeToTrainOptions timeToTrain = new TimeToTrainOptions();

  @Mixin TimeToTrainOptions.Price gpuHourPrice = new TimeToTrainOptions.Price();

  @Option(names = "--spare-nodes", paramLabel = "K", description = "Hold K of the cluster's "
      + "nodes back as spares and plan on the rest; with --train-tokens, a checkpoint bandwidth "
      + "and --node-repair-hours, also plan all the nodes without spares and compare the expected"
      + " time to train.")
  Integer spareNodes;

  @Option(names = "--fallbacks", paramLabel = "K", description = "Also plan the job on the "
      + "cluster minus 1 to K nodes (the layer prices shared), and save those plans in the plan "
      + "file for 'meshplan replan --lost-nodes'; at most " + Fallbacks.MAX + ".")
  Integer fallbacks;

  @Mixin AttentionOptions attention = new AttentionOptions();

  @Option(names = "--compare", description = "A plan file (from 'plan --out') to draw beside "
      + "this plan in the --report.")
  Path compare;

  @Override
  public Integer call() {
    boolean timed = trainTokens != null || timeToTrain.trainIterations != null;
    timeToTrain.iterations(trainTokens, 1, 1);
    gpuHourPrice.checked();
    // Before the search, which can take minutes: refused flags are named at once.
    timeToTrain.check(timed, gpuHourPrice.usd != null);
    if (hlo != null) {
      if (spareNodes != null) {
        throw new InputException("--spare-nodes plans a model on fewer nodes; plan an --hlo "
            + "module on the cluster you mean");
      }
      if (fallbacks != null) {
        throw new InputException("--fallbacks plans a model on fewer nodes; an --hlo module's "
            + "plan has none");
      }
      if (timed) {
        throw new InputException("--train-tokens and --train-iterations time a model's run; an "
            + "--hlo module counts microbatches");
      }
      return planHlo();
    }
    int fixed = fixedMicrobatches();
    boolean interleave = interleaving();
    ReportFiles.check(report, compare, out, null, inputFiles(), force.force);
    if (megatronGrid && !executor.local()) {
      throw new InputException("--megatron-grid runs in this process; leave out --spark");
    }
    PlannerOptions options = PlannerOptions.defaults().withThreads(executor.threads())
        .withInterleaving(interleave).withSearch(megatronGrid
            ? PlannerOptions.Search.MEGATRON_GRID : PlannerOptions.Search.ALPA);
    PricedJob setup = fixRecompute(JobFlags.priced(model, cluster, attention, null, batch(),
        fixed, options));
    PricedJob allNodes = null;
    if (spareNodes != null) {
      ClusterSpec cs = setup.cluster();
      if (cs.nodes() == 1) {
        throw new InputException("--spare-nodes " + spareNodes + ": " + cs.toShortString()
            + " has 1 node, so none can be spared and a job left to run; plan 2 nodes or more");
      }
      if (spareNodes < 1 || spareNodes >= cs.nodes()) {
        throw new InputException("--spare-nodes must be from 1 to " + (cs.nodes() - 1) + " on "
            + cs.toShortString() + ", got " + spareNodes);
      }
      allNodes = setup;
      setup = fixRecompute(Planner.price(setup.job().withCluster(cs.withNodes(cs.nodes()
          - spareNodes)), setup.pricing(), options));
    }
    cluster.warnIfProfileForeign(setup.cluster(), spec.commandLine().getErr());
    model.printWarnings(spec.commandLine().getErr());
    Optional<LaunchCheck> runtime = runtime(setup.cluster());
    if (runtime.isPresent()) {
      setup = withRuntimeAttention(setup, runtime.get(), options);
    }
    PlanResult r;
    // Both storages' times, where the weights were weighed (fp8Weights).
    Optional<Weighed> weighed = Optional.empty();
    List<RuntimeBest> bests = List.of();
    try (TaskExecutor ex = executor.open();
        Progress progress = !executor.local() ? Progress.none() : megatronGrid
            // The grid's search tells no progress: the line shows the time spent.
            ? Progress.start(spec.commandLine().getErr(), quiet, "planning", "", 0)
            : Progress.start(spec.commandLine().getErr(), quiet, "planning", "%", 100)) {
      PlannerOptions run = options.withExecutor(ex).withProgress(progress::update);
      r = plan(setup, run, runtime);
      if (r instanceof PlanResult.Infeasible inf && inf.coverage() && globalBatch == null
          && spareNodes == null && fixed == 0) {
        Optional<PricedJob> shared = sharedBatch(setup, options);
        PlanResult again = shared.isPresent() ? plan(shared.get(), run, runtime) : r;
        if (again instanceof PlanResult.Planned) {
          int gpus = setup.cluster().gpuCount();
          int alt = shared.get().job().globalBatch();
          spec.commandLine().getErr().println("meshplan: warning: no pipeline covers the "
              + gpus + " GPUs with replicas that share the default global batch of "
              + DEFAULT_GLOBAL_BATCH + " sequences; planned " + alt + " ("
              + io.meshplan.interop.SharedBatch.why(gpus, alt) + "); give --global-batch to "
              + "choose");
          setup = shared.get();
          r = again;
        }
      }
      Optional<PricedJob> fp8 = fp8Weights(setup, runtime, options);
      if (fp8.isPresent()) {
        // Megatron-LM's --fp8-param-gather is a choice of the launch: both are planned, and the
        // faster kept (FP8 weights may also fit a layout bf16 weights do not).
        PlanResult r8 = plan(fp8.get(), run, runtime);
        Weighed w = new Weighed(seconds(r), seconds(r8));
        weighed = Optional.of(w);
        if (w.fp8Kept()) {
          r = r8;
          setup = fp8.get();
        }
      }
      // With a fixed recomputation the frameworks' own searches would not be the same job.
      if (r instanceof PlanResult.Planned p && runtime.isEmpty() && !megatronGrid
          && recompute == null) {
        bests = Planner.bests(setup, run.withProgress(pct -> { }), Optional.of(p),
            LaunchChecks.all(setup.cluster()));
        // The plan is the fastest of all: a framework's search over its own space (a uniform
        // grid the stage DP's estimates passed by) can find a layout the whole search did not,
        // and that layout, of the same job, is then the plan.
        for (RuntimeBest b : bests) {
          if (b.plan().isPresent()
              && b.plan().get().plan().attention() == p.plan().attention()
              && b.plan().get().plan().prediction().iterationSeconds()
                  < ((PlanResult.Planned) r).plan().prediction().iterationSeconds()) {
            r = b.plan().get();
          }
        }
      }
    }
    if (r instanceof PlanResult.Infeasible inf) {
      throw new InfeasibleException(inf.message());
    }
    PlanResult.Planned planned = (PlanResult.Planned) r;
    String search = searchLine(planned.stats()) + weighed.map(Weighed::line).orElse("")
        + (bests.isEmpty() ? "" : RuntimeBests.text(planned.plan(), bests));
    String planJson = RuntimeBests.json(PlanJson.write(planned.plan()), planned.plan(), bests,
        runtime.map(LaunchCheck::label).orElse(null));
    if (weighed.isPresent()) {
      planJson = JsonEdit.edit(planJson, weighed.get()::addTo);
    }
    if (allNodes != null) {
      search = search + spares(allNodes, planned.plan(), options);
    }
    if (fallbacks != null) {
      Fallbacks f = Fallbacks.plan(setup, options.withThreads(executor.threads()), fallbacks,
          this::runtime);
      planJson = f.addTo(planJson);
      search = search + f.text(planned.plan());
    }
    render(planned.plan(), planned.simulation(), search, planJson, setup.cluster(),
        setup.request().memoryPerGpu());
    return ExitCodes.OK;
  }

  /**
   * What the spares buy: the line that says how many were held back, and with a run of
   * --train-tokens priced with --node-repair-hours, the same job planned on all the nodes
   * without spares (each node loss waiting for its repair) against the plan with them.
   */
  private String spares(PricedJob allNodes, PipelinePlan withSpares, PlannerOptions options) {
    ClusterSpec all = allNodes.cluster();
    String held = String.format(java.util.Locale.ROOT, "spares: %d of %d nodes held back, the "
        + "plan above runs on %d%n", spareNodes, all.nodes(), all.nodes() - spareNodes);
    if ((trainTokens == null && timeToTrain.trainIterations == null)
        || timeToTrain.repairHours == null
        || (timeToTrain.aggregateGbps == null && timeToTrain.perNodeGbps == null)) {
      return held + "  (--train-tokens, a checkpoint bandwidth and --node-repair-hours price "
          + "what they buy)\n";
    }
    PlanResult r = plan(allNodes, options, runtime(all));
    if (!(r instanceof PlanResult.Planned p)) {
      return held + "  without spares nothing fits on all " + all.nodes() + " nodes\n";
    }
    long iterations = timeToTrain.iterations(trainTokens, withSpares.globalBatchSize(),
        withSpares.model().seq()).getAsLong();
    io.meshplan.sweep.TrainingOutcome with = timeToTrain.outcome(TimeToTrainOptions.Run.of(
        iterations, withSpares.prediction().iterationSeconds(), withSpares.model(),
        ClusterSpec.parse(withSpares.cluster())).withSpares(spareNodes));
    io.meshplan.sweep.TrainingOutcome without = timeToTrain.outcome(TimeToTrainOptions.Run.of(
        iterations, p.plan().prediction().iterationSeconds(), withSpares.model(), all));
    return held + String.format(java.util.Locale.ROOT, "  with them: %.2f days, ETTR %.1f%%%n"
        + "  without, on all %d nodes: %.4f s per iteration, %.2f days, ETTR %.1f%% (a lost node "
        + "waits %s h)%n", with.days(), 100 * with.ettr(), all.nodes(),
        p.plan().prediction().iterationSeconds(), without.days(), 100 * without.ettr(),
        timeToTrain.repairHours);
  }

  /** {@code --for}: the framework's launch check on the cluster, refused beside the grid. */
  private Optional<LaunchCheck> runtime(ClusterSpec cs) {
    if (forFramework == null) {
      return Optional.empty();
    }
    if (megatronGrid) {
      throw new InputException("give --for or --megatron-grid, not both (--for megatron also "
          + "plans Megatron-LM's uneven stages and ZeRO stages 2 and 3)");
    }
    ExportTarget t = ExportTarget.parse(Choices.pick("--for", forFramework,
        new Choices.ExportTargets()));
    LaunchCheck check = LaunchChecks.of(t, cs);
    if (recompute == null) {
      return Optional.of(check);
    }
    io.meshplan.model.Recompute mode = io.meshplan.model.Recompute.parse(recompute);
    if (mode.maxText() && mode != io.meshplan.model.Recompute.MAXTEXT_FULL) {
      throw new InfeasibleException("--for " + t.label() + ": no export states MaxText's remat "
          + "policy --recompute " + mode.label() + " (only maxtext:full, as full "
          + "recomputation); plan without --for");
    }
    return Optional.of(check.withRecompute(mode));
  }

  /**
   * {@code --recompute}: the job's search held to one recomputation mode, checked against the
   * model (a MaxText policy needs a dense model).
   */
  private PricedJob fixRecompute(PricedJob setup) {
    if (recompute == null) {
      return setup;
    }
    io.meshplan.model.Recompute mode = io.meshplan.model.Recompute.parse(recompute);
    io.meshplan.model.MaxTextRemat.check(mode, setup.model());
    return new PricedJob(setup.job(), setup.pricing(), setup.request().withRuntime(
        setup.request().runtime().withRecompute(mode)), setup.layers());
  }

  /**
   * The job priced again with an attention kernel the framework runs, when the attention was
   * not given and the cluster's default is not one (Alpa has no fused attention).
   */
  private PricedJob withRuntimeAttention(PricedJob setup, LaunchCheck runtime,
      PlannerOptions options) {
    io.meshplan.model.Attention a = Planner.attentionFor(setup.job().attention(),
        runtime.space());
    if (attention.chosen().isPresent() || a == setup.job().attention()) {
      return setup;
    }
    return Planner.price(setup.job().withAttention(a), setup.pricing(), options);
  }

  /** The files the model and cluster flags read. */
  private java.util.Map<String, Path> inputFiles() {
    java.util.Map<String, Path> files = new java.util.LinkedHashMap<>(model.inputFiles());
    files.putAll(cluster.inputFiles());
    files.putAll(timeToTrain.inputFiles());
    return files;
  }

  /** The global batch asked for: {@code --global-batch}, else the default. */
  private int batch() {
    return globalBatch == null ? DEFAULT_GLOBAL_BATCH : globalBatch;
  }

  /** A job planned for the runtime it will launch on, or as Alpa's search plans it. */
  private static PlanResult plan(PricedJob job, PlannerOptions run,
      Optional<LaunchCheck> runtime) {
    return runtime.isPresent() ? Planner.planFor(job, run, runtime.get())
        : Planner.plan(job, run);
  }

  /**
   * The job at the batch its cluster's GPUs can share nearest the default ({@link
   * io.meshplan.interop.SharedBatch#nearest}), where that is not the default: the default batch
   * is meshplan's, not the user's, so where the GPUs cannot share it (racks of 72) the nearest
   * batch they can is planned, and said.
   */
  private Optional<PricedJob> sharedBatch(PricedJob setup, PlannerOptions options) {
    int alt = io.meshplan.interop.SharedBatch.nearest(setup.cluster().gpuCount(),
        DEFAULT_GLOBAL_BATCH);
    return alt == DEFAULT_GLOBAL_BATCH ? Optional.empty() : Optional.of(fixRecompute(
        Planner.price(setup.job().withGlobalBatch(alt), setup.pricing(), options)));
  }

  /** {@code --microbatches}: 0 for auto, else a positive divisor of the global batch. */
  private int fixedMicrobatches() {
    if ("auto".equalsIgnoreCase(microbatches)) {
      return 0;
    }
    int fixed;
    try {
      fixed = AsciiDigits.parseInt(Words.trimmed(microbatches));
    } catch (NumberFormatException e) {
      fixed = -1;
    }
    if (fixed <= 0) {
      throw new InputException("--microbatches must be a positive integer or auto, got '"
          + microbatches + "'");
    }
    if (batch() % fixed != 0) {
      throw new InputException("--global-batch " + batch() + " is not a multiple of "
          + "--microbatches " + fixed);
    }
    if (megatronGrid) {
      throw new InputException("--microbatches cannot be fixed with --megatron-grid, which "
          + "chooses the micro batch itself");
    }
    return fixed;
  }

  /** {@code --schedule}: whether the plan may interleave. */
  private boolean interleaving() {
    return Choices.pick("--schedule", schedule, new Choices.PlanSchedules()).equals("auto");
  }

  /** Prints the plan (text or JSON) and writes the files the flags name. */
  private void render(PipelinePlan plan, SimulationResult sim, String search,
      ClusterSpec cs, double memoryPerGpu) {
    render(plan, sim, search, PlanJson.write(plan), cs, memoryPerGpu);
  }

  /** Prints the plan (text or the given JSON) and writes the files the flags name. */
  private void render(PipelinePlan plan, SimulationResult sim, String search, String planJson,
      ClusterSpec cs, double memoryPerGpu) {
    PrintWriter w = spec.commandLine().getOut();
    io.meshplan.planner.Pricing pricing = cluster.pricing();
    planJson = PriceReport.json(planJson, pricing, cs.gpu(), plan.hloModule().isPresent()
        ? "module" : io.meshplan.model.Fp8Training.word(plan.model().dtype()),
        sim.iterationSeconds(), Optional.of(plan));
    String timeText = "";
    java.util.OptionalLong runIterations = plan.hloModule().isPresent()
        ? java.util.OptionalLong.empty()
        : timeToTrain.iterations(trainTokens, plan.globalBatchSize(), plan.model().seq());
    Optional<TimeToTrainOptions.Run> run = runIterations.isEmpty() ? Optional.empty()
        : Optional.of(TimeToTrainOptions.Run.of(runIterations.getAsLong(),
            sim.iterationSeconds(), plan.model(), cs).withSpares(spareNodes == null ? 0
                : spareNodes));
    if (run.isPresent()) {
      timeText = timeToTrain.runLine(run.get(), (long) plan.globalBatchSize()
          * plan.model().seq()) + timeToTrain.text(run.get(), gpuHourPrice.usd);
      planJson = JsonEdit.edit(planJson, root -> timeToTrain.json(root.putObject("timeToTrain"),
          run.get(), gpuHourPrice.usd));
    }
    // A cluster file's figures (bandwidth overrides, an inline GPU) travel with the plan: its
    // cluster name says only which catalog entries it uses.
    planJson = PlanFiles.withClusterDescription(planJson, cluster.clusterDescription(), cs);
    // So does the calibration profile it was priced with.
    planJson = PlanFiles.withProfile(planJson, cluster.profile, spec.commandLine().getErr());
    planJson = PlanFiles.withCatalog(planJson, cluster.catalog.file);
    // And the memory per GPU it was searched within.
    planJson = PlanFiles.withMemory(planJson, cluster, cs);
    if (json) {
      w.print(planJson);
    } else {
      w.print(PlanText.write(plan, sim, PriceReport.band(pricing, cs.gpu())));
      w.println(pricing.describe(cs.gpu()));
      if (plan.hloModule().isEmpty()) {
        PriceReport.finetuneLine(plan.model()).ifPresent(w::println);
      }
      w.print(timeText);
      w.print(search);
    }
    if (out != null) {
      OutputPaths.write("--out", out, planJson);
      if (!json) {
        w.println("wrote " + out);
      }
    }
    ReportFiles.write(report, compare, new ReportSide("meshplan plan: " + plan.source().title()
        + " on " + plan.cluster(), java.util.Optional.of(plan), sim).withRun(
            report == null ? Optional.empty() : run.flatMap(timeToTrain::report)), cs,
        memoryPerGpu,
        new ClusterOptions(), spec.commandLine().getErr());
    if (report != null && !json) {
      w.println("wrote " + report);
    }
  }

  /**
   * The job with its weights kept and gathered in FP8, where {@code plan --for megatron} chooses
   * that: FP8 training of every weight (no adapters) under a recipe Megatron-LM gathers in FP8
   * (not NVFP4: ParallelConfig#checkModel), with {@code --fp8-param-gather} left to the plan,
   * on the cluster it plans (not beside --spare-nodes' second plan). Megatron-LM is the one
   * export that writes FP8 weights ({@code ExportFeature.FP8_WEIGHTS}).
   */
  private Optional<PricedJob> fp8Weights(PricedJob setup, Optional<LaunchCheck> runtime,
      PlannerOptions options) {
    io.meshplan.model.ModelSpec m = setup.model();
    if (runtime.isEmpty() || !runtime.get().label().equals(ExportTarget.MEGATRON.label())
        || model.fp8ParamGather != null || spareNodes != null
        || !io.meshplan.model.Fp8Training.on(setup.job().dtype())
        || m.lora() != io.meshplan.model.Lora.NONE
        || m.fp8Scaling() == io.meshplan.model.Fp8Scaling.NVFP4) {
      return Optional.empty();
    }
    // The job already runs the runtime's attention: the same job with FP8 weights.
    return Optional.of(fixRecompute(Planner.price(setup.job().withModel(
        m.withLora(io.meshplan.model.Lora.FP8_WEIGHTS)), setup.pricing(), options)));
  }

  /** A plan's iteration time, or empty when nothing fits. */
  private static OptionalDouble seconds(PlanResult r) {
    return r instanceof PlanResult.Planned p
        ? OptionalDouble.of(p.plan().prediction().iterationSeconds()) : OptionalDouble.empty();
  }

  /**
   * The weights planned both ways ({@link #fp8Weights}): each storage's best iteration time,
   * empty where no layout fits. FP8 weights are kept when they fit and are faster.
   *
   * @param bf16 seconds with bf16 weights
   * @param fp8 seconds with the weights kept and gathered in FP8
   */
  private record Weighed(OptionalDouble bf16, OptionalDouble fp8) {
    boolean fp8Kept() {
      return fp8.isPresent() && (bf16.isEmpty() || fp8.getAsDouble() < bf16.getAsDouble());
    }

    /** The plan's line, empty where neither fits (the plan then fails). */
    String line() {
      if (fp8Kept()) {
        return String.format(java.util.Locale.ROOT, "weights: kept and gathered in FP8 "
            + "(--fp8-param-gather): %.4f s an iteration, %s%n", fp8.getAsDouble(),
            bf16.isPresent() ? String.format(java.util.Locale.ROOT,
                "where bf16 weights take %.4f s", bf16.getAsDouble())
                : "where no layout of bf16 weights fits");
      }
      if (bf16.isEmpty()) {
        return "";
      }
      return String.format(java.util.Locale.ROOT, "weights: bf16; %s%n", fp8.isPresent()
          ? String.format(java.util.Locale.ROOT, "kept and gathered in FP8 "
              + "(--fp8-param-gather) they take %.4f s an iteration", fp8.getAsDouble())
          : "no layout of weights kept and gathered in FP8 (--fp8-param-gather) fits");
    }

    /** The plan file's {@code weights}: the storage kept and both times, null where none fits. */
    void addTo(com.fasterxml.jackson.databind.node.ObjectNode root) {
      com.fasterxml.jackson.databind.node.ObjectNode w = root.putObject("weights");
      w.put("kept", fp8Kept() ? "fp8" : "bf16");
      put(w, "bf16IterationSeconds", bf16);
      put(w, "fp8IterationSeconds", fp8);
    }

    private static void put(com.fasterxml.jackson.databind.node.ObjectNode o, String key,
        OptionalDouble v) {
      if (v.isPresent()) {
        o.put(key, v.getAsDouble());
      } else {
        o.putNull(key);
      }
    }
  }

  /** The line that says how much the search did. */
  private String searchLine(PlanResult.SearchStats stats) {
    if (!executor.local()) {
      return "search: " + Words.count(stats.dpRuns(), "stage DP run") + " on Spark\n";
    }
    if (megatronGrid) {
      return "search: " + Words.count(stats.layerSolves(), "layer solve")
          + ", the Megatron-LM grid\n";
    }
    if (forFramework != null && stats.dpRuns() == 0) {
      return "search: " + Words.count(stats.layerSolves(), "layer solve") + ", "
          + Words.count(stats.simulations(), "simulation") + " of the configurations "
          + Words.trimmed(forFramework).toLowerCase(java.util.Locale.ROOT) + " launches\n";
    }
    return "search: " + Words.count(stats.layerSolves(), "layer solve") + ", "
        + Words.count(stats.dpRuns(), "stage DP run") + ", "
        + Words.count(stats.simulations(), "simulation")
        + (stats.nodeGranule() > 1 ? "; stages in multiples of " + stats.nodeGranule() + " nodes"
            : "")
        + (stats.layerGroup() > 1 ? "; layers in groups of " + stats.layerGroup() : "")
        + (forFramework != null ? "; only what " + Words.trimmed(forFramework).toLowerCase(
            java.util.Locale.ROOT) + " runs" : "") + "\n";
  }

  /** Plans an HLO training step: its batch is one microbatch, so the batch flags do not apply. */
  private int planHlo() {
    refuseFlagsBesideHlo();
    int n = hloMicrobatches();
    Choices.pick("--schedule", schedule, new Choices.PlanSchedules());
    java.util.Map<String, Path> inputs = inputFiles();
    inputs.put("--hlo", hlo);
    ReportFiles.check(report, compare, out, null, inputs, force.force);
    ClusterSpec cs = cluster.spec(null);
    cluster.warnIfProfileForeign(cs, spec.commandLine().getErr());
    HloInput in = HloInput.read(hlo, "--hlo", spec.commandLine().getErr());
    HloLayering lay = HloLayering.of(in.graph(), "--hlo " + hlo);
    PlanSource.HloModule module = new PlanSource.HloModule(in.graph().name(), hlo.toString(),
        in.sha256(), lay.names());
    HloPlanResult p;
    double memory = cluster.memoryPerGpu(cs);
    ModuleJob job = new ModuleJob(in.graph(), cs, cluster.pricing(), memory,
        cluster.overlapGradReduce);
    int threads = executor.threads();
    try (Progress progress = Progress.start(spec.commandLine().getErr(), quiet,
            "planning: layer solves", "%", 100)) {
      p = ModulePlanner.plan(job, lay, module, n,
          PlannerOptions.defaults().withThreads(threads).withProgress(progress::update));
    }
    HloPlanResult.Stats st = p.stats();
    String search = "search: " + Words.count(st.layerSolves(), "layer solve") + " ("
        + Words.count(st.distinctLayers(), "distinct layer") + " on "
        + Words.count(st.meshes(), "logical mesh") + "), 1 stage DP run ("
        + Words.count(st.latenciesTried(), "value") + " of t_max)\n";
    render(p.plan(), p.simulation(), search, cs, memory);
    return ExitCodes.OK;
  }

  /** The flags that describe a preset's model and batch do not apply to a module. */
  private void refuseFlagsBesideHlo() {
    java.util.Map<String, Boolean> given = new java.util.LinkedHashMap<>();
    given.put("--model", model.model != null);
    given.put(String.valueOf(model.overrides()), model.overrides() != null);
    given.put("--global-batch", spec.commandLine().getParseResult()
        .hasMatchedOption("--global-batch"));
    given.put("--megatron-grid", megatronGrid);
    given.put("--for", forFramework != null);
    given.put("--recompute", recompute != null);
    given.put("--spark", !executor.local());
    given.put("--attention", attention.chosen().isPresent());
    given.put("--hsdp-step-reduce", cluster.hsdpStepReduce);
    for (var flag : given.entrySet()) {
      if (flag.getValue()) {
        throw new InputException(flag.getKey() + " cannot be used with --hlo: the module fixes "
            + "the model and its microbatch, and it is planned in this process");
      }
    }
  }

  /** {@code --microbatches} with {@code --hlo}: a positive count, not auto. */
  private int hloMicrobatches() {
    if ("auto".equalsIgnoreCase(Words.trimmed(microbatches))) {
      throw new InputException("--hlo needs --microbatches N: the module's batch is one "
          + "microbatch, and N of them make an iteration");
    }
    int n;
    try {
      n = AsciiDigits.parseInt(Words.trimmed(microbatches));
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n <= 0) {
      throw new InputException("--microbatches must be a positive integer, got '"
          + microbatches + "'");
    }
    return n;
  }
}
