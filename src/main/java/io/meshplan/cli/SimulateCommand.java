package io.meshplan.cli;

import io.meshplan.interop.PlanSimulator;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.sim.SimulationJson;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Path;
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

  @Override
  public Integer call() {
    SimulationResult sim;
    if (plan != null) {
      if (parallel.any() || model.model != null) {
        throw new InputException("--plan carries the model and the parallel sizes; drop --model"
            + " and --tp/--pp/--dp/--vpp/--micro-batch/--global-batch");
      }
      PipelinePlan p = PlanJson.read(plan.toString(), PlanFiles.read("--plan", plan));
      TrainingSetup setup = TrainingSetup.of(p.model(), true, cluster, p.cluster(),
          p.globalBatchSize(), 0);
      sim = new PlanSimulator(setup.layers()).simulate(setup.request(), p);
    } else {
      ParallelConfig c = parallel.config();
      TrainingSetup setup = TrainingSetup.of(model, cluster, null, c.globalBatchSize(), 0);
      c.check(setup.cluster().gpuCount(), setup.model().layers(), setup.model().heads(),
          setup.model().kvHeads());
      sim = new PlanSimulator(setup.layers()).simulate(setup.request(), c)
          .orElseThrow(() -> new InputException("--tp " + c.tensorParallel() + " cannot split "
              + "this model's layers evenly (Megatron-LM needs heads, key/value heads, the "
              + "feed-forward size and the vocabulary divisible by it)")).simulation();
    }
    PrintWriter w = spec.commandLine().getOut();
    w.print(json ? SimulationJson.write(sim, false) : SimulationText.write(sim));
    return ExitCodes.OK;
  }
}
