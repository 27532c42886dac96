package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The time to train with interruptions, as a user runs it: Llama 3 405B as Meta trained it
 * (Dubey et al. 2024, Table 4's 8K row on 16,384 H100s; interruptions of Table 5; Tectonic's 2
 * TB/s sustained, section 3.3.1) falls in the published band of more than 90% effective training
 * time; bad values are refused in one line.
 */
class TimeToTrainCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> LLAMA3 = List.of("simulate", "--model", "llama3.1-405b",
      "--seq", "8192", "--cluster", "2048x8:h100-80gb:ib-ndr400", "--tp", "8", "--pp", "16",
      "--dp", "128", "--micro-batch", "1", "--global-batch", "2048", "--sequence-parallel",
      "--distributed-optimizer", "--first-stage-layers", "7", "--last-stage-layers", "7",
      "--memory", "79GiB", "--train-tokens", "15600000000000");
  private static final List<String> SMALL = List.of("simulate", "--model", "llama2-7b",
      "--cluster", "2x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "4", "--micro-batch", "1",
      "--global-batch", "64", "--train-tokens", "1000000000");

  @TempDir Path dir;

  private static CliRun run(List<String> base, String... more) {
    return CliRun.of(base, more);
  }

  @Test
  void llama3sRunKeepsMoreThanNinetyPercentEffectiveTrainingTime() throws Exception {
    CliRun r = run(LLAMA3, "--checkpoint-bandwidth", "2000", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode t = JSON.readTree(r.out()).get("timeToTrain");
    // 466 interruptions / (16,384 GPUs * 54 days) = 5.2671e-4 per GPU-day: one per
    // 86,400 / (5.2671e-4 * 16,384) = 10,012 s on 16,384 GPUs.
    assertThat(t.get("mtbfSeconds").asDouble()).isCloseTo(10012.0, within(0.5));
    // 405.85e9 parameters * (2 + 12) bytes = 5.68 TB, 2.84 s at 2,000 GB/s; the restart is 10 min
    // plus reading it back.
    assertThat(t.get("checkpointBytes").asDouble()).isCloseTo(5.6819e12, within(1e9));
    assertThat(t.get("checkpointSeconds").asDouble()).isCloseTo(2.841, within(1e-3));
    assertThat(t.get("restartSeconds").asDouble()).isCloseTo(602.841, within(1e-3));
    // Meta: "more than 90% effective training time" (section 3.3.4).
    assertThat(t.get("ettr").asDouble()).isGreaterThan(0.90).isLessThan(0.95);
    assertThat(t.get("expectedSeconds").asDouble()).isGreaterThan(
        t.get("productiveSeconds").asDouble());
    CliRun text = run(LLAMA3, "--checkpoint-bandwidth", "2000");
    assertThat(text.out()).contains("interruptions: one per 2.78 h on 16384 GPUs")
        .containsPattern("ETTR 9[0-4]\\.[0-9]%");
  }

  @Test
  void anAsynchronousCheckpointBlocksOnlyForTheCopyToHost() throws Exception {
    JsonNode sync = JSON.readTree(run(LLAMA3, "--checkpoint-bandwidth", "200", "--json").out())
        .get("timeToTrain");
    JsonNode async = JSON.readTree(run(LLAMA3, "--checkpoint-bandwidth", "200",
        "--async-checkpoint", "--json").out()).get("timeToTrain");
    // 5.68e12 bytes / 16,384 GPUs = 346.8 MB per GPU over PCIe Gen5 x16 at 63 GB/s: 5.505 ms.
    assertThat(async.get("checkpointSeconds").asDouble()).isCloseTo(
        async.get("checkpointBytes").asDouble() / 16384 / 63e9, within(1e-12));
    // The background write, 5.68e12 / 200e9 = 28.4 s, is charged on every restart as well as
    // the read-back, and the next checkpoint waits for it.
    double write = async.get("checkpointBytes").asDouble() / 200e9;
    assertThat(async.get("restartSeconds").asDouble()).isCloseTo(600 + 2 * write, within(1e-9));
    assertThat(async.get("checkpointIntervalIterations").asLong() * JSON.readTree(
        run(LLAMA3, "--checkpoint-bandwidth", "200", "--async-checkpoint", "--json").out())
        .get("iterationSeconds").asDouble()).isGreaterThanOrEqualTo(write);
    assertThat(async.get("ettr").asDouble()).isGreaterThan(sync.get("ettr").asDouble());
  }

  @Test
  void aNodeMtbfDividesOverTheNodes() throws Exception {
    JsonNode t = JSON.readTree(run(SMALL, "--checkpoint-bandwidth-per-node", "5", "--mtbf-node",
        "1000", "--json").out()).get("timeToTrain");
    // 1,000 h per node over 2 nodes: 500 h = 1.8e6 s. 7e9 parameters * 14 bytes / (2 * 5 GB/s).
    assertThat(t.get("mtbfSeconds").asDouble()).isEqualTo(1.8e6);
    assertThat(t.get("checkpointSeconds").asDouble()).isCloseTo(
        t.get("checkpointBytes").asDouble() / 10e9, within(1e-9));
  }

  @Test
  void withoutABandwidthTheRunIsPricedWithoutInterruptions() {
    CliRun r = run(SMALL, "--gpu-hour-price", "2.5");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("time to train:").contains("without interruptions")
        .contains("cost $");
  }

  @Test
  void badValuesAreRefusedInOneLine() throws Exception {
    // An exponent of any length is a number, past a double refused by the flag's range.
    for (String v : new String[] {"0", "-1", "NaN", "Infinity", "1e400", "1e999999"}) {
      run(SMALL, "--checkpoint-bandwidth", "10", "--mtbf-node", v).refusedInOneLine(2,
          "--mtbf-node must be a number from 0.1 to 876,600 hours");
      run(SMALL, "--checkpoint-bandwidth", v).refusedInOneLine(2,
          "--checkpoint-bandwidth must be a number from 0.1 to 1,000,000 GB/s");
    }
    // Java's forms are not numbers a user writes: --mtbf-node 0x1p3 was read as 8 hours, 5d as 5.
    for (String v : new String[] {"0x1p3", "5d", "2f", " 5 ", "\uff15", "1_000"}) {
      run(SMALL, "--checkpoint-bandwidth", "10", "--mtbf-node", v).refusedInOneLine(2,
          "is not a number written in ASCII digits (such as 8, 0.5 or 1e-3)");
    }
    // The refusal names the flag the user gave, not the first of the family.
    run(SMALL.subList(0, SMALL.size() - 2), "--checkpoint-bandwidth", "10")
        .refusedInOneLine(2, "--checkpoint-bandwidth prices a whole run: it needs --train-tokens"
            + " or --train-iterations");
    run(SMALL.subList(0, SMALL.size() - 2), "--mtbf-node", "200")
        .refusedInOneLine(2, "--mtbf-node prices a whole run");
    run(SMALL.subList(0, SMALL.size() - 2), "--gpu-hour-price", "2.5")
        .refusedInOneLine(2, "--gpu-hour-price prices a whole run");
    CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster", "1x8:a100-80gb",
        "--restart-minutes", "5").refusedInOneLine(2, "--restart-minutes prices a whole run");
    run(SMALL, "--mtbf-node", "10").refusedInOneLine(2, "--mtbf-node prices interruptions and "
        + "checkpoints, which need --checkpoint-bandwidth");
    run(SMALL, "--restart-minutes", "10").refusedInOneLine(2, "--restart-minutes prices");
    run(SMALL, "--checkpoint-bandwidth", "10", "--checkpoint-interval", "100000000")
        .refusedInOneLine(2, "is longer than the run's");
    List<String> big = new ArrayList<>(SMALL.subList(0, SMALL.size() - 2));
    big.addAll(List.of("--train-tokens", "1e400"));
    run(big).refusedInOneLine(2, "1e400");
    Path rates = dir.resolve("rates.yaml");
    Files.writeString(rates, "gpus: 8\ndays: 10\ncauses:\n  gpu: -3\n");
    run(SMALL, "--checkpoint-bandwidth", "10", "--failure-rates", rates.toString())
        .refusedInOneLine(2, "causes.gpu must be a whole count >= 0");
    Files.writeString(rates, "gpus: 0\ndays: 10\ncauses:\n  gpu: 3\n");
    run(SMALL, "--checkpoint-bandwidth", "10", "--failure-rates", rates.toString())
        .refusedInOneLine(2, "gpus must be a number from 1 to 100,000,000 GPUs");
  }

  @Test
  void figuresPastTheirPhysicalRangeAreRefusedInOneLine() throws Exception {
    // The auditor's file: 1e300 interruptions over 1 x 1e-300 GPU-days, a rate of Infinity per
    // GPU-day, an MTBF of 86,400 / Infinity = 0 s: an internal error, "MTBF must be > 0".
    Path rates = dir.resolve("fr.yaml");
    Files.writeString(rates, "source: x\ngpus: 1\ndays: 1e-300\ncauses: {gpu: 1e300}\n");
    List<String> plan = List.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:a100-80gb", "--global-batch", "8", "--train-tokens", "1000000000");
    CliRun.of(plan, "--checkpoint-bandwidth", "10", "--failure-rates", rates.toString())
        .refusedInOneLine(2, rates + ": days must be a number from 0.01 to 36,525 days");
    // Each flag took 1e-300: a checkpoint of 15 GB over 1e-300 GB/s printed "1.50e+301 s", an
    // MTBF of 1e-300 h "one per 0.00 h", a price of 1e-300 a cost of $8.7e-302.
    String[][] flags = {
        {"--checkpoint-bandwidth", "1e-300", "from 0.1 to 1,000,000 GB/s"},
        {"--mtbf-node", "1e-300", "from 0.1 to 876,600 hours"},
        {"--node-repair-hours", "1e-300", "from 0.01 to 876,600 hours"},
        {"--gpu-hour-price", "1e-300", "from 0.001 to 1,000,000 USD"},
        {"--restart-minutes", "1e300", "from 0 to 52,596,000 minutes"}};
    for (String[] f : flags) {
      List<String> a = new ArrayList<>(plan);
      if (!f[0].equals("--checkpoint-bandwidth") && !f[0].equals("--gpu-hour-price")) {
        a.addAll(List.of("--checkpoint-bandwidth", "10"));
      }
      CliRun.of(a, f[0], f[1]).refusedInOneLine(2, f[0] + " must be a number " + f[2]
          + ", got " + Double.parseDouble(f[1]));
    }
  }

  @Test
  void planPricesTheTimeToTrainOfItsPlan() throws Exception {
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--seq", "4096",
        "--cluster", "1x8:h100-80gb", "--global-batch", "16", "--train-tokens", "1000000000",
        "--checkpoint-bandwidth", "10", "--json");
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode root = JSON.readTree(p.out());
    // 1e9 tokens / (16 sequences * 4,096 tokens) = 15,258.8: 15,259 iterations.
    assertThat(root.at("/timeToTrain/iterations").asLong()).isEqualTo(15259);
    assertThat(root.at("/timeToTrain/productiveSeconds").asDouble()).isCloseTo(
        15259 * root.get("iterationSeconds").asDouble(), within(1e-6));
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb",
        "--checkpoint-bandwidth", "10").refusedInOneLine(2, "--checkpoint-bandwidth prices a whole run: it needs --train-tokens");
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb", "--train-tokens",
        "0").refusedInOneLine(2, "--train-tokens must be a whole number from 1 to");
  }

  @Test
  void theSweepGivesEveryPlannedPointItsRunAndAFrontOfDaysToTrain() throws Exception {
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: [opt-125m]\nseq: [512]\ngpus: [a100-80gb]\n"
        + "clusters: [1x4, 1x8]\nglobalBatch: [32]\n");
    Path jsonl = dir.resolve("s.jsonl");
    CliRun r = CliRun.of("sweep", "--grid", grid.toString(), "--quiet", "--train-tokens",
        "1000000000", "--checkpoint-bandwidth-per-node", "5", "--gpu-hour-price", "2",
        "--jsonl", jsonl.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("Pareto front of days to train against GPUs, opt-125m, seq 512");
    for (String line : Files.readAllLines(jsonl)) {
      JsonNode o = JSON.readTree(line);
      // 1e9 tokens / (32 * 512) = 61,035.2: 61,036 iterations.
      assertThat(o.get("trainIterations").asLong()).isEqualTo(61036);
      double days = o.get("trainDays").asDouble();
      assertThat(days).isGreaterThanOrEqualTo(61036 * o.get("iterationSeconds").asDouble()
          / 86400 - 1e-4);
      assertThat(o.get("usdToTrain").asDouble()).isCloseTo(days * 24 * o.get("gpus").asInt()
          * 2, within(0.02 + 1e-3 * days * 24 * o.get("gpus").asInt() * 2));
      assertThat(o.get("ettr").asDouble()).isGreaterThan(0.9).isLessThanOrEqualTo(1.0);
    }
    CliRun.of("sweep", "--grid", grid.toString(), "--quiet", "--checkpoint-bandwidth-per-node",
        "5").refusedInOneLine(2, "--checkpoint-bandwidth-per-node prices a whole run: it needs --train-tokens");
    CliRun.of("sweep", "--grid", grid.toString(), "--quiet", "--train-tokens", "10",
        "--checkpoint-bandwidth-per-node", "0").refusedInOneLine(2,
        "--checkpoint-bandwidth-per-node must be a number from 0.1 to 1,000,000 GB/s");
  }

  @Test
  void theReportDrawsTheRunAndItsEttrAgainstClusterSize() throws Exception {
    Path report = dir.resolve("r.html");
    JsonNode t = JSON.readTree(run(SMALL, "--checkpoint-bandwidth", "20", "--json", "--report",
        report.toString()).out()).get("timeToTrain");
    String html = Files.readString(report);
    assertThat(html).contains("6. Time to train, with interruptions");
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(
        "data-gpus=\"(\\d+)\" data-ettr=\"([0-9.]+)\"").matcher(html);
    double previous = 1;
    boolean own = false;
    while (m.find()) {
      double e = Double.parseDouble(m.group(2));
      // More GPUs are interrupted more often: the ratio never rises with the cluster.
      assertThat(e).isLessThanOrEqualTo(previous + 1e-12);
      previous = e;
      if (m.group(1).equals("16")) {
        own = true;
        assertThat(e).isCloseTo(t.get("ettr").asDouble(), within(1e-6));
      }
    }
    assertThat(own).isTrue();
  }

  @Test
  void sparesArePricedAgainstAllNodesWaitingForRepairs() {
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--seq", "4096",
        "--cluster", "4x8:a100-80gb", "--global-batch", "32", "--spare-nodes", "1",
        "--train-tokens", "100000000000", "--checkpoint-bandwidth", "10", "--mtbf-node", "200",
        "--node-repair-hours", "48");
    assertThat(p.code()).as(p.err()).isZero();
    // 3 nodes at 200 h each: one interruption per 66.67 h; every one loses a node (--mtbf-node).
    // Nodes in repair: Poisson with mean (1 / 66.67 h) x 48 h = 0.72; one spare is out with
    // P(X >= 1) = 1 - e^-0.72 = 0.51.
    assertThat(p.out()).contains("interruptions: one per 66.67 h on 24 GPUs")
        .contains("each waiting 48.0 h for repair only when all 1 spares are out (P = 0.51)")
        .contains("spares: 1 of 4 nodes held back, the plan above runs on 3")
        .contains("without, on all 4 nodes:");
    CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster", "4x8:a100-80gb",
        "--spare-nodes", "4").refusedInOneLine(2, "--spare-nodes must be from 1 to 3");
    // One node has none to spare: said so, not "from 1 to 0".
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb", "--global-batch",
        "64", "--quiet", "--spare-nodes", "1").refusedInOneLine(2, "--spare-nodes 1: "
            + "1x8:h100-80gb:ib-ndr400 has 1 node, so none can be spared");
    CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster", "4x8:a100-80gb",
        "--train-tokens", "100", "--node-repair-hours", "5").refusedInOneLine(2,
        "--node-repair-hours prices interruptions and checkpoints, which need "
            + "--checkpoint-bandwidth");
  }

  @Test
  void iterationsMayBeGivenInsteadOfTokens() throws Exception {
    List<String> base = new ArrayList<>(SMALL.subList(0, SMALL.size() - 2));
    JsonNode t = JSON.readTree(run(base, "--train-iterations", "1234", "--json").out())
        .get("timeToTrain");
    assertThat(t.get("iterations").asLong()).isEqualTo(1234);
    run(SMALL, "--train-iterations", "5").refusedInOneLine(2,
        "give --train-tokens or --train-iterations, not both");
    run(base, "--train-iterations", "0").refusedInOneLine(2,
        "--train-iterations must be a whole number from 1 to");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--train-iterations", "777", "--json");
    assertThat(JSON.readTree(p.out()).at("/timeToTrain/iterations").asLong()).isEqualTo(777);
  }

  @Test
  void noOutputMayNameTheFailureRatesAndAModulesPlanHasNoRunLength() throws Exception {
    Path rates = dir.resolve("rates.yaml");
    String text = "gpus: 8\ndays: 10\ncauses:\n  gpu: 3\n";
    Files.writeString(rates, text);
    CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster", "1x8:a100-80gb",
        "--global-batch", "8", "--train-tokens", "100000", "--checkpoint-bandwidth", "10",
        "--failure-rates", rates.toString(), "--out", rates.toString(), "--force")
        .refusedInOneLine(2, "--failure-rates");
    run(SMALL, "--checkpoint-bandwidth", "10", "--failure-rates", rates.toString(), "--report",
        rates.toString(), "--force").refusedInOneLine(2, "--failure-rates");
    assertThat(Files.readString(rates)).isEqualTo(text);
    Path hlo = dir.resolve("hlo.json");
    assertThat(CliRun.of("plan", "--hlo", "examples/train_step.hlo", "--cluster", "1x2:a100-80gb",
        "--microbatches", "1", "--out", hlo.toString()).code()).isZero();
    CliRun.of("simulate", "--plan", hlo.toString(), "--train-iterations", "5")
        .refusedInOneLine(2, "the plan of an HLO module counts microbatches");
  }

  @Test
  void aFileOfRatesReplacesTheDefault() throws Exception {
    Path rates = dir.resolve("rates.yaml");
    // 16 interruptions over 16 GPUs * 100 days: 0.01 per GPU-day; 16 GPUs: 6.25 days = 540,000 s.
    Files.writeString(rates, "source: test\ngpus: 16\ndays: 100\ncauses:\n  gpu: 10\n  net: 6\n");
    JsonNode t = JSON.readTree(run(SMALL, "--checkpoint-bandwidth", "10", "--failure-rates",
        rates.toString(), "--json").out()).get("timeToTrain");
    assertThat(t.get("mtbfSeconds").asDouble()).isCloseTo(540000, within(1e-6));
  }
}
