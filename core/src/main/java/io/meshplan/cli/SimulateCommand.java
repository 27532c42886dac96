package io.meshplan.cli;

import io.meshplan.interop.PlanSimulator;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.report.ReportSide;
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
        + "--pp --dp ...) or of a plan saved by 'meshplan plan --out' (--plan FILE).")
final class SimulateCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin ModelOptions model = new ModelOptions();

  @Mixin ClusterOptions cluster = new ClusterOptions();

  @Mixin ParallelOptions parallel = new ParallelOptions();

  @Mixin AttentionOptions attention = new AttentionOptions();

  @Option(names = "--plan", description = "A plan file written by 'meshplan plan --out'.")
  Path plan;

  @Option(names = "--json", description = "Print the result as JSON.")
  boolean json;

  @Option(names = "--report", description = "Also write a self-contained HTML report (cluster, "
      + "pipeline timeline, memory, time breakdown, shardings) to this file.")
  Path report;

  @Option(names = "--compare", description = "A plan file (from 'plan --out') to draw beside "
      + "this one in the --report.")
  Path compare;

  @Override
  public Integer call() {
    SimulationResult sim;
    java.util.Map<String, Path> inputs = new java.util.LinkedHashMap<>(model.inputFiles());
    inputs.putAll(cluster.inputFiles());
    ReportFiles.check(report, compare, null, plan, inputs);
    String title;
    io.meshplan.cluster.ClusterSpec cs;
    double memoryPerGpu;
    Optional<PipelinePlan> drawn;
    boolean stagesStated = false;
    if (plan != null) {
      if (parallel.any() || model.model != null) {
        throw new InputException("--plan carries the model and the parallel sizes; drop --model"
            + " and --tp/--pp/--dp/--vpp/--micro-batch/--global-batch");
      }
      PlanFiles saved = PlanFiles.simulate(plan, cluster, attention.chosen(),
          spec.commandLine().getErr());
      sim = saved.simulation();
      drawn = Optional.of(saved.plan());
      title = saved.title() + " (plan " + plan.getFileName() + ")";
      cs = saved.cluster();
      memoryPerGpu = saved.memoryPerGpu();
    } else {
      ParallelConfig c = parallel.config();
      c.checkOverlaps(cluster.overlaps());
      stagesStated = c.unevenStages();
      PricedJob setup = JobFlags.priced(model, cluster, attention, null, c.globalBatchSize(), 0,
          PlannerOptions.defaults());
      model.printWarnings(spec.commandLine().getErr());
      FlagWords.check(FlagWords.PARALLEL, () -> c.check(setup.cluster().gpuCount(),
          setup.model().layers(), setup.model().heads(), setup.model().kvHeads()));
      PlanSimulator.Evaluated e = new PlanSimulator(setup.layers()).simulate(setup.request(), c,
          parallel.gpipe())
          .orElseThrow(() -> new InputException("--tp " + c.tensorParallel() + " cannot split "
              + "this model's layers evenly (Megatron-LM needs heads, key/value heads, the "
              + "feed-forward size and the vocabulary divisible by it)"));
      sim = e.simulation();
      drawn = Optional.of(e.plan());
      title = setup.model().name() + " on " + setup.cluster().toShortString();
      cs = setup.cluster();
      memoryPerGpu = setup.request().memoryPerGpu();
    }
    PrintWriter w = spec.commandLine().getOut();
    boolean module = drawn.get().hloModule().isPresent();
    w.print(json ? SimulationJson.write(sim, false)
        : module ? SimulationText.write(sim, "microbatches") : SimulationText.write(sim));
    if (!json && stagesStated) {
      w.println(stageLayers(drawn.get()));
    }
    ReportFiles.write(report, compare, new ReportSide("meshplan simulate: " + title, drawn, sim),
        cs, memoryPerGpu, new ClusterOptions(), spec.commandLine().getErr());
    if (report != null && !json) {
      w.println("wrote " + report);
    }
    return ExitCodes.OK;
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
