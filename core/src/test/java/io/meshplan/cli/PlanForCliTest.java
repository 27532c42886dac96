package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code plan --for FRAMEWORK}: every plan it returns exports with {@code export --to FRAMEWORK}
 * (exit 0) and simulates again ({@code simulate --plan}) to the iteration it was planned with;
 * without {@code --for}, the best plan of each framework shown beside the plan is the one {@code
 * plan --for} returns.
 */
class PlanForCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] FRAMEWORKS = {"alpa", "megatron", "torchtitan", "deepspeed"};

  @TempDir Path dir;

  /** A seeded random small job: model flags, cluster and global batch. */
  private static List<String> randomJob(Random rnd) {
    String[] gpus = {"v100-32gb", "a100-80gb", "h100-80gb"};
    int heads = new int[] {4, 8, 16}[rnd.nextInt(3)];
    int hidden = heads * new int[] {32, 64}[rnd.nextInt(2)];
    int perNode = new int[] {2, 4, 8}[rnd.nextInt(3)];
    int nodes = 1 + rnd.nextInt(3);
    return List.of("--model", rnd.nextBoolean() ? "llama2-7b" : "gpt", "--layers",
        Integer.toString(2 + rnd.nextInt(7)), "--hidden", Integer.toString(hidden), "--heads",
        Integer.toString(heads), "--kv-heads", Integer.toString(heads), "--ffn",
        Integer.toString(4 * hidden), "--vocab", "1024", "--seq",
        Integer.toString(new int[] {128, 256}[rnd.nextInt(2)]), "--cluster",
        nodes + "x" + perNode + ":" + gpus[rnd.nextInt(3)], "--global-batch",
        Integer.toString(new int[] {8, 16, 32}[rnd.nextInt(3)]));
  }

  private static String[] args(String command, List<String> job, String... more) {
    List<String> a = new ArrayList<>(List.of(command));
    a.addAll(job);
    a.addAll(List.of(more));
    return a.toArray(String[]::new);
  }

  private static double iteration(String json) throws Exception {
    return JSON.readTree(json).get("iterationSeconds").asDouble();
  }

  /**
   * Plans a job for a framework; when it plans, the plan exports and simulates to its iteration.
   *
   * @return the plan's iteration, or NaN when the framework launches nothing that fits
   */
  private double planExportSimulate(List<String> job, String framework, String as)
      throws Exception {
    Path plan = dir.resolve(framework + "-plan.json");
    Files.deleteIfExists(plan);
    CliRun p = CliRun.of(args("plan", job, "--for", framework, "--json", "--quiet", "--out",
        plan.toString()));
    if (p.code() == ExitCodes.INFEASIBLE) {
      assertThat(p.err().lines()).as(as + p.err()).hasSize(1);
      assertThat(p.err()).as(as).startsWith("meshplan: infeasible: no plan that " + framework
          + " launches: ");
      return Double.NaN;
    }
    assertThat(p.code()).as(as + p.err()).isZero();
    JsonNode root = JSON.readTree(p.out());
    assertThat(root.get("for").asText()).isEqualTo(framework);
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", framework);
    assertThat(e.code()).as(as + " export: " + e.err()).isZero();
    assertThat(e.out()).as(as).isNotBlank();
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(as + " simulate: " + s.err()).isZero();
    // The simulator prices the saved stages with the planner's layer costs: the same iteration.
    assertThat(iteration(s.out())).as(as).isEqualTo(root.get("iterationSeconds").asDouble());
    return root.get("iterationSeconds").asDouble();
  }

  @Test
  void everyPlanForAFrameworkExportsToItAndSimulatesAlike() throws Exception {
    Random rnd = new Random(3636);
    Map<String, Integer> planned = new LinkedHashMap<>();
    for (int k = 0; k < 5; k++) {
      List<String> job = randomJob(rnd);
      for (String f : FRAMEWORKS) {
        double t = planExportSimulate(job, f, "case " + k + " " + job + " --for " + f + ": ");
        if (!Double.isNaN(t)) {
          planned.merge(f, 1, Integer::sum);
        }
      }
    }
    // Not vacuous: Alpa and Megatron-LM planned in most cases (torchtitan has no flavor of
    // these small models, and DeepSpeed no uneven stages).
    assertThat(planned.getOrDefault("alpa", 0)).isGreaterThanOrEqualTo(3);
    assertThat(planned.getOrDefault("megatron", 0)).isGreaterThanOrEqualTo(3);
  }

  @Test
  void torchtitansFlavorPlansAndExports() throws Exception {
    // LLaMA 3 8B is torchtitan's llama3 flavor 8B; one node of 8 H100s, 16 sequences of 1024.
    List<String> job = List.of("--model", "llama3-8b", "--seq", "1024", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16");
    assertThat(planExportSimulate(job, "torchtitan", "llama3-8b: ")).isPositive();
  }

  @Test
  void theBestOfEachFrameworkBesideThePlanIsWhatPlanForFinds() throws Exception {
    List<String> job = List.of("--model", "llama2-7b", "--layers", "6", "--hidden", "512",
        "--heads", "8", "--kv-heads", "8", "--ffn", "1376", "--vocab", "1024", "--seq", "256",
        "--cluster", "3x4:a100-80gb", "--global-batch", "24");
    CliRun p = CliRun.of(args("plan", job, "--json", "--quiet"));
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode root = JSON.readTree(p.out());
    double best = root.get("iterationSeconds").asDouble();
    JsonNode fw = root.get("frameworks");
    assertThat(fw.fieldNames()).toIterable().containsExactly(FRAMEWORKS);
    for (String f : FRAMEWORKS) {
      JsonNode o = fw.get(f);
      double t = planExportSimulate(job, f, f + ": ");
      assertThat(o.get("launchable").asBoolean()).as(f).isEqualTo(!Double.isNaN(t));
      if (Double.isNaN(t)) {
        assertThat(o.get("reason").asText()).as(f).isNotBlank();
        continue;
      }
      assertThat(o.get("iterationSeconds").asDouble()).as(f).isEqualTo(t);
      // slowdown = t / best - 1; no framework's plan beats the unrestricted one here.
      assertThat(o.get("slowdown").asDouble()).as(f).isEqualTo(t / best - 1)
          .isGreaterThanOrEqualTo(-1e-9);
    }
    CliRun text = CliRun.of(args("plan", job, "--quiet"));
    assertThat(text.out()).contains("best plan each framework launches, against this plan's ");
  }

  /**
   * The plan is the fastest of all: where a framework's own search finds a layout the whole
   * search passed by (gpt-1.7b over 25 Gb/s TCP, whose uniform grid beat the stage DP's plan by
   * 1.1%: 'megatron -1.1%' and a slowdown of -0.0114 were printed and written), that layout is
   * the plan, and no framework's slowdown is below 0.
   */
  @Test
  void noFrameworksPlanIsFasterThanThePlan() throws Exception {
    CliRun p = CliRun.of("plan", "--model", "gpt-1.7b", "--global-batch", "64", "--cluster",
        "2x8:h100:tcp-25", "--json", "--quiet");
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode root = JSON.readTree(p.out());
    double best = root.get("iterationSeconds").asDouble();
    root.get("frameworks").forEach(o -> {
      if (o.get("launchable").asBoolean()) {
        assertThat(o.get("slowdown").asDouble()).isGreaterThanOrEqualTo(0);
        assertThat(o.get("iterationSeconds").asDouble()).isGreaterThanOrEqualTo(best);
      }
    });
  }

  /**
   * The README's journey on a small heterogeneous plan: 7 layers on 3 x 4 A100s plan as a 1x4
   * stage of 3 layers and a 2x4 stage of 4 (data-parallel 4 and 8), which Megatron-LM cannot
   * run (one data-parallel size for all stages); the refusal names the way on, {@code --for
   * megatron}, whose plan then exports.
   */
  @Test
  void anUnlaunchablePlanFilesRefusalNamesPlanFor() throws Exception {
    List<String> job = List.of("--model", "llama2-7b", "--layers", "7", "--hidden", "1024",
        "--heads", "8", "--kv-heads", "8", "--ffn", "2752", "--vocab", "1024", "--seq", "512",
        "--cluster", "3x4:a100-80gb", "--global-batch", "40");
    Path free = dir.resolve("free.json");
    CliRun p = CliRun.of(args("plan", job, "--quiet", "--out", free.toString()));
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("1x4     0-3       4x1", "2x4     4-11      8x1");
    CliRun e = CliRun.of("export", "--plan", free.toString(), "--to", "megatron");
    assertThat(e.code()).isEqualTo(3);
    assertThat(e.err()).contains("stages use different logical meshes (4x1 and 8x1)");
    assertThat(e.out()).contains("plan again with the plan's flags and --for megatron");
    Path forMegatron = dir.resolve("megatron.json");
    CliRun f = CliRun.of(args("plan", job, "--quiet", "--for", "megatron", "--out",
        forMegatron.toString()));
    assertThat(f.code()).as(f.err()).isZero();
    CliRun ok = CliRun.of("export", "--plan", forMegatron.toString(), "--to", "megatron");
    assertThat(ok.code()).as(ok.err()).isZero();
  }

  @Test
  void badForValuesAndCombinationsAreRefusedInOneLine() {
    List<String> job = List.of("--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "8");
    CliRun.of(args("plan", job, "--for", "colossal")).refusedInOneLine(ExitCodes.BAD_INPUT,
        "--for 'colossal' is unknown; use megatron, torchtitan, deepspeed");
    // The list is the registry's (ExportTarget), ending in Alpa's name.
    CliRun.of(args("plan", job, "--for", "colossal")).refusedInOneLine(ExitCodes.BAD_INPUT,
        " or alpa");
    CliRun.of(args("plan", job, "--for", "megatron", "--megatron-grid")).refusedInOneLine(
        ExitCodes.BAD_INPUT, "give --for or --megatron-grid, not both");
    CliRun.of("plan", "--hlo", "examples/gpt_train_step.hlo", "--cluster", "1x4:a100-80gb",
        "--microbatches", "8", "--for", "alpa").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--for cannot be used with --hlo");
  }

  @Test
  void alpaPlansUnfusedAttentionUnlessFusedIsAskedForWhichItRefuses() {
    List<String> job = List.of("--model", "llama2-7b", "--layers", "2", "--hidden", "512",
        "--heads", "8", "--kv-heads", "8", "--ffn", "1376", "--vocab", "1024", "--seq", "256",
        "--cluster", "1x8:h100-80gb", "--global-batch", "8", "--quiet");
    // H100s run fused attention by default; Alpa has no such kernel, so its plan is unfused.
    CliRun unfused = CliRun.of(args("plan", job, "--for", "alpa"));
    assertThat(unfused.code()).as(unfused.err()).isZero();
    assertThat(unfused.out()).contains("; unfused attention\n");
    CliRun.of(args("plan", job, "--for", "alpa", "--attention", "flash")).refusedInOneLine(
        ExitCodes.INFEASIBLE, "no plan that alpa launches: Alpa's JAX 0.3.22 computes attention"
            + " as separate matmuls");
  }
  /**
   * Under FP8 training, {@code plan --for megatron} plans the weights both ways (bf16, and kept
   * and gathered in FP8: Megatron-LM's --fp8-param-gather) and keeps the faster; each time it
   * prints is the one {@code simulate --plan} gives its plan again, and the export writes the
   * flag. A user's own --fp8-param-gather, and a runtime that cannot launch FP8 weights, plan one
   * way only.
   */
  @Test
  void megatronsFp8PlansChooseTheirWeightsStorage() throws Exception {
    List<String> job = List.of("--model", "llama3-8b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--seq", "2048", "--dtype", "fp8");
    Path plan = dir.resolve("fp8.json");
    CliRun p = CliRun.of(args("plan", job, "--for", "megatron", "--out", plan.toString()));
    assertThat(p.code()).as(p.err()).isZero();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("weights: (kept and gathered "
        + "in FP8 \\(--fp8-param-gather\\): ([0-9.]+) s an iteration, where bf16 weights take "
        + "([0-9.]+) s|bf16; kept and gathered in FP8 \\(--fp8-param-gather\\) they take "
        + "([0-9.]+) s an iteration)\n").matcher(p.out());
    assertThat(m.find()).as(p.out()).isTrue();
    boolean fp8 = m.group(2) != null;
    double chosen = Double.parseDouble(fp8 ? m.group(2) : "NaN");
    double other = Double.parseDouble(fp8 ? m.group(3) : m.group(4));
    JsonNode model = JSON.readTree(plan.toFile()).get("model");
    assertThat(model.path("fp8ParamGather").asBoolean(false)).isEqualTo(fp8);
    // The plan file names the storage kept and both times (null where nothing fits).
    JsonNode weights = JSON.readTree(plan.toFile()).get("weights");
    assertThat(weights.get("kept").asText()).isEqualTo(fp8 ? "fp8" : "bf16");
    assertThat(weights.get(fp8 ? "bf16IterationSeconds" : "fp8IterationSeconds").asDouble())
        .isCloseTo(other, org.assertj.core.data.Offset.offset(5e-5));
    double planned = JSON.readTree(plan.toFile()).get("iterationSeconds").asDouble();
    if (fp8) {
      // Printed to 4 decimals: the kept plan's time, no slower than the other storage's.
      assertThat(planned).isCloseTo(chosen, org.assertj.core.data.Offset.offset(5e-5));
      assertThat(chosen).isLessThanOrEqualTo(other);
    } else {
      assertThat(planned).isLessThanOrEqualTo(other + 5e-5);
    }
    CliRun again = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(iteration(again.out())).isCloseTo(planned,
        org.assertj.core.data.Offset.offset(1e-9 * planned));
    Path out = dir.resolve("fp8.sh");
    CliRun e = CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--out",
        out.toString());
    assertThat(e.code()).as(e.err()).isZero();
    assertThat(Files.readString(out).contains("--fp8-param-gather\n")).isEqualTo(fp8);
    // One way only: the user's own choice, or a runtime without FP8 weights.
    CliRun own = CliRun.of(args("plan", job, "--for", "megatron", "--fp8-param-gather"));
    assertThat(own.code()).as(own.err()).isZero();
    assertThat(own.out()).doesNotContain("weights:");
    CliRun ownJson = CliRun.of(args("plan", job, "--for", "megatron", "--fp8-param-gather",
        "--json"));
    assertThat(JSON.readTree(ownJson.out()).has("weights")).isFalse();
    // torchtitan has no 4-layer flavor (exit 3); it plans no FP8 weights in any case.
    CliRun titan = CliRun.of(args("plan", job, "--for", "torchtitan"));
    assertThat(titan.out() + titan.err()).doesNotContain("weights:");
  }
}
