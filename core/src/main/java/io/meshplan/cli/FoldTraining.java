package io.meshplan.cli;

import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.planner.FoldCalibration;
import io.meshplan.planner.PublicFolds;
import io.meshplan.planner.PublicRun;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code meshplan calibrate --train --folds ...}: fits each GPU architecture's compute factor to
 * meshplan's public folds by the leave-one-stack-out protocol ({@link FoldCalibration}), writes
 * the factors to a profile and prints every run's three errors.
 *
 * @param folds the fold names, or {@code public}
 * @param out the profile to write
 * @param force whether --force was given
 * @param json whether to print JSON
 */
record FoldTraining(List<String> folds, Path out, boolean force, boolean json) {

  int run(PrintWriter stdout) {
    new OutputPaths().force(force).output("--out", out).check();
    List<PublicRun> runs = PublicFolds.of(folds);
    FoldCalibration.Result r = new FoldCalibration(runs).run();
    ProfileFiles.write(out, r.profile());
    stdout.print(json ? json(r) : text(r));
    return ExitCodes.OK;
  }

  private String text(FoldCalibration.Result r) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "wrote %s from %d public runs%n", out, r.rows().size()));
    r.profile().compute().forEach((arch, c) -> b.append(String.format(Locale.ROOT,
        "  %-9s %s on %s of %s%s%n", arch, c.kernelLevel() ? "kernel-level (no factor)"
            : String.format(Locale.ROOT, "x%.4f", c.scale()),
        io.meshplan.util.Words.count(c.runs(), "run"),
        String.join(", ", c.folds()), c.errorBand().map(e -> String.format(Locale.ROOT,
            "; 90%% band x%.3f-x%.3f (%s)", e.low(), e.high(), e.basis())).orElse(""))));
    b.append(String.format(Locale.ROOT, "%-13s %-16s %-24s %10s %8s %8s %8s%n", "fold", "run",
        "cluster", "measured", "kernel", "in-smpl", "l-o-s-o"));
    for (FoldCalibration.Scored s : r.rows()) {
      b.append(String.format(Locale.ROOT, "%-13s %-16s %-24s %9.4fs %+7.1f%% %+7.1f%% %+7.1f%%%n",
          s.run().fold(), s.run().name(), s.run().cluster().toShortString(), s.measured(),
          100 * s.error(s.kernel()), 100 * s.error(s.inSample()), 100 * s.error(s.leaveOut())));
    }
    return b.toString();
  }

  private String json(FoldCalibration.Result r) {
    com.fasterxml.jackson.databind.ObjectMapper m = new com.fasterxml.jackson.databind
        .ObjectMapper().enable(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT);
    com.fasterxml.jackson.databind.node.ObjectNode root = m.createObjectNode();
    root.put("profile", out.toString());
    com.fasterxml.jackson.databind.node.ObjectNode arch = root.putObject("architectures");
    r.profile().compute().forEach((a, c) -> {
      com.fasterxml.jackson.databind.node.ObjectNode o = arch.putObject(a);
      o.put("scale", c.scale()).put("kernelLevel", c.kernelLevel()).put("runs", c.runs());
      c.folds().forEach(o.putArray("folds")::add);
      c.errorBand().ifPresent(e -> o.putObject("band").put("low", e.low()).put("high", e.high())
          .put("basis", e.basis()));
    });
    com.fasterxml.jackson.databind.node.ArrayNode rows = root.putArray("runs");
    for (FoldCalibration.Scored s : r.rows()) {
      rows.addObject().put("fold", s.run().fold()).put("name", s.run().name())
          .put("cluster", s.run().cluster().toShortString())
          .put("measuredSeconds", s.measured()).put("kernelSeconds", s.kernel())
          .put("inSampleSeconds", s.inSample()).put("leaveOneStackOutSeconds", s.leaveOut());
    }
    try {
      return m.writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the fit as JSON", e);
    }
  }
}
