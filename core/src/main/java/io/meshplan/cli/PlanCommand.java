package io.meshplan.cli;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.interop.hlo.HloPipelinePlan;
import io.meshplan.interop.hlo.HloPipelinePlanner;
import io.meshplan.interop.hlo.HloPlanJson;
import io.meshplan.interop.hlo.HloPlanText;
import io.meshplan.interop.PlanResult;
import io.meshplan.interop.PlanText;
import io.meshplan.plan.PlanJson;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.report.ReportSide;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Path;
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

  @Mixin ClusterOptions cluster = new ClusterOptions();

  @Option(names = "--hlo", description = "Plan an XLA HLO text dump of a whole training step "
      + "(forward, backward and update, as jax.jit(train_step) lowers it) instead of a --model "
      + "preset: its layer scopes become the pipeline's layers and its batch one microbatch; "
      + "give --microbatches N.")
  Path hlo;

  @Option(names = "--global-batch", defaultValue = "1024",
      description = "Sequences per iteration (default: ${DEFAULT-VALUE}).")
  int globalBatch;

  @Option(names = "--microbatches", defaultValue = "auto",
      description = "Microbatches per iteration, or auto to let the planner choose (default: "
          + "${DEFAULT-VALUE}).")
  String microbatches;

  @Option(names = "--megatron-grid", description = "Search only Megatron-LM configurations "
      + "(equal stages, Megatron's column/row layouts, one ZeRO stage), which 'export --to "
      + "megatron' expresses exactly; the plan is the fastest one that fits.")
  boolean megatronGrid;

  @Option(names = "--schedule", defaultValue = "auto", description = "Pipeline schedule: auto "
      + "(1F1B, or interleaved 1F1B with several model chunks per stage when that is faster) or "
      + "1f1b (default: ${DEFAULT-VALUE}).")
  String schedule;

  @Option(names = "--json", description = "Print the plan as JSON.")
  boolean json;

  @Option(names = "--out", description = "Also write the plan as JSON to this file (for "
      + "'simulate --plan', 'export --plan' and 'deploy --plan').")
  Path out;

  @Option(names = "--report", description = "Also write a self-contained HTML report (cluster, "
      + "pipeline timeline, memory, time breakdown, shardings) to this file.")
  Path report;

  @Mixin ExecutorOptions executor = new ExecutorOptions();

  @Option(names = "--compare", description = "A plan file (from 'plan --out') to draw beside "
      + "this plan in the --report.")
  Path compare;

  @Override
  public Integer call() {
    if (hlo != null) {
      return planHlo();
    }
    int fixed = fixedMicrobatches();
    boolean interleave = interleaving();
    ReportFiles.check(report, compare, out, null, inputFiles());
    if (megatronGrid && !executor.local()) {
      throw new InputException("--megatron-grid runs in this process; leave out --spark");
    }
    PlannerOptions options = PlannerOptions.defaults().withThreads(executor.threads())
        .withInterleaving(interleave).withSearch(megatronGrid
            ? PlannerOptions.Search.MEGATRON_GRID : PlannerOptions.Search.ALPA);
    PricedJob setup = JobFlags.priced(model, cluster, null, globalBatch, fixed, options);
    PlanResult r;
    try (TaskExecutor ex = executor.open();
        Progress progress = executor.local() ? Progress.start("planning") : Progress.none()) {
      r = Planner.plan(setup, options.withExecutor(ex).withProgress(progress::update));
    }
    if (r instanceof PlanResult.Infeasible inf) {
      throw new InfeasibleException(inf.message());
    }
    render((PlanResult.Planned) r, setup);
    return ExitCodes.OK;
  }

  /** The files the model and cluster flags read. */
  private java.util.Map<String, Path> inputFiles() {
    java.util.Map<String, Path> files = new java.util.LinkedHashMap<>(model.inputFiles());
    files.putAll(cluster.inputFiles());
    return files;
  }

  /** {@code --microbatches}: 0 for auto, else a positive divisor of the global batch. */
  private int fixedMicrobatches() {
    if ("auto".equalsIgnoreCase(microbatches)) {
      return 0;
    }
    int fixed;
    try {
      fixed = Integer.parseInt(microbatches.trim());
    } catch (NumberFormatException e) {
      fixed = -1;
    }
    if (fixed <= 0) {
      throw new InputException("--microbatches must be a positive integer or auto, got '"
          + microbatches + "'");
    }
    if (globalBatch % fixed != 0) {
      throw new InputException("--global-batch " + globalBatch + " is not a multiple of "
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
    return switch (schedule.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "auto" -> true;
      case "1f1b" -> false;
      default -> throw new InputException("--schedule '" + schedule + "' is unknown; use auto "
          + "or 1f1b");
    };
  }

  /** Prints the plan (text or JSON) and writes the files the flags name. */
  private void render(PlanResult.Planned p, PricedJob setup) {
    String planJson = PlanJson.write(p.plan());
    PrintWriter w = spec.commandLine().getOut();
    if (json) {
      w.print(planJson);
    } else {
      w.print(PlanText.write(p.plan(), p.simulation()));
      w.print(searchLine(p.stats()));
    }
    if (out != null) {
      OutputPaths.write("--out", out, planJson);
      if (!json) {
        w.println("wrote " + out);
      }
    }
    ReportFiles.write(report, compare, new ReportSide("meshplan plan: " + p.plan().model().name()
        + " on " + p.plan().cluster(), java.util.Optional.of(p.plan()), p.simulation()),
        setup.cluster(), setup.request().memoryPerGpu(), new ClusterOptions());
    if (report != null && !json) {
      w.println("wrote " + report);
    }
  }

  /** The line that says how much the search did. */
  private String searchLine(PlanResult.SearchStats stats) {
    if (!executor.local()) {
      return String.format(java.util.Locale.ROOT, "search: %d stage DP runs on Spark%n",
          stats.dpRuns());
    }
    if (megatronGrid) {
      return String.format(java.util.Locale.ROOT,
          "search: %d layer solves, the Megatron-LM grid%n", stats.layerSolves());
    }
    return String.format(java.util.Locale.ROOT,
        "search: %d layer solves, %d stage DP runs, %d simulations%s%s%n",
        stats.layerSolves(), stats.dpRuns(), stats.simulations(),
        stats.nodeGranule() > 1 ? "; stages in multiples of " + stats.nodeGranule() + " nodes" : "",
        stats.layerGroup() > 1 ? "; layers in groups of " + stats.layerGroup() : "");
  }

  /** Plans an HLO training step: its batch is one microbatch, so the batch flags do not apply. */
  private int planHlo() {
    refuseFlagsBesideHlo();
    int n = hloMicrobatches();
    if (!"auto".equalsIgnoreCase(schedule.trim()) && !"1f1b".equalsIgnoreCase(schedule.trim())) {
      throw new InputException("--schedule '" + schedule + "' is unknown; use auto or 1f1b");
    }
    new OutputPaths().input("--hlo", hlo).check();
    io.meshplan.cluster.ClusterSpec cs = cluster.spec(null);
    Graph graph = readHlo();
    HloLayering lay = HloLayering.of(graph, "--hlo " + hlo);
    HloPipelinePlan p;
    try (io.meshplan.exec.LocalExecutor pool = (io.meshplan.exec.LocalExecutor) executor.open();
        Progress progress = Progress.start("planning")) {
      p = HloPipelinePlanner.of(graph, cs, cluster.comm(cs), cluster.memoryPerGpu(cs),
          cluster.p2p(cs), cluster.overlapGradReduce, pool, progress::update).plan(lay, n);
    }
    PrintWriter w = spec.commandLine().getOut();
    w.print(json ? HloPlanJson.write(p) : HloPlanText.write(p));
    return ExitCodes.OK;
  }

  /** The flags that describe a preset's model and batch, or write files, do not apply. */
  private void refuseFlagsBesideHlo() {
    java.util.Map<String, Boolean> given = new java.util.LinkedHashMap<>();
    given.put("--model", model.model != null);
    given.put(String.valueOf(model.overrides()), model.overrides() != null);
    given.put("--global-batch", spec.commandLine().getParseResult()
        .hasMatchedOption("--global-batch"));
    given.put("--megatron-grid", megatronGrid);
    given.put("--out", out != null);
    given.put("--report", report != null);
    given.put("--compare", compare != null);
    given.put("--spark", !executor.local());
    for (var flag : given.entrySet()) {
      if (flag.getValue()) {
        throw new InputException(flag.getKey() + " cannot be used with --hlo: the module fixes "
            + "the model and its microbatch, and its plan is printed (--json for machines)");
      }
    }
  }

  /** {@code --microbatches} with {@code --hlo}: a positive count, not auto. */
  private int hloMicrobatches() {
    if ("auto".equalsIgnoreCase(microbatches.trim())) {
      throw new InputException("--hlo needs --microbatches N: the module's batch is one "
          + "microbatch, and N of them make an iteration");
    }
    int n;
    try {
      n = Integer.parseInt(microbatches.trim());
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n <= 0) {
      throw new InputException("--microbatches must be a positive integer, got '"
          + microbatches + "'");
    }
    return n;
  }

  /** The module's entry computation with its calls inlined; its warnings go to standard error. */
  private Graph readHlo() {
    HloModule module = new HloParser().parse(hlo);
    Graph inlined = CallInliner.inline(module).graph();
    Graph graph = new Graph(module.name(), inlined.instructions(), inlined.aliases());
    if (graph.size() > ShardCommand.MAX_INSTRUCTIONS) {
      throw new InputException("--hlo " + hlo + " has " + graph.size() + " instructions after "
          + "inlining, more than the limit of " + ShardCommand.MAX_INSTRUCTIONS);
    }
    java.io.PrintWriter err = spec.commandLine().getErr();
    for (String warning : module.warnings()) {
      err.println("meshplan: warning: " + warning);
    }
    err.flush();
    return graph;
  }
}
