package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.PlanSimulator;
import io.meshplan.plan.BoundConfig;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.report.ReportSide;
import io.meshplan.sim.MemoryFit;
import io.meshplan.sim.SimulationJson;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code meshplan simulate}: the predicted iteration of a Megatron-LM style configuration or of a
 * saved plan.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true,
    description = "Simulate one training iteration of a Megatron-LM style configuration (--tp "
        + "--pp --dp ...) or of a plan saved by 'meshplan plan --out' (--plan FILE).",
    footer = {"", "Exit codes: 0 simulated and fits, 2 bad input, 3 simulated but the worst"
        + " stage's peak memory exceeds what a GPU may use (the figures are printed all the"
        + " same)."})
final class SimulateCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin ModelOptions model = new ModelOptions();

  @Mixin RetiredBatchOption retiredBatch = new RetiredBatchOption();

  @Mixin ClusterOptions cluster = new ClusterOptions();

  @Mixin ParallelOptions parallel = new ParallelOptions();

  @Mixin AttentionOptions attention = new AttentionOptions();

  @Mixin ForceOption force = new ForceOption();

  @Mixin TimeToTrainOptions timeToTrain = new TimeToTrainOptions();

  @Mixin TimeToTrainOptions.Price gpuHourPrice = new TimeToTrainOptions.Price();

  @Option(names = "--plan", description = "A plan file written by 'meshplan plan --out'.")
  Path plan;

  @Option(names = "--quiet", description = "Draw no progress line on standard error (none is"
      + " drawn anyway when standard error is not a terminal).")
  boolean quiet;

  @Option(names = "--json", description = "Print the result as JSON.")
  boolean json;

  @Option(names = "--report", description = "Also write a self-contained HTML report (cluster, "
      + "pipeline timeline, memory, time breakdown, shardings) to this file."
      + OutputPaths.FILE_ONLY)
  Path report;

  @Option(names = "--compare", description = "A plan file (from 'plan --out') to draw beside "
      + "this one in the --report.")
  Path compare;

  /**
   * One simulated iteration and what it was simulated on.
   *
   * @param sim the simulation
   * @param plan the plan simulated
   * @param subject the model or module, for messages
   * @param title the report's title
   * @param cluster the cluster
   * @param memoryPerGpu the memory one GPU may use, bytes
   * @param stagesStated whether the flags stated the first or last stage's layers
   * @param iterations the run's iterations for --train-tokens, or empty
   */
  private record Simulated(SimulationResult sim, PipelinePlan plan, String subject, String title,
      ClusterSpec cluster, double memoryPerGpu, boolean stagesStated,
      java.util.OptionalLong iterations) {}

  @Override
  public Integer call() {
    gpuHourPrice.checked();
    java.util.Map<String, Path> inputs = new java.util.LinkedHashMap<>(model.inputFiles());
    inputs.putAll(cluster.inputFiles());
    inputs.putAll(timeToTrain.inputFiles());
    ReportFiles.check(report, compare, null, plan, inputs, force.force);
    Simulated s = plan != null ? fromPlan() : fromFlags();
    if (timeToTrain.trainIterations != null) {
      if (s.iterations().isPresent()) {
        throw new InputException("give --train-tokens or --train-iterations, not both");
      }
      s = new Simulated(s.sim(), s.plan(), s.subject(), s.title(), s.cluster(), s.memoryPerGpu(),
          s.stagesStated(), timeToTrain.iterations(null, 1, 1));
    }
    cluster.warnIfProfileForeign(s.cluster(), spec.commandLine().getErr());
    SimulationResult sim = s.sim();
    MemoryFit fit = MemoryFit.of(sim, s.memoryPerGpu());
    PrintWriter w = spec.commandLine().getOut();
    boolean module = s.plan().hloModule().isPresent();
    io.meshplan.planner.Pricing pricing = cluster.pricing();
    io.meshplan.cluster.GpuSpec gpu = s.cluster().gpu();
    timeToTrain.check(s.iterations().isPresent(), gpuHourPrice.usd != null);
    if (module && s.iterations().isPresent()) {
      throw new InputException("--train-iterations times a model's run; the plan of an HLO "
          + "module counts microbatches");
    }
    Optional<TimeToTrainOptions.Run> run = s.iterations().isEmpty() ? Optional.empty()
        : Optional.of(TimeToTrainOptions.Run.of(s.iterations().getAsLong(),
            sim.iterationSeconds(), s.plan().model(), s.cluster()));
    // Priced before anything is printed, so that a refusal is the only output.
    String timeText = run.map(r -> timeToTrain.runLine(r, Math.round(sim.tokensPerSecond()
        * sim.iterationSeconds())) + timeToTrain.text(r, gpuHourPrice.usd)).orElse("");
    w.print(json ? withTimeToTrain(PriceReport.json(SimulationJson.write(sim, false, fit,
        (plan != null && attention.chosen().isEmpty() ? s.plan().attentionKernel()
            : attention.kernel()).map(io.meshplan.cluster.AttentionKernel::word)), pricing, gpu,
        module ? "module" : io.meshplan.model.Fp8Training.word(s.plan().model().dtype()),
        sim.iterationSeconds(), Optional.of(s.plan())), run)
        : SimulationText.write(sim, module ? "microbatches" : "tokens", Optional.of(fit),
            PriceReport.band(pricing, gpu)));
    if (!json) {
      w.println(pricing.describe(gpu));
      if (!module) {
        PriceReport.finetuneLine(s.plan().model()).ifPresent(w::println);
      }
    }
    if (!json && s.stagesStated()) {
      w.println(stageLayers(s.plan()));
    }
    if (!json) {
      // The run: its iterations at the simulated iteration time.
      w.print(timeText);
    }
    ReportFiles.write(report, compare, new ReportSide("meshplan simulate: " + s.title(),
        Optional.of(s.plan()), sim).withRun(report == null ? Optional.empty()
            : run.flatMap(timeToTrain::report)), s.cluster(), s.memoryPerGpu(),
        new ClusterOptions(), spec.commandLine().getErr());
    if (report != null && !json) {
      w.println("wrote " + report);
    }
    if (!fit.fits()) {
      w.flush();
      spec.commandLine().getErr().println("meshplan: infeasible: "
          + ExceptionMapper.oneLine(doesNotFit(s.subject(), s.cluster(), fit)));
      return ExitCodes.INFEASIBLE;
    }
    return ExitCodes.OK;
  }

  /**
   * The refusal of a configuration whose peak memory exceeds a GPU's, worded as {@code plan}
   * words an infeasible plan.
   *
   * @param subject the model or module
   * @param cs the cluster
   * @param fit the need against the capacity; does not fit
   * @return e.g. {@code llama2-70b does not fit on 1x8:a100-80gb:ib-hdr200: stage 0 needs 153GiB
   *     per GPU, and 76GiB is available}
   */
  static String doesNotFit(String subject, ClusterSpec cs, MemoryFit fit) {
    return subject + " does not fit on " + cs.toShortString() + ": " + fit.words()
        + " (plan it with 'meshplan plan', or use more GPUs, a smaller micro batch or"
        + " recomputation)";
  }

  /** The simulation's JSON with {@code timeToTrain} where a run length was given. */
  private String withTimeToTrain(String json, Optional<TimeToTrainOptions.Run> run) {
    return run.isEmpty() ? json : JsonEdit.edit(json, root -> timeToTrain.json(
        root.putObject("timeToTrain"), run.get(), gpuHourPrice.usd));
  }

  private Simulated fromPlan() {
    java.util.List<String> given = JobFlags.given(model, parallel);
    if (!given.isEmpty()) {
      throw new InputException("--plan carries the model and the parallel sizes; drop "
          + String.join(", ", given));
    }
    // A plan is simulated at the prices it was planned at (kernel-level, or the calibration
    // profile it carries) unless the flags say otherwise.
    PlanFile file = PlanFile.read(plan);
    file.defaultPrices(cluster, spec.commandLine().getErr());
    PlanFiles saved = PlanFiles.simulate(file, cluster, attention.chosen(), attention.kernel(),
        spec.commandLine().getErr());
    return new Simulated(saved.simulation(), saved.plan(), saved.plan().source().title(),
        saved.title() + " (plan " + plan.getFileName() + ")", saved.cluster(),
        saved.memoryPerGpu(), false, java.util.OptionalLong.empty());
  }

  private Simulated fromFlags() {
    BoundConfig bound = JobFlags.bind(model, cluster, attention, parallel);
    ParallelConfig c = bound.parallel();
    PricedJob setup = JobFlags.priced(bound, cluster, attention, PlannerOptions.defaults());
    model.printWarnings(spec.commandLine().getErr());
    PlanSimulator.Evaluated e = Progress.during(spec.commandLine().getErr(), quiet,
        "simulate: pricing the layers",
        () -> Planner.simulate(setup, c, bound.gpipe()))
        .orElseThrow(() -> new InputException("--tp " + c.tensorParallel() + " cannot split "
            + "this model's layers evenly (Megatron-LM needs heads, key/value heads, the "
            + "feed-forward size and the vocabulary divisible by it)"));
    return new Simulated(e.simulation(), e.plan(), setup.model().name(),
        setup.model().name() + " on " + setup.cluster().toShortString(), setup.cluster(),
        setup.request().memoryPerGpu(), c.unevenStages(),
        bound.config().iterations(bound.model().seq()));
  }

  /** The layers of each pipeline stage, for a configuration with stated first or last stages. */
  private static String stageLayers(PipelinePlan p) {
    StringBuilder b = new StringBuilder("layers per stage:");
    for (int i = 0; i < p.pipelineStages(); i++) {
      int n = 0;
      for (io.meshplan.plan.StagePlan c : p.chunksOf(i)) {
        n += c.layerCount();
      }
      b.append(' ').append(n);
    }
    return b.append(" (blocks ").append(p.layersOf(0)).append(" on stage 0, ")
        .append(p.layersOf(p.pipelineStages() - 1)).append(" on stage ")
        .append(p.pipelineStages() - 1).append(')').toString();
  }
}
