package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code plan} and {@code simulate} from the command line: a saved plan, and bad input. */
class PlanSimulateCliTest {
  @TempDir Path dir;

  private static void oneLine(CliRun r, int code, String contains) {
    assertThat(r.code()).as(r.err()).isEqualTo(code);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains(contains);
  }

  @Test
  void aSavedPlanSimulatesToTheSameIteration() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--global-batch", "16", "--json", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(Files.readString(plan)).isEqualTo(p.out());
    String seconds = p.out().lines().filter(l -> l.contains("\"iterationSeconds\""))
        .findFirst().orElseThrow().replaceAll("[^0-9.E-]", "");
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    // The simulator prices the saved stages with the planner's layer costs, so it reproduces the
    // plan's own prediction exactly.
    assertThat(s.out()).contains("\"iterationSeconds\" : " + Double.parseDouble(seconds));
  }

  @Test
  void gpipeKeepsEveryMicrobatchInFlight() {
    String[] base = {"simulate", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
        "--global-batch", "16"};
    CliRun oneF = CliRun.of(base);
    String[] g = java.util.Arrays.copyOf(base, base.length + 2);
    g[base.length] = "--schedule";
    g[base.length + 1] = "gpipe";
    CliRun gpipe = CliRun.of(g);
    assertThat(oneF.code()).as(oneF.err()).isZero();
    assertThat(gpipe.code()).as(gpipe.err()).isZero();
    assertThat(oneF.out()).startsWith("schedule 1f1b, 8 microbatches, 2 stages");
    assertThat(gpipe.out()).startsWith("schedule gpipe, 8 microbatches, 2 stages");
    // 8 microbatches over 2 stages: 1F1B holds at most 2 in flight on stage 0, GPipe all 8.
    assertThat(gpipe.out()).containsPattern("\\n0 +\\[0\\] .* 8 +[0-9.]+\\n");
    assertThat(oneF.out()).containsPattern("\\n0 +\\[0\\] .* 2 +[0-9.]+\\n");
  }

  @Test
  void theZeroStageFlagReachesTheSimulator() throws Exception {
    // Over 2 data-parallel replicas ZeRO-1 halves the optimizer state and ZeRO-3 also the
    // weights and gradients, at the price of gathering the weights for every microbatch.
    double[] peak = new double[4];
    double[] seconds = new double[4];
    for (int z : new int[] {0, 1, 2, 3}) {
      CliRun r = CliRun.of("simulate", "--model", "llama2-7b", "--layers", "4", "--cluster",
          "1x8:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
          "--global-batch", "16", "--zero-stage", Integer.toString(z), "--json");
      assertThat(r.code()).as(r.err()).isZero();
      var j = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
      peak[z] = j.path("peakMemoryBytesPerGpu").asDouble();
      seconds[z] = j.path("iterationSeconds").asDouble();
    }
    assertThat(peak[0]).isGreaterThan(peak[1]);
    assertThat(peak[1]).isGreaterThan(peak[3]);
    assertThat(seconds[3]).isGreaterThan(seconds[1]);
    // ZeRO-2 also shards the gradients, at the price of a reduce-scatter every microbatch; its
    // 1e9-byte gradient bucket keeps it above ZeRO-3.
    assertThat(peak[0]).isGreaterThan(peak[2]);
    assertThat(peak[2]).isGreaterThan(peak[3]);
    assertThat(seconds[2]).isGreaterThan(seconds[1]);
    CliRun same = CliRun.of("simulate", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
        "--global-batch", "16", "--distributed-optimizer", "--json");
    assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(same.out())
        .path("peakMemoryBytesPerGpu").asDouble()).isEqualTo(peak[1]);
    oneLine(CliRun.of("simulate", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
        "--global-batch", "16", "--zero-stage", "4"), ExitCodes.BAD_INPUT, "use 0, 1, 2 or 3");
    oneLine(CliRun.of("simulate", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
        "--global-batch", "16", "--zero-stage", "3", "--distributed-optimizer"),
        ExitCodes.BAD_INPUT, "give one of them");
  }

  @Test
  void badInputEndsInOneLine() throws Exception {
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--layers", "100000", "--cluster",
        "1x8:a100-80gb"), ExitCodes.BAD_INPUT, "plan at most");
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb",
        "--global-batch", "16", "--microbatches", "3"), ExitCodes.BAD_INPUT,
        "--global-batch 16 is not a multiple of --microbatches 3");
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:nosuchgpu"),
        ExitCodes.BAD_INPUT, "unknown gpu 'nosuchgpu'");
    oneLine(CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb", "--tp",
        "3", "--pp", "1", "--dp", "32", "--micro-batch", "1", "--global-batch", "512"),
        ExitCodes.BAD_INPUT, "= 96 GPUs, but the cluster has 32");
    oneLine(CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb", "--tp",
        "1", "--pp", "1", "--dp", "32", "--micro-batch", "3", "--global-batch", "512"),
        ExitCodes.BAD_INPUT, "--global-batch 512 is not a multiple of --micro-batch 3");
    oneLine(CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb", "--tp",
        "1", "--pp", "1", "--dp", "32", "--micro-batch", "1", "--global-batch", "512",
        "--schedule", "zigzag"), ExitCodes.BAD_INPUT, "--schedule 'zigzag' is unknown");
    // 4,000 microbatches through 100 stages of 10 chunks: 2 x 4,000 x 1,000 = 8,000,000 steps,
    // refused before the simulator fills the heap.
    oneLine(CliRun.of("simulate", "--model", "gpt", "--layers", "1000", "--cluster",
        "100x1:a100-80gb", "--tp", "1", "--pp", "100", "--dp", "1", "--vpp", "10",
        "--micro-batch", "1", "--global-batch", "4000"), ExitCodes.BAD_INPUT,
        "takes 8000000 forward and backward steps, more than the limit of 2097152");
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb",
        "--schedule", "gpipe"), ExitCodes.BAD_INPUT, "--schedule 'gpipe' is unknown; use auto "
        + "or 1f1b");
    // A prime global batch splits only into single sequences: 2^31 - 1 microbatches, refused
    // before any work instead of looping over every divisor candidate.
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb",
        "--global-batch", "2147483647"), ExitCodes.BAD_INPUT, "cannot be split into at most");
    // A batch with factors of 2 enough but too many sequences is told to shrink: 8 GPUs give
    // microbatches of at most 8 replicas x 8 sequences = 64, so 65,536 x 64 = 4,194,304.
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--global-batch", "1073741824"), ExitCodes.BAD_INPUT,
        "choose a global batch with at most 4194304 sequences (65536 microbatches of 64)");
    // 4,194,301 is prime and under the cap: only single sequences divide it, in more than
    // 65,536 microbatches. Microbatches of 64 (8 replicas x 8) are nearest: 65,535 x 64 =
    // 4,194,240 below and 65,536 x 64 = 4,194,304 above.
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--global-batch", "4194301"), ExitCodes.BAD_INPUT,
        "choose a global batch that its microbatches divide, such as 4194240 or 4194304 sequences");
    oneLine(CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb", "--tp",
        "1", "--pp", "1", "--dp", "32", "--micro-batch", "1", "--global-batch", "2147483616"),
        ExitCodes.BAD_INPUT, "67108863 microbatches per iteration are more than the limit");
    Path empty = Files.writeString(dir.resolve("empty.json"), "");
    oneLine(CliRun.of("simulate", "--plan", empty.toString()), ExitCodes.BAD_INPUT,
        "not a JSON plan file");
    Path old = Files.writeString(dir.resolve("old.json"),
        "{\"format\":\"meshplan-plan\",\"version\":0}");
    oneLine(CliRun.of("simulate", "--plan", old.toString()), ExitCodes.BAD_INPUT,
        "version 0 is not supported");
    oneLine(CliRun.of("simulate", "--plan", dir.toString()), ExitCodes.BAD_INPUT,
        "not a regular file");
  }

  @Test
  void nothingFitsExitsThreeWithTheMemoryNeeded() {
    // 13B parameters need about 18 bytes each of model state alone (234 GB), far beyond two
    // 16 GB GPUs.
    oneLine(CliRun.of("plan", "--model", "llama2-13b", "--cluster", "2x1:v100-16gb"),
        ExitCodes.INFEASIBLE, "per GPU, and 15.2GiB is available; try at least");
  }

  @Test
  void aClusterNoPipelineCanCoverSaysSoRatherThanBlamingMemory() {
    // Two layers and a global batch of one sequence: every stage has one data-parallel replica,
    // so at most 8 GPUs (tensor parallel within a node); two stages cover 16 of the 24 GPUs.
    oneLine(CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "3x8:a100-80gb", "--global-batch", "1"), ExitCodes.INFEASIBLE,
        "no pipeline of llama2-7b covers all 24 GPUs of 3x8");
  }

  /**
   * --megatron-grid plans inside Megatron-LM's space: the plan is the fastest grid point, exports
   * to Megatron-LM with exit 0 (no nearest configuration needed), and re-simulates to the same
   * iteration as the same configuration given to simulate by its flags.
   */
  @Test
  void megatronGridPlansExportExactlyAndMatchSimulate() throws Exception {
    Path plan = dir.resolve("grid.json");
    String[] common = {"--model", "llama2-7b", "--layers", "4", "--cluster", "2x8:a100-80gb",
        "--global-batch", "16"};
    CliRun p = CliRun.of(concat(new String[] {"plan"}, common, new String[] {"--megatron-grid",
        "--out", plan.toString()}));
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("the Megatron-LM grid");
    CliRun ex = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(ex.code()).as(ex.err()).isZero();
    String args = ex.out();
    int tp = Integer.parseInt(flag(args, "--tensor-model-parallel-size"));
    int pp = Integer.parseInt(flag(args, "--pipeline-model-parallel-size"));
    int mb = Integer.parseInt(flag(args, "--micro-batch-size"));
    CliRun again = CliRun.of("simulate", "--plan", plan.toString());
    java.util.List<String> sim = new java.util.ArrayList<>(java.util.List.of(concat(
        new String[] {"simulate"}, common, new String[] {"--tp", String.valueOf(tp), "--pp",
            String.valueOf(pp), "--dp", String.valueOf(16 / (tp * pp)), "--micro-batch",
            String.valueOf(mb)})));
    if (args.contains("--num-layers-per-virtual-pipeline-stage")) {
      // 4 layers over pp stages of vpp chunks of this many layers each.
      int perChunk = Integer.parseInt(flag(args, "--num-layers-per-virtual-pipeline-stage"));
      sim.addAll(java.util.List.of("--vpp", String.valueOf(4 / (pp * perChunk))));
    }
    if (args.contains("--use-distributed-optimizer")) {
      sim.add("--distributed-optimizer");
    }
    if (args.contains("--sequence-parallel")) {
      sim.add("--sequence-parallel");
    }
    if (args.contains("--recompute-granularity selective")) {
      sim.addAll(java.util.List.of("--recompute", "selective"));
    } else if (args.contains("--recompute-granularity full")) {
      sim.addAll(java.util.List.of("--recompute", "full"));
    }
    CliRun flags = CliRun.of(sim.toArray(String[]::new));
    assertThat(flags.code()).as(flags.err()).isZero();
    String iteration = line(p.out(), "iteration ");
    assertThat(line(again.out(), "iteration ")).isEqualTo(iteration);
    assertThat(line(flags.out(), "iteration ")).isEqualTo(iteration);
    // The grid chooses the micro batch itself.
    oneLine(CliRun.of(concat(new String[] {"plan"}, common, new String[] {"--megatron-grid",
        "--microbatches", "4"})), ExitCodes.BAD_INPUT, "--microbatches cannot be fixed");
  }

  private static String[] concat(String[]... parts) {
    return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream)
        .toArray(String[]::new);
  }

  private static String flag(String text, String name) {
    return text.lines().map(String::strip).filter(l -> l.startsWith(name + " ")).findFirst()
        .orElseThrow().substring(name.length() + 1).strip();
  }

  private static String line(String text, String prefix) {
    return text.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
  }
}
