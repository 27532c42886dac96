package io.meshplan.cli;

import io.meshplan.calibrate.ComputeScale;
import io.meshplan.calibrate.ComputeScaleFitter;
import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.calibrate.TrainingLogs;
import io.meshplan.calibrate.TrainingRun;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.planner.TrainRunSimulator;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code meshplan calibrate --train}: reads training logs, fits the compute scale of --cluster's
 * GPU architecture ({@link ComputeScaleFitter}) and writes it to a profile.
 *
 * @param cluster --cluster
 * @param clusterText --cluster as given (it may name a file, which is an input)
 * @param logs the training logs
 * @param config torchtitan's job config, or null
 * @param out the profile to write
 * @param force whether --force was given (an existing profile may be replaced)
 * @param json whether to print JSON
 */
record TrainCalibration(ClusterSpec cluster, String clusterText, List<Path> logs, Path config,
    Path out, boolean force, boolean json) {

  int run(PrintWriter stdout, PrintWriter stderr) {
    if (logs.isEmpty()) {
      throw new InputException("--config is torchtitan's job config for --train logs; give the "
          + "logs with --train LOG...");
    }
    OutputPaths paths = new OutputPaths().force(force).output("--out", out);
    for (Path f : logs) {
      paths.input("--train", f);
    }
    paths.input("--config", config).input("--cluster", CliValues.existingFile(clusterText))
        .check();
    io.meshplan.cluster.Architecture architecture = cluster.gpu().architecture();
    String arch = architecture.word();
    List<TrainRunSimulator> sims = new ArrayList<>();
    List<TrainingRun> read = new ArrayList<>();
    for (Path f : logs) {
      TrainingRun r = TrainingLogs.read(f, Optional.ofNullable(config));
      // A copy of a log states the same run: one measurement counted twice would weigh it
      // double in the fit and narrow its band, so it is read once.
      java.util.Optional<TrainingRun> same = read.stream()
          .filter(o -> o.withSource(r.source()).equals(r)).findFirst();
      if (same.isPresent()) {
        stderr.println(ExceptionMapper.warning(f + " states the same run as "
            + same.get().source() + " (the same job and iteration times); read once"));
        continue;
      }
      read.add(r);
      if (r.gpu().isPresent() && ComputeScale.architecture(r.gpu().get()) != architecture) {
        throw new InputException(f + ": the log ran on " + r.gpu().get() + " GPUs but --cluster "
            + "has " + cluster.gpu().name() + "; calibrate one architecture at a time, with its "
            + "own --cluster");
      }
      sims.add(TrainRunSimulator.of(r, cluster));
    }
    List<ComputeScaleFitter.Run> runs = new ArrayList<>();
    for (TrainRunSimulator s : sims) {
      runs.add(new ComputeScaleFitter.Run(s.run().source(), s.run().iterationSeconds(),
          s::iterationSeconds));
    }
    double max = Double.MAX_VALUE;
    for (TrainRunSimulator s : sims) {
      max = Math.min(max, s.maxScale());
    }
    ComputeScaleFitter.Fit fit = new ComputeScaleFitter(max).fit(arch, runs);
    Profile p = new Profile(Profile.VERSION, cluster.toShortString(), List.of())
        .withCompute(architecture, new ComputeScale(round(fit.scale()), runs.size(), List.of(),
            band(fit)));
    ProfileFiles.write(out, p);
    stdout.print(json ? json(arch, fit, sims) : text(arch, fit, sims));
    return ExitCodes.OK;
  }

  /** The 90% band of the fit's own residuals, where there are enough of them. */
  private static io.meshplan.calibrate.ErrorBand band(ComputeScaleFitter.Fit fit) {
    return io.meshplan.calibrate.ErrorBand.of(fit.rows().stream()
        .map(r -> r.measured() / r.after()).toList(), io.meshplan.calibrate.ErrorBand.IN_SAMPLE)
        .orElse(null);
  }

  /** Six significant digits: the fit's own tolerance is 1e-7 in log scale. */
  private static double round(double v) {
    return io.meshplan.util.Units.roundSignificant(v, 6);
  }

  private String text(String arch, ComputeScaleFitter.Fit fit, List<TrainRunSimulator> sims) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "wrote %s: compute scale %s = %.4f from %d run(s)%n",
        out, arch, fit.scale(), sims.size()));
    b.append(String.format(Locale.ROOT, "%-32s %-10s %-10s %10s %10s %10s %8s %8s%n", "log",
        "framework", "tp/pp/dp", "measured", "before", "after", "before%", "after%"));
    for (int i = 0; i < sims.size(); i++) {
      ComputeScaleFitter.Row r = fit.rows().get(i);
      TrainRunSimulator s = sims.get(i);
      b.append(String.format(Locale.ROOT, "%-32s %-10s %-10s %9.4fs %9.4fs %9.4fs %+7.1f%% "
          + "%+7.1f%%%n", Path.of(r.name()).getFileName(), s.run().framework(),
          split(s.config()), r.measured(), r.before(), r.after(),
          percent(r.before() / r.measured() - 1), percent(r.error())));
    }
    return b.toString();
  }

  /** tp/pp/dp, with the context- and expert-parallel sizes where they are above 1. */
  private static String split(io.meshplan.plan.ParallelConfig c) {
    return c.tensorParallel() + "/" + c.pipelineParallel() + "/" + c.dataParallel()
        + (c.contextParallel() > 1 ? " " + c.cpExchange().label(c.contextParallel()) : "")
        + (c.expertParallel() > 1 ? " ep" + c.expertParallel() : "");
  }

  /** A relative error in percent, with no "-0.0" for an error that rounds to zero. */
  private static double percent(double relative) {
    double p = 100 * relative;
    return Math.abs(p) < 0.05 ? 0 : p;
  }

  private String json(String arch, ComputeScaleFitter.Fit fit, List<TrainRunSimulator> sims) {
    com.fasterxml.jackson.databind.ObjectMapper m = new com.fasterxml.jackson.databind
        .ObjectMapper().enable(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT);
    com.fasterxml.jackson.databind.node.ObjectNode root = m.createObjectNode();
    root.put("profile", out.toString());
    root.put("architecture", arch);
    root.put("scale", fit.scale());
    com.fasterxml.jackson.databind.node.ArrayNode rows = root.putArray("runs");
    for (int i = 0; i < sims.size(); i++) {
      ComputeScaleFitter.Row r = fit.rows().get(i);
      io.meshplan.plan.ParallelConfig c = sims.get(i).config();
      rows.addObject().put("log", r.name()).put("framework", sims.get(i).run().framework())
          .put("tensorParallel", c.tensorParallel()).put("pipelineParallel", c.pipelineParallel())
          .put("dataParallel", c.dataParallel()).put("contextParallel", c.contextParallel())
          .put("expertParallel", c.expertParallel())
          .put("measuredSeconds", r.measured()).put("beforeSeconds", r.before())
          .put("afterSeconds", r.after()).put("error", r.error());
    }
    try {
      return m.writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the fit as JSON", e);
    }
  }
}
