package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.calibrate.TrainingLogs;
import io.meshplan.calibrate.TrainingRun;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.planner.TrainRunSimulator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meshplan calibrate --train}: logs written from a known compute scale give it back, and
 * the scale a profile carries moves {@code simulate}'s compute time by exactly that factor.
 */
class CalibrateTrainCliTest {
  @TempDir Path dir;

  private static final Path EXAMPLES = Path.of("examples/calibrate");

  /** A Megatron-LM log of a small LLaMA-style model with the given iteration times, ms. */
  static String megatronLog(double warmupMs, double[] ms) {
    return megatronLog(warmupMs, ms, java.util.Map.of());
  }

  /** The same log with some arguments set to other values (or added). */
  static String megatronLog(double warmupMs, double[] ms, java.util.Map<String, String> set) {
    String[][] base = {{"bf16", "True"}, {"data_parallel_size", "2"}, {"ffn_hidden_size", "5632"},
        {"global_batch_size", "128"}, {"group_query_attention", "True"}, {"hidden_size", "2048"},
        {"micro_batch_size", "2"}, {"num_attention_heads", "16"}, {"num_layers", "8"},
        {"num_query_groups", "8"}, {"overlap_grad_reduce", "False"},
        {"padded_vocab_size", "32000"}, {"pipeline_model_parallel_size", "1"},
        {"recompute_granularity", "None"}, {"seq_length", "2048"}, {"sequence_parallel", "False"},
        {"swiglu", "True"}, {"tensor_model_parallel_size", "2"},
        {"use_distributed_optimizer", "True"}, {"attention_backend", "AttnBackend.flash"},
        {"virtual_pipeline_model_parallel_size", "None"}, {"world_size", "4"}};
    java.util.Map<String, String> merged = new java.util.TreeMap<>();
    for (String[] a : base) {
      merged.put(a[0], a[1]);
    }
    merged.putAll(set);
    String[][] args = merged.entrySet().stream()
        .map(e -> new String[] {e.getKey(), e.getValue()}).toArray(String[][]::new);
    StringBuilder b = new StringBuilder("------------------------ arguments ------------------------\n");
    for (String[] a : args) {
      b.append("  ").append(a[0]).append(' ').append(".".repeat(48 - a[0].length())).append(' ')
          .append(a[1]).append('\n');
    }
    b.append("-------------------- end of arguments ---------------------\n");
    List<Double> all = new ArrayList<>(List.of(warmupMs));
    for (double m : ms) {
      all.add(m);
    }
    for (int i = 0; i < all.size(); i++) {
      b.append(String.format(Locale.ROOT, " [2024-01-01 00:00:%02d.000000] iteration %8d/%8d |"
          + " consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate:"
          + " 1.000000E-04 | global batch size:   128 | lm loss: 9.000000E+00 | loss scale: 1.0"
          + " |%n", i, 10 * (i + 1), 100, 1280 * (i + 1), all.get(i)));
    }
    return b.toString();
  }

  private double simulatedSeconds(Path log, Optional<Path> config, String cluster, double scale) {
    TrainingRun r = TrainingLogs.read(log, config);
    return TrainRunSimulator.of(r, ClusterSpec.parse(cluster)).iterationSeconds(scale);
  }

  private double fittedScale(Path profile, String gpu) {
    return ProfileFiles.read(profile).computeScale(
        io.meshplan.cluster.GpuCatalog.find(gpu).orElseThrow());
  }

