package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.report.ReportHtml;
import io.meshplan.report.ReportInput;
import io.meshplan.report.ReportSide;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The {@code --report FILE} and {@code --compare FILE} options of {@code plan} and {@code
 * simulate}: checks the paths before any work, then re-simulates the plan to compare with and
 * writes the HTML report.
 */
final class ReportFiles {
  private ReportFiles() {}

  /**
   * Checks the report and compare paths (and that the report overwrites no input), before any
   * work.
   *
   * @param report the --report file, or null
   * @param compare the --compare file, or null
   * @param out the command's --out file, which the report must not name, or null
   * @param plan the command's --plan file, which the report must not overwrite, or null
   * @param force whether --force was given
   * @throws InputException when --compare is given without --report, or a path is unusable
   */
  static void check(Path report, Path compare, Path out, Path plan,
      java.util.Map<String, Path> inputs, boolean force) {
    if (compare != null && report == null) {
      throw new InputException("--compare " + compare + " draws a second plan in the HTML "
          + "report; add --report FILE");
    }
    new OutputPaths().output("--out", out).output("--report", report).input("--compare", compare)
        .input("--plan", plan).inputs(inputs).inputs(PlanFiles.namedFiles(plan))
        .inputs(PlanFiles.namedFiles(compare)).force(force).check();
    if (compare != null) {
      InputFiles.checkRegular(compare, "plan file");
    }
  }

  /**
   * Writes the report when {@code --report} was given.
   *
   * @param report the --report file, or null to do nothing
   * @param compare the --compare plan file, or null
   * @param main what the command planned or simulated
   * @param cluster the cluster it ran on
   * @param gpuMemoryBytes the usable memory of one GPU, bytes
   * @param compareOptions the cluster options to re-simulate the compared plan with
   * @param err standard error, for warnings about the compared plan's HLO module
   */
  static void write(Path report, Path compare, ReportSide main, ClusterSpec cluster,
      double gpuMemoryBytes, ClusterOptions compareOptions, java.io.PrintWriter err) {
    if (report == null) {
      return;
    }
    Optional<ReportSide> other = Optional.empty();
    if (compare != null) {
      // The compared plan is priced as it was planned: at kernel prices, or with the profile
      // it carries, where it was.
      PlanFile file = PlanFile.read(compare);
      file.defaultPrices(compareOptions, err);
      PlanFiles saved = PlanFiles.simulate(file, compareOptions, java.util.Optional.empty(), err);
      PipelinePlan p = saved.plan();
      other = Optional.of(new ReportSide("plan " + compare.getFileName() + ": "
          + p.source().title()
          + " on " + p.cluster(), Optional.of(p), saved.simulation())
          .on(new ReportSide.Cluster(saved.cluster().nodes(),
              saved.cluster().gpusPerNode(), saved.memoryPerGpu())));
    }
    String html = ReportHtml.write(new ReportInput(main, other,
        new ReportSide.Cluster(cluster.nodes(), cluster.gpusPerNode(), gpuMemoryBytes)));
    OutputPaths.write("--report", report, html);
  }
}
