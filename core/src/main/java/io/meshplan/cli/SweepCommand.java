package io.meshplan.cli;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.Sweep;
import io.meshplan.sweep.SweepCsv;
import io.meshplan.sweep.SweepGrid;
import io.meshplan.sweep.SweepGridReader;
import io.meshplan.sweep.SweepJsonl;
import io.meshplan.sweep.SweepText;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code meshplan sweep}: the best plan of every point of a capacity grid. */
@Command(name = "sweep", mixinStandardHelpOptions = true,
    description = "Plan every point of a grid of models, clusters, GPU types, global batches and "
        + "sequence lengths (read from YAML); write each point's predicted iteration time, "
        + "tokens/s, MFU, memory and cost to CSV and JSON Lines, and print the Pareto front of "
        + "tokens/s against GPUs.")
final class SweepCommand implements Callable<Integer> {
  /** The longest point time limit, seconds (a week). */
  static final double MAX_TIMEOUT = 604_800;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--quiet", description = "Draw no progress line on standard error (none is"
      + " drawn anyway when standard error is not a terminal).")
  boolean quiet;

  @Option(names = "--grid", required = true, paramLabel = "FILE",
      description = "The YAML grid (see examples/sweep.yaml); its models are presets or"
          + " config.json paths (absolute, or relative to the grid's directory); its gpus and"
          + " fabrics are names of meshplan's catalog or of --catalog's.")
  Path grid;

  @Option(names = "--manual", description = "Each point's best Megatron-LM configuration "
      + "(tensor, pipeline and data parallel sizes, micro batch, recomputation) instead of the "
      + "planner's plan.")
  boolean manual;

  @Option(names = "--prices", paramLabel = "public|kernel", description = "Compute prices: "
      + "public (default), each GPU architecture's kernel throughput times the factor meshplan "
      + "ships, fitted on published runs; kernel, the kernel-level prices alone.")
  String prices;

  @Option(names = "--train-tokens", paramLabel = "N", description = "Tokens the whole run "
      + "trains on, 1 to 10^16: every planned point gets its iterations, days to train (with "
      + "interruptions when a checkpoint bandwidth is given) and cost, and the text a Pareto "
      + "front of days to train against GPUs.")
  Long trainTokens;

  @picocli.CommandLine.Mixin TimeToTrainOptions timeToTrain = new TimeToTrainOptions();

  @Option(names = "--csv", paramLabel = "FILE", description = "Write the results as CSV."
      + OutputPaths.FILE_ONLY)
  Path csv;

  @Option(names = "--jsonl", paramLabel = "FILE", description = "Write the results as JSON "
      + "Lines." + OutputPaths.FILE_ONLY)
  Path jsonl;

  @Option(names = "--out", paramLabel = "DIR", description = "Write sweep.csv and sweep.jsonl "
      + "into this existing directory." + OutputPaths.FILE_ONLY)
  Path outDir;

  @Option(names = "--gpu-hour-price", paramLabel = "USD", description = "Price of one GPU for "
      + "one hour; adds the cost per million tokens.")
  Double price;

  @Option(names = "--point-timeout", paramLabel = "SECONDS", description = "Time limit per "
      + "point; a point past it is recorded as timed_out with a lower bound on its iteration "
      + "time (default: none).")
  Double pointTimeout;

  @Mixin ExecutorOptions executor = new ExecutorOptions();

  @Mixin ForceOption force = new ForceOption();

  @Mixin CatalogOption catalog = new CatalogOption();