  /**
   * Writes the Megatron-LM log {@code name}.log of the base run with {@code set}, timed as
   * meshplan simulates it at compute scale {@code truth} (printed to 0.1 ms, as the logs are),
   * calibrates from it and checks that the scale comes back within 1e-3.
   *
   * @return the simulated iteration, seconds
   */
  private double recovered(String name, java.util.Map<String, String> set, String cluster,
      double truth) throws IOException {
    Path log = dir.resolve(name + ".log");
    Files.writeString(log, megatronLog(3000, new double[] {100, 100}, set));
    double t = simulatedSeconds(log, Optional.empty(), cluster, truth);
    Files.writeString(log, megatronLog(3 * t * 1000, new double[] {t * 1000 + 0.05,
        t * 1000, t * 1000 - 0.05}, set));
    Path out = dir.resolve(name + ".yaml");
    CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--cluster", cluster,
        "--out", out.toString());
    assertThat(run.code()).as(run.err()).isZero();
    String gpu = ClusterSpec.parse(cluster).gpu().name();
    assertThat(fittedScale(out, gpu)).as(name).isCloseTo(truth, within(1e-3 * truth));
    return t;
  }

  @Test
  void megatronLogsFromAKnownScaleAreRecovered() throws IOException {
    Random rnd = new Random(7);
    for (int c = 0; c < 3; c++) {
      double truth = 0.4 + 0.8 * rnd.nextDouble();
      Path log = dir.resolve("m" + c + ".log");
      Files.writeString(log, megatronLog(3000, new double[] {100, 100}));
      double t = simulatedSeconds(log, Optional.empty(), "1x4:a100-80gb", truth);
      // The log prints 0.1 ms: at most 0.05 ms off an iteration of several hundred ms (8 layers
      // of h 2048 on 128 x 2048 tokens over 4 GPUs), under 1e-4 of the time; the median of
      // (t + 0.05, t, t - 0.05) ms is t as printed.
      Files.writeString(log, megatronLog(3 * t * 1000, new double[] {t * 1000 + 0.05,
          t * 1000, t * 1000 - 0.05}));
      Path out = dir.resolve("m" + c + ".yaml");
      CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--cluster",
          "1x4:a100-80gb", "--out", out.toString());
      assertThat(run.code()).as(run.err()).isZero();
      assertThat(fittedScale(out, "a100-80gb")).as("case " + c)
          .isCloseTo(truth, within(1e-3 * truth));
      assertThat(run.out()).contains("compute scale ampere = ").contains("m" + c + ".log");
    }
  }

  /**
   * An FP8 run (Megatron-LM's {@code fp8 hybrid}) is priced as FP8 on an H100, recovering its
   * scale like a bf16 run, and refused in one line on an A100, which has no FP8 tensor cores; its
   * bf16 twin is priced slower, so the reading changes the fit.
   */
  @Test
  void fp8LogsArePricedAsFp8() throws IOException {
    java.util.Map<String, String> fp8 = java.util.Map.of("fp8", "hybrid");
    Path log = dir.resolve("fp8.log");
    Files.writeString(log, megatronLog(3000, new double[] {100, 100}, fp8));
    double t = simulatedSeconds(log, Optional.empty(), "1x4:h100-80gb", 0.7);
    Path bf16 = dir.resolve("bf16.log");
    Files.writeString(bf16, megatronLog(3000, new double[] {100, 100}));
    assertThat(simulatedSeconds(bf16, Optional.empty(), "1x4:h100-80gb", 0.7)).isGreaterThan(t);
    Files.writeString(log, megatronLog(3 * t * 1000, new double[] {t * 1000 + 0.05, t * 1000,
        t * 1000 - 0.05}, fp8));
    Path out = dir.resolve("fp8.yaml");
    CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--cluster", "1x4:h100-80gb",
        "--out", out.toString());
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(fittedScale(out, "h100-80gb")).isCloseTo(0.7, within(1e-3 * 0.7));
    CliRun a100 = CliRun.of("calibrate", "--train", log.toString(), "--cluster",
        "1x4:a100-80gb", "--out", dir.resolve("a100.yaml").toString());
    a100.refusedInOneLine(ExitCodes.BAD_INPUT, "meshplan: error: fp8 training needs FP8 tensor"
        + " cores, which the a100-80gb does not have");
  }

  /**
   * A run's pipeline split is read from its arguments and simulated as {@code simulate} states it:
   * 7 layers on 2 stages with the embedding counted (3 and 4 layers), and a layout of 2 stages of 2
   * chunks; each gives the iteration time of {@code simulate} with the same flags.
   */
  @Test
  void megatronPipelineSplitsAreReadFromTheArguments() throws IOException {
    java.util.Map<String, String[]> cases = java.util.Map.of(
        "account_for_embedding_in_pipeline_split", new String[] {"True", "None",
            "--account-for-embedding-in-pipeline-split"},
        "pipeline_model_parallel_layout", new String[] {"Et|tt|tt|ttL", "2",
            "--pipeline-model-parallel-layout", "Et|tt|tt|ttL"});
    for (var c : cases.entrySet()) {
      java.util.Map<String, String> set = new java.util.HashMap<>(java.util.Map.of(
          "num_layers", "7", "pipeline_model_parallel_size", "2", "data_parallel_size", "1",
          "virtual_pipeline_model_parallel_size", c.getValue()[1], c.getKey(),
          c.getValue()[0]));
      Path log = dir.resolve(c.getKey() + ".log");
      Files.writeString(log, megatronLog(3000, new double[] {100, 100}, set));
      TrainingRun r = TrainingLogs.read(log, Optional.empty());
      assertThat(r.parallel().split().embeddingInSplit())
          .isEqualTo(c.getKey().startsWith("account"));
      assertThat(r.parallel().split().layout()).isEqualTo(c.getKey().startsWith("pipeline")
          ? "Et|tt|tt|ttL" : "");
      double t = simulatedSeconds(log, Optional.empty(), "1x4:a100-80gb", 1.0);
      List<String> flags = new ArrayList<>(List.of("simulate", "--model", "llama2-7b",
          "--layers", "7", "--hidden", "2048", "--heads", "16", "--kv-heads", "8", "--ffn",
          "5632", "--vocab", "32000", "--seq", "2048", "--dtype", "bf16", "--cluster",
          "1x4:a100-80gb", "--tp", "2", "--pp", "2", "--dp", "1", "--micro-batch", "2",
          "--global-batch", "128", "--distributed-optimizer", "--attention", "flash",
          "--json"));
      flags.addAll(List.of(c.getValue()).subList(2, c.getValue().length));
      CliRun sim = CliRun.of(flags.toArray(String[]::new));
      assertThat(sim.code()).as(sim.err()).isZero();
      double want = new com.fasterxml.jackson.databind.ObjectMapper().readTree(sim.out())
          .get("iterationSeconds").asDouble();
      assertThat(t).as(c.getKey()).isCloseTo(want, within(1e-9 * want));
    }
  }

  @Test
  void torchtitanLogFromAKnownScaleIsRecovered() throws IOException {
    Path config = EXAMPLES.resolve("torchtitan_llama3_8b.toml");
    Path example = EXAMPLES.resolve("torchtitan_llama3_8b_h100.log");
    double truth = 0.8125;
    double t = simulatedSeconds(example, Optional.of(config), "1x8:h100-80gb", truth);
    // tps = local batch 1 * seq 8192 / t, printed whole with separators: off by at most 0.5 in
    // several thousand, below 1e-4.
    long tps = Math.round(8192 / t);
    String text = Files.readString(example).replaceAll("tps: [0-9,]+",
        "tps: " + String.format(Locale.ROOT, "%,d", tps));
    Path log = dir.resolve("titan.log");
    Files.writeString(log, text);
    Path out = dir.resolve("h100.json");
    CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--config", config.toString(),
        "--cluster", "1x8:h100-80gb", "--out", out.toString(), "--json");
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(fittedScale(out, "h100-80gb")).isCloseTo(truth, within(1e-3 * truth));
    assertThat(run.out()).contains("\"architecture\" : \"hopper\"").contains("\"afterSeconds\"");
  }

  /**
   * Context-parallel runs are rebuilt with their split: a Megatron-LM log of tp 2 x cp 2 x dp 2
   * on 8 GPUs (keys and values all-gathered, or Ulysses' all-to-alls) and torchtitan's 8B config with each sequence over 2
   * GPUs (FSDP over dp_shard 4 x cp 2) give back the scale they were written from. torchtitan's
   * tps is per GPU of the context group as well: a step is 1 x 8192 / (tps x cp 2) seconds.
   */
  @Test
  void contextParallelRunsAreRecovered() throws IOException {
    double truth = 0.7;
    double t = recovered("cp", java.util.Map.of("context_parallel_size", "2", "cp_comm_type",
        "['all_gather']", "world_size", "8", "seq_length", "8192", "global_batch_size", "16"),
        "1x8:h100-80gb", truth);
    // Ulysses' all-to-alls (cp_comm_type a2a) are another exchange: another time, recovered too.
    double u = recovered("a2a", java.util.Map.of("context_parallel_size", "2", "cp_comm_type",
        "['a2a']", "world_size", "8", "seq_length", "8192", "global_batch_size", "16"),
        "1x8:h100-80gb", truth);
    assertThat(u).isNotCloseTo(t, within(1e-3 * t));
    // The same run without context parallelism is another job: another time at the same scale.
    Path flat = dir.resolve("flat.log");
    Files.writeString(flat, megatronLog(3000, new double[] {100, 100},
        java.util.Map.of("world_size", "8", "data_parallel_size", "4", "seq_length", "8192",
            "global_batch_size", "16")));
    assertThat(simulatedSeconds(flat, Optional.empty(), "1x8:h100-80gb", truth))
        .isNotCloseTo(t, within(1e-3 * t));

    Path config = dir.resolve("cp.toml");
    Files.writeString(config, Files.readString(EXAMPLES.resolve("torchtitan_llama3_8b.toml"))
        .replace("context_parallel_degree = 1", "context_parallel_degree = 2"));
    // The same 8 GPUs as 4 data-parallel ranks of 2 context-parallel ones: a global batch of 4.
    Path example = io.meshplan.calibrate.TitanLogs.of(dir, 8, 4);
    double tt = simulatedSeconds(example, Optional.of(config), "1x8:h100-80gb", truth);
    long tps = Math.round(8192 / (tt * 2));
    Path titan = dir.resolve("titan-cp.log");
    Files.writeString(titan, Files.readString(example).replaceAll("tps: [0-9,]+",
        "tps: " + String.format(Locale.ROOT, "%,d", tps)));
    Path out2 = dir.resolve("titan-cp.yaml");
    CliRun r2 = CliRun.of("calibrate", "--train", titan.toString(), "--config",
        config.toString(), "--cluster", "1x8:h100-80gb", "--out", out2.toString());
    assertThat(r2.code()).as(r2.err()).isZero();
    assertThat(fittedScale(out2, "h100-80gb")).isCloseTo(truth, within(1e-3 * truth));
  }

  /**
   * A mixture-of-experts Megatron-LM run (the small LLaMA with 8 experts of 1408, 2 per token,
   * over EP 2 on 4 GPUs, the all-to-all dispatcher, sequence parallelism as Megatron-LM requires
   * with experts and TP) gives back the scale it was written from, and
   * is priced as itself: its dense twin of the same sizes takes another time at that scale.
   */
  @Test
  void mixtureOfExpertsRunIsRecovered() throws IOException {
    double truth = 0.9;
    java.util.Map<String, String> moe = java.util.Map.of("num_experts", "8", "moe_router_topk",
        "2", "moe_ffn_hidden_size", "1408", "moe_token_dispatcher_type", "alltoall",
        "expert_model_parallel_size", "2", "expert_tensor_parallel_size", "1",
        "moe_grouped_gemm", "True", "sequence_parallel", "True");
    double t = recovered("moe", moe, "1x4:h100-80gb", truth);
    Path dense = dir.resolve("dense.log");
    Files.writeString(dense, megatronLog(3000, new double[] {100, 100}));
    assertThat(simulatedSeconds(dense, Optional.empty(), "1x4:h100-80gb", truth))
        .isNotCloseTo(t, within(0.05 * t));
    // Expert parallelism that does not divide the experts is the log's fault, in one line.
    Path bad = dir.resolve("bad.log");
    java.util.Map<String, String> three = new java.util.HashMap<>(moe);
    three.put("expert_model_parallel_size", "3");
    Files.writeString(bad, megatronLog(3000, new double[] {100, 100}, three));
    CliRun refused = CliRun.of("calibrate", "--train", bad.toString(), "--cluster",
        "1x4:h100-80gb", "--out", dir.resolve("bad.yaml").toString());
    assertThat(refused.code()).isEqualTo(2);
    assertThat(refused.err().strip()).doesNotContain("\n").contains("bad.log");
  }

  /**
   * torchtitan's Qwen3 30B-A3B flavor (its MoE configs' per-op checkpointing, 128 experts over EP
   * 8 on 16 GPUs) gives back the scale its log was written from; its split shows in the table.
   */
  @Test
  void torchtitanMixtureOfExpertsRunIsRecovered() throws IOException {
    double truth = 0.55;
    Path config = dir.resolve("qwen3.toml");
    Files.writeString(config, "[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n\n"
        + "[training]\nlocal_batch_size = 1\nseq_len = 4096\n\n[parallelism]\n"
        + "data_parallel_shard_degree = -1\nexpert_parallel_degree = 8\n\n"
        + "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n");
    // The example log restated as the 16-GPU run: its mesh of 16 and a global batch of 16.
    Path example = io.meshplan.calibrate.TitanLogs.of(dir, 16, 16);
    double t = simulatedSeconds(example, Optional.of(config), "2x8:h100-80gb", truth);
    Path log = dir.resolve("qwen3.log");
    Files.writeString(log, Files.readString(example).replaceAll("tps: [0-9,]+",
        "tps: " + String.format(Locale.ROOT, "%,d", Math.round(4096 / t))));
    Path out = dir.resolve("qwen3.yaml");
    CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--config", config.toString(),
        "--cluster", "2x8:h100-80gb", "--out", out.toString());
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(fittedScale(out, "h100-80gb")).isCloseTo(truth, within(1e-3 * truth));
    assertThat(run.out()).contains("1/1/16 ep8");
    // --json states the split by field.
    CliRun json = CliRun.of("calibrate", "--train", log.toString(), "--config",
        config.toString(), "--cluster", "2x8:h100-80gb", "--out", out.toString(), "--force",
        "--json");
    assertThat(json.code()).as(json.err()).isZero();
    com.fasterxml.jackson.databind.JsonNode row = new com.fasterxml.jackson.databind
        .ObjectMapper().readTree(json.out()).get("runs").get(0);
    assertThat(row.get("dataParallel").asInt()).isEqualTo(16);
    assertThat(row.get("expertParallel").asInt()).isEqualTo(8);
    assertThat(row.get("contextParallel").asInt()).isEqualTo(1);
  }

  @Test
  void twoRunsOverdetermineTheScaleAndLeaveResiduals() throws IOException {
    // Two logs of one model measured 10% apart: no single scale fits both, so both residuals are
    // non-zero and of opposite sign (least squares on log time splits the difference).
    Path a = dir.resolve("a.log");
    Path b = dir.resolve("b.log");
    Files.writeString(a, megatronLog(3000, new double[] {100, 100}));
    double t = simulatedSeconds(a, Optional.empty(), "1x4:a100-80gb", 0.7) * 1000;
    Files.writeString(a, megatronLog(3000, new double[] {t, t}));
    Files.writeString(b, megatronLog(3000, new double[] {1.1 * t, 1.1 * t}));
    CliRun run = CliRun.of("calibrate", "--train", a.toString(), b.toString(), "--cluster",
        "1x4:a100-80gb", "--out", dir.resolve("p.json").toString(), "--json");
    assertThat(run.code()).as(run.err()).isZero();
    com.fasterxml.jackson.databind.JsonNode root =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(run.out());
    double ea = root.get("runs").get(0).get("error").asDouble();
    double eb = root.get("runs").get(1).get("error").asDouble();
    assertThat(ea).isPositive();
    assertThat(eb).isNegative();
    assertThat(root.get("scale").asDouble()).isLessThan(0.7);
  }

  @Test
  void aProfileScaleDividesSimulatedComputeTime() throws IOException {
    Path profile = dir.resolve("half.yaml");
    Files.writeString(profile, "version: 1\ncluster: \"1x8:a100-80gb\"\nentries: []\n"
        + "compute:\n  a100:\n    scale: 0.5\n    runs: 1\n");
    String[] job = {"--model", "llama2-7b", "--layers", "4", "--cluster", "1x8:a100-80gb",
        "--tp", "2", "--pp", "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "8",
        "--json"};
    CliRun plain = CliRun.of(concat(new String[] {"simulate"}, job));
    CliRun scaled = CliRun.of(concat(new String[] {"simulate", "--profile", profile.toString()},
        job));
    assertThat(plain.code()).as(plain.err()).isZero();
    assertThat(scaled.code()).as(scaled.err()).isZero();
    com.fasterxml.jackson.databind.ObjectMapper m =
        new com.fasterxml.jackson.databind.ObjectMapper();
    double c1 = computeSeconds(m.readTree(plain.out()));
    double c2 = computeSeconds(m.readTree(scaled.out()));
    // Scale 0.5: every kernel takes twice as long, so stage compute doubles exactly.
    assertThat(c2).isCloseTo(2 * c1, within(1e-9 * c2));
    double i1 = m.readTree(plain.out()).get("iterationSeconds").asDouble();
    double i2 = m.readTree(scaled.out()).get("iterationSeconds").asDouble();
    assertThat(i2).isGreaterThan(i1 + 0.9 * c1);
  }

  @Test
  void planWithAProfileScalePredictsASlowerIteration() throws IOException {
    Path profile = dir.resolve("slow.yaml");
    Files.writeString(profile, "version: 1\ncluster: \"1x8:a100-80gb\"\nentries: []\n"
        + "compute:\n  a100:\n    scale: 0.5\n    runs: 1\n");
    String[] job = {"plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--global-batch", "8", "--json"};
    CliRun plain = CliRun.of(job);
    CliRun scaled = CliRun.of(concat(job, new String[] {"--profile", profile.toString()}));
    assertThat(plain.code()).as(plain.err()).isZero();
    assertThat(scaled.code()).as(scaled.err()).isZero();
    com.fasterxml.jackson.databind.ObjectMapper m =
        new com.fasterxml.jackson.databind.ObjectMapper();
    double i1 = m.readTree(plain.out()).findValue("iterationSeconds").asDouble();
    double i2 = m.readTree(scaled.out()).findValue("iterationSeconds").asDouble();
    // Twice the compute, communication unchanged: slower, and at most twice as slow.
    assertThat(i2).isGreaterThan(1.3 * i1).isLessThanOrEqualTo(2 * i1 * (1 + 1e-9));
  }

  @Test
  void planOfAnHloModuleAppliesTheProfileScale() throws IOException {
    Path profile = dir.resolve("slow.yaml");
    Files.writeString(profile, "version: 1\ncluster: \"1x4:a100-80gb\"\nentries: []\n"
        + "compute:\n  a100:\n    scale: 0.25\n    runs: 1\n");
    String[] job = {"plan", "--hlo", "examples/train_step.hlo", "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--json"};
    CliRun plain = CliRun.of(job);
    CliRun scaled = CliRun.of(concat(job, new String[] {"--profile", profile.toString()}));
    assertThat(plain.code()).as(plain.err()).isZero();
    assertThat(scaled.code()).as(scaled.err()).isZero();
    com.fasterxml.jackson.databind.ObjectMapper m =
        new com.fasterxml.jackson.databind.ObjectMapper();
    double i1 = m.readTree(plain.out()).get("iterationSeconds").asDouble();
    double i2 = m.readTree(scaled.out()).get("iterationSeconds").asDouble();
    // Kernels four times slower, communication unchanged: slower, at most four times.
    assertThat(i2).isGreaterThan(i1).isLessThanOrEqualTo(4 * i1 * (1 + 1e-9));
  }

  private static double computeSeconds(com.fasterxml.jackson.databind.JsonNode sim) {
    double sum = 0;
    for (com.fasterxml.jackson.databind.JsonNode s : sim.get("stages")) {
      sum += s.get("breakdown").get("compute").asDouble();
    }
    return sum;
  }

  private static String[] concat(String[] a, String[] b) {
    String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }
}
