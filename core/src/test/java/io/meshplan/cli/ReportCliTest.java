package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.interop.PlanSimulator;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --report} and {@code --compare} on {@code simulate}, through the real command line. */
class ReportCliTest {
  private static final String[] SIM = {"simulate", "--model", "gpt-1.7b", "--layers", "4",
      "--cluster", "1x4:a100-80gb", "--tp", "1", "--pp", "2", "--dp", "2", "--micro-batch", "1",
      "--global-batch", "8"};

  private static String[] with(String... more) {
    String[] all = new String[SIM.length + more.length];
    System.arraycopy(SIM, 0, all, 0, SIM.length);
    System.arraycopy(more, 0, all, SIM.length, more.length);
    return all;
  }

  @Test
  void simulateWritesAReportAndComparesWithAPlanFile(@TempDir Path dir) throws Exception {
    // The plan to compare with: the same model as a 4-stage 1F1B configuration, written the way
    // 'plan --out' writes plans.
    ModelSpec p = Presets.get("gpt-1.7b");
    ModelSpec m = new ModelSpec(p.name(), p.family(), 4, p.hidden(), p.heads(), p.kvHeads(),
        p.ffn(), p.vocab(), p.seq(), p.batch(), p.dtype(), p.arch());
    PricedJob setup = JobFlags.priced(m, false, new ClusterOptions(), java.util.Optional.empty(),
        "1x4:a100-80gb", 8, 0,
        PlannerOptions.defaults());
    PipelinePlan other = new PlanSimulator(setup.layers()).simulate(setup.request(),
        new ParallelConfig(1, 4, 1, 1, 1, 8, Recompute.NONE, false, false)).orElseThrow()
        .plan();
    Path planFile = dir.resolve("other.json");
    Files.writeString(planFile, PlanJson.write(other));

    Path report = dir.resolve("sim.html");
    CliRun r = CliRun.of(with("--report", report.toString(), "--compare", planFile.toString()));
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    assertThat(r.out()).contains("wrote " + report);
    String html = Files.readString(report);
    assertThat(html).contains("id=\"timeline\"").contains("id=\"b-timeline\"")
        .contains("plan other.json");
    // The compared plan has 4 stages, this configuration 2: the B side draws 4 timeline rows.
    assertThat(html.split("stage 3: idle", -1).length - 1).isEqualTo(1);
    assertThat(html.split("stage 1: idle", -1).length - 1).isEqualTo(2);
  }

