package io.meshplan.cli;

import io.meshplan.interop.PlanSimulator;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.report.ReportSide;
import io.meshplan.sim.SimulationJson;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
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
    PricedJob setup;
    Optional<PipelinePlan> drawn;
    if (plan != null) {
      if (parallel.any() || model.model != null) {
        throw new InputException("--plan carries the model and the parallel sizes; drop --model"
            + " and --tp/--pp/--dp/--vpp/--micro-batch/--global-batch");
      }
      PipelinePlan p = PlanJson.read(plan.toString(), InputFiles.readString(plan, InputFiles.PLAN_MAX_BYTES, "plan file"));
      setup = JobFlags.priced(p.model(), true, cluster, p.cluster(), p.globalBatchSize(), 0,
          PlannerOptions.defaults());
      sim = new PlanSimulator(setup.layers()).simulate(setup.request(), p);
      drawn = Optional.of(p);
    } else {
      ParallelConfig c = parallel.config();
      setup = JobFlags.priced(model, cluster, null, c.globalBatchSize(), 0,
          PlannerOptions.defaults());
      PricedJob job = setup;
      FlagWords.check(FlagWords.PARALLEL, () -> c.check(job.cluster().gpuCount(),
          job.model().layers(), job.model().heads(), job.model().kvHeads()));
      PlanSimulator.Evaluated e = new PlanSimulator(setup.layers()).simulate(setup.request(), c,
          parallel.gpipe())
          .orElseThrow(() -> new InputException("--tp " + c.tensorParallel() + " cannot split "
              + "this model's layers evenly (Megatron-LM needs heads, key/value heads, the "
              + "feed-forward size and the vocabulary divisible by it)"));
      sim = e.simulation();
      drawn = Optional.of(e.plan());
    }
    PrintWriter w = spec.commandLine().getOut();
    w.print(json ? SimulationJson.write(sim, false) : SimulationText.write(sim));
    ReportFiles.write(report, compare, new ReportSide("meshplan simulate: "
        + setup.model().name() + " on " + setup.cluster().toShortString()
        + (plan != null ? " (plan " + plan.getFileName() + ")" : ""), drawn, sim),
        setup.cluster(), setup.request().memoryPerGpu(), new ClusterOptions());
    if (report != null && !json) {
      w.println("wrote " + report);
    }
    return ExitCodes.OK;
  }
}