  @Override
  public Integer call() {
    // The range plan and simulate take: a price of 0 makes every point's cost 0.
    TimeToTrainOptions.ranged("--gpu-hour-price", price, TimeToTrainOptions.MIN_PRICE,
        TimeToTrainOptions.MAX_PRICE, "USD");
    if (pointTimeout != null && !(pointTimeout > 0 && pointTimeout <= MAX_TIMEOUT)) {
      throw new InputException("--point-timeout must be more than 0 and at most "
          + (long) MAX_TIMEOUT + " seconds, got " + pointTimeout);
    }
    Path outCsv = csv;
    Path outJsonl = jsonl;
    if (outDir != null) {
      OutputPaths.refuseDash("--out", outDir);
      io.meshplan.util.AtomicFiles.link(outDir).ifPresent(why -> {
        throw new InputException("--out " + outDir + ": " + why);
      });
      if (!Files.isDirectory(outDir)) {
        throw new InputException("--out " + outDir + ": not an existing directory");
      }
      if (csv != null || jsonl != null) {
        throw new InputException("--out writes sweep.csv and sweep.jsonl; give either --out or "
            + "--csv/--jsonl");
      }
      outCsv = outDir.resolve("sweep.csv");
      outJsonl = outDir.resolve("sweep.jsonl");
    }
    String csvFlag = outDir != null ? "--out (sweep.csv)" : "--csv";
    String jsonlFlag = outDir != null ? "--out (sweep.jsonl)" : "--jsonl";
    SweepGrid g = SweepGridReader.read(grid, catalog.catalog());
    OutputPaths paths = new OutputPaths().force(force.force).output(csvFlag, outCsv)
        .output(jsonlFlag, outJsonl).input("--grid", grid).input("--catalog", catalog.file)
        .inputs(timeToTrain.inputFiles());
    g.configModels().forEach((name, c) -> paths.input("the grid's model", c.file()));
    paths.check();
    OptionalDouble usd = price == null ? OptionalDouble.empty() : OptionalDouble.of(price);
    boolean timed = trainTokens != null || timeToTrain.trainIterations != null;
    timeToTrain.iterations(trainTokens, 1, 1);
    timeToTrain.check(timed, false);
    boolean kernelPrices = CliValues.kernelPrices(prices);
    PointTask task = new PointTask(manual, pointTimeout == null ? 0 : pointTimeout,
        g.configSpecs(), g.hardware(), kernelPrices);
    List<PointResult> results;
    try (TaskExecutor ex = executor.open();
        Progress progress = executor.local()
            ? Progress.start(spec.commandLine().getErr(), quiet, "sweep", "points", g.size())
            : Progress.none()) {
      results = new Sweep(ex, task).run(g, progress::update);
    }
    java.util.Map<Integer, io.meshplan.sweep.TrainingOutcome> runs = new java.util.HashMap<>();
    if (timed) {
      List<PointResult> timedResults = new java.util.ArrayList<>();
      for (PointResult r : results) {
        timedResults.add(r);
        if (r.status() != io.meshplan.sweep.PointStatus.OK) {
          continue;
        }
        io.meshplan.sweep.SweepPoint p = r.point();
        io.meshplan.model.ModelSpec m = io.meshplan.sweep.PointEvaluator.model(p,
            g.configSpecs());
        try {
          runs.put(p.index(), timeToTrain.outcome(new TimeToTrainOptions.Run(
              timeToTrain.iterations(trainTokens, p.globalBatch(), p.seq()).getAsLong(),
              r.iterationSeconds(), m.parameterCount(), "f32".equals(p.dtype()), p.gpus(),
              p.nodes(), g.hardware().gpu(p.gpu()), 0)));
        } catch (io.meshplan.util.InputException e) {
          // One point's run the flags cannot time (a checkpoint interval past its iterations)
          // is that point's refusal, not the grid's: no point is dropped.
          timedResults.set(timedResults.size() - 1, PointResult.failed(p,
              io.meshplan.sweep.PointStatus.REJECTED, Double.NaN, Double.NaN,
              "time to train: " + e.getMessage()));
        }
      }
      results = timedResults;
    }
    PrintWriter w = spec.commandLine().getOut();
    w.print(SweepText.write(results, usd, runs));
    w.println(kernelPrices ? "prices: kernel-level (--prices kernel)"
        : io.meshplan.planner.PublicPrices.summary());
    if (outCsv != null) {
      OutputPaths.write(csvFlag, outCsv, SweepCsv.write(results, usd, runs));
      w.println("wrote " + outCsv);
    }
    if (outJsonl != null) {
      OutputPaths.write(jsonlFlag, outJsonl, SweepJsonl.write(results, usd, runs));
      w.println("wrote " + outJsonl);
    }
    return ExitCodes.OK;
  }
}