  @Test
  void aComparedPlanIsPricedAsItWasPlanned(@TempDir Path dir) throws Exception {
    // A plan made at kernel-level prices, compared beside a plan at the shipped (fitted) prices:
    // the report's column for it shows its own iteration time. Before, the compared plan was
    // priced at the shipped prices, which on an H100 are slower by the fitted Hopper factor.
    String[] job = {"--model", "llama3.1-8b", "--layers", "4", "--seq", "1024", "--cluster",
        "1x8:h100", "--global-batch", "16"};
    Path kernel = dir.resolve("kernel.json");
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("plan"));
    args.addAll(java.util.List.of(job));
    args.addAll(java.util.List.of("--prices", "kernel", "--out", kernel.toString()));
    CliRun k = CliRun.of(args.toArray(String[]::new));
    assertThat(k.code()).as(k.err()).isZero();
    double own = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(Files.readString(kernel)).get("iterationSeconds").asDouble();
    Path report = dir.resolve("r.html");
    args = new java.util.ArrayList<>(java.util.List.of("plan"));
    args.addAll(java.util.List.of(job));
    args.addAll(java.util.List.of("--compare", kernel.toString(), "--report",
        report.toString()));
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    String text = Files.readString(report).replaceAll("<[^>]+>", " ").replaceAll("\\s+", " ");
    java.util.regex.Matcher row = java.util.regex.Pattern.compile(
        "iteration time ([0-9.]+) s ([0-9.]+) s").matcher(text);
    assertThat(row.find()).as(text).isTrue();
    // The compared plan's own figure, to 4 decimals; this plan's, at the fitted prices, is not it.
    assertThat(row.group(2)).isEqualTo(String.format(java.util.Locale.ROOT, "%.4f", own));
    assertThat(Double.parseDouble(row.group(1))).isGreaterThan(own * 1.05);
  }

  @Test
  void aComparedPlanIsDrawnOnItsOwnClusterAndMemory(@TempDir Path dir) throws Exception {
    // A plan on 2 x 8 H100s searched within 12 GiB, compared beside one on 1 x 8 H100s at the
    // default 76 GiB (95% of 80). Before, the compared side was counted against this plan's
    // cluster ("16 of 8" GPUs) and drawn against its 76 GiB.
    Path two = dir.resolve("two.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "4", "--seq", "1024",
        "--cluster", "2x8:h100", "--global-batch", "32", "--memory", "12GiB", "--out",
        two.toString());
    assertThat(p.code()).as(p.err()).isZero();
    Path report = dir.resolve("r.html");
    CliRun r = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "4", "--seq", "1024",
        "--cluster", "1x8:h100", "--global-batch", "32", "--compare", two.toString(),
        "--report", report.toString());
    assertThat(r.code()).as(r.err()).isZero();
    String text = Files.readString(report).replaceAll("<[^>]+>", " ").replaceAll("\\s+", " ");
    assertThat(text).contains("GPUs used 8 of 8 16 of 16 ");
    assertThat(text).containsPattern("peak memory per GPU [0-9.]+ GiB \\(stage \\d+\\) of 76\\.0 "
        + "GiB [0-9.]+ GiB \\(stage \\d+\\) of 12\\.0 GiB ");
  }

  @Test
  void reportBytesEqualThePlanJson(@TempDir Path dir) throws Exception {
    // A 2-stage plan written as 'plan --out' writes it, simulated again with a report: every
    // stage's bytes per GPU in the report equal the plan file's.
    ModelSpec p = Presets.get("gpt-1.7b");
    ModelSpec m = new ModelSpec(p.name(), p.family(), 4, p.hidden(), p.heads(), p.kvHeads(),
        p.ffn(), p.vocab(), p.seq(), p.batch(), p.dtype(), p.arch());
    PricedJob setup = JobFlags.priced(m, false, new ClusterOptions(), java.util.Optional.empty(),
        "1x4:a100-80gb", 8, 0,
        PlannerOptions.defaults());
    PipelinePlan plan = new PlanSimulator(setup.layers()).simulate(setup.request(),
        new ParallelConfig(1, 2, 2, 1, 1, 8, Recompute.NONE, false, false)).orElseThrow()
        .plan();
    Path planFile = dir.resolve("plan.json");
    Files.writeString(planFile, PlanJson.write(plan));
    Path report = dir.resolve("r.html");
    CliRun r = CliRun.of("simulate", "--plan", planFile.toString(), "--cluster", "1x4:a100-80gb",
        "--report", report.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    String html = Files.readString(report);
    com.fasterxml.jackson.databind.JsonNode json =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(Files.readString(planFile));
    java.util.regex.Matcher cell = java.util.regex.Pattern.compile(
        "data-axis=\"(\\w+)\" data-bytes=\"([^\"]+)\"").matcher(html);
    int cells = 0;
    for (int s = 0; s < 2; s++) {
      com.fasterxml.jackson.databind.JsonNode b = json.get("stages").get(s)
          .get("communicationBytesPerGpu");
      for (int a = 0; a < 3; a++) {
        assertThat(cell.find()).isTrue();
        assertThat(Double.parseDouble(cell.group(2))).as("stage %d %s", s, cell.group(1))
            .isEqualTo(b.get(cell.group(1)).doubleValue());
        cells++;
      }
      // Two stages: each sends activations or gradients on the pipeline.
      assertThat(b.get("pipeline").doubleValue()).isPositive();
    }
    assertThat(cells).isEqualTo(6);
  }

  @Test
  void compareNeedsReportAndReportNeverOverwritesAnInput(@TempDir Path dir) throws Exception {
    Path plan = dir.resolve("p.json");
    Files.writeString(plan, "{}");
    CliRun r = CliRun.of(with("--compare", plan.toString()));
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("--compare").contains("--report");
    CliRun r2 = CliRun.of(with("--report", plan.toString(), "--compare", plan.toString()));
    assertThat(r2.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r2.err()).contains("never overwrites its inputs");
    assertThat(Files.readString(plan)).isEqualTo("{}");
    CliRun r3 = CliRun.of(with("--report", dir.toString()));
    assertThat(r3.code()).isEqualTo(ExitCodes.BAD_INPUT);
  }
}
