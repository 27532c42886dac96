package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.calibrate.TrainingLogs;
import io.meshplan.calibrate.TrainingRun;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.planner.TrainRunSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hybrid sharding ({@code --zero-stage 3 --shard-group G}) as a user meets it: priced, written
 * for torchtitan, refused by the frameworks that do not run it as priced, read back from a plan
 * file and from a torchtitan run, and bad input refused in one line.
 */
class HybridShardingCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> SIM = List.of("simulate", "--model", "llama3.1-8b",
      "--cluster", "4x8:h100-80gb", "--seq", "8192", "--tp", "1", "--pp", "1", "--dp", "32",
      "--micro-batch", "1", "--global-batch", "128", "--recompute", "full", "--zero-stage", "3");

  @TempDir Path dir;

  /**
   * Llama 3.1 8B (N = 8,030,261,248 parameters) on 32 GPUs, sharded inside groups of 8 (one
   * node each) and replicated across 4: weights N x 2 / 8 = 2,007,565,312 bytes, fp32 gradients
   * N x 4 / 8 = 4,015,130,624, master and moments N x 12 / 8 = 12,045,391,872. Per microbatch a
   * GPU sends two all-gathers of the 16,060,522,496 weight bytes over 8 (7/8 of them each,
   * 28,105,914,368 together), a reduce-scatter of the 32,121,044,992 gradient bytes over 8
   * (28,105,914,368), and an all-reduce of its group's eighth, 4,015,130,624 bytes, over the 4
   * replicas (2 x 3/4 of it, 6,022,695,936): 62,234,524,672 bytes, x 4 microbatches =
   * 248,938,098,688 per iteration.
   */
  @Test
  void hybridShardingIsPricedAsItsCollectives() throws Exception {
    CliRun h = CliRun.of(SIM, "--shard-group", "8", "--json");
    assertThat(h.code()).as(h.err()).isZero();
    JsonNode s = JSON.readTree(h.out()).at("/stages/0");
    assertThat(s.at("/memory/weights").asDouble()).isEqualTo(2_007_565_312.0);
    assertThat(s.at("/memory/gradients").asDouble()).isEqualTo(4_015_130_624.0);
    assertThat(s.at("/memory/optimizerState").asDouble()).isEqualTo(12_045_391_872.0);
    assertThat(s.at("/communicationBytesPerGpu/dataParallel").asDouble())
        .isEqualTo(248_938_098_688.0);
    // FSDP over all 32 holds a quarter of that state.
    CliRun f = CliRun.of(SIM, "--json");
    assertThat(JSON.readTree(f.out()).at("/stages/0/memory/weights").asDouble())
        .isEqualTo(16_060_522_496.0 / 32);
    // The text names the groups.
    CliRun text = CliRun.of(SIM, "--shard-group", "8");
    assertThat(text.code()).as(text.err()).isZero();
  }

  @Test
  void torchtitanWritesTheGroupsAndOthersSayTheyCannot() {
    List<String> export = new ArrayList<>(SIM);
    export.set(0, "export");
    CliRun t = CliRun.of(export, "--to", "torchtitan", "--shard-group", "8");
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("config.parallelism.data_parallel_replicate_degree = 4\n")
        .contains("config.parallelism.data_parallel_shard_degree = 8\n")
        .contains("HSDP, FSDP (ZeRO-3) inside each of 4 groups of 8 ranks");
    CliRun v022 = CliRun.of(export, "--to", "torchtitan", "--framework-version", "0.2.2",
        "--shard-group", "8");
    assertThat(v022.code()).as(v022.err()).isZero();
    assertThat(v022.out()).contains("data_parallel_replicate_degree = 4\n")
        .contains("data_parallel_shard_degree = 8\n");
    // Megatron-FSDP all-reduces across its replicas on the last microbatch only: priced so with
    // --hsdp-step-reduce, which its export needs and torchtitan's refuses.
    CliRun m = CliRun.of(export, "--to", "megatron", "--shard-group", "8");
    assertThat(m.code()).isEqualTo(3);
    assertThat(m.err()).contains("once per step");
    assertThat(m.out()).contains("--shard-group 8 --hsdp-step-reduce");
    CliRun mf = CliRun.of(export, "--to", "megatron", "--shard-group", "8", "--hsdp-step-reduce");
    assertThat(mf.code()).as(mf.err()).isZero();
    assertThat(mf.out()).contains("--use-megatron-fsdp\n")
        .contains("--data-parallel-sharding-strategy optim_grads_params\n")
        .contains("--num-distributed-optimizer-instances 4\n");
    CliRun ts = CliRun.of(export, "--to", "torchtitan", "--shard-group", "8", "--hsdp-step-reduce");
    assertThat(ts.code()).isEqualTo(3);
    assertThat(ts.err()).contains("every microbatch");
    // Accelerate's export writes no hybrid sharding and offers ZeRO-3 over all.
    CliRun d = CliRun.of(export, "--to", "accelerate", "--shard-group", "8");
    assertThat(d.code()).isEqualTo(3);
    assertThat(d.err()).contains("writes no hybrid sharding");
  }

  /**
   * Once per step, the replicas' all-reduce leaves the microbatches: 4 x (28,105,914,368 +
   * 28,105,914,368) + 6,022,695,936 = 230,870,010,880 bytes per GPU per iteration.
   */
  @Test
  void megatronFsdpReducesTheReplicasOncePerStep() throws Exception {
    CliRun h = CliRun.of(SIM, "--shard-group", "8", "--hsdp-step-reduce", "--json");
    assertThat(h.code()).as(h.err()).isZero();
    assertThat(JSON.readTree(h.out()).at("/stages/0/communicationBytesPerGpu/dataParallel")
        .asDouble()).isEqualTo(230_870_010_880.0);
  }

  @Test
  void aPlanFileKeepsItsShardGroup() throws Exception {
    // torchtitan's plan here: one stage of FSDP over the 32 GPUs (mesh 32 x 1, ZeRO-3).
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "4x8:h100-80gb",
        "--seq", "8192", "--global-batch", "128", "--for", "torchtitan", "--out",
        plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    ObjectNode s0 = (ObjectNode) root.get("stages").get(0);
    assertThat(root.get("stages").size()).isEqualTo(1);
    assertThat(s0.get("zeroStage").asInt()).isEqualTo(3);
    assertThat(s0.at("/logicalMesh/0").asInt()).isEqualTo(32);
    assertThat(s0.has("shardGroup")).isFalse();
    // The same stage sharded inside groups of 8: its state is the flags' (see above).
    s0.put("shardGroup", 8);
    Path hsdp = dir.resolve("hsdp.json");
    Files.writeString(hsdp, JSON.writeValueAsString(root));
    CliRun back = CliRun.of("simulate", "--plan", hsdp.toString(), "--json");
    assertThat(back.code()).as(back.err()).isZero();
    assertThat(JSON.readTree(back.out()).at("/stages/0/memory/weights").asDouble())
        .isEqualTo(2_007_565_312.0);
    // Exported, the plan keeps its groups.
    CliRun t = CliRun.of("export", "--plan", hsdp.toString(), "--to", "torchtitan");
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("data_parallel_shard_degree = 8\n");
    s0.put("shardGroup", 5);
    Files.writeString(hsdp, JSON.writeValueAsString(root));
    CliRun.of("simulate", "--plan", hsdp.toString()).refusedInOneLine(2, "shard group 5");
  }

  @Test
  void badShardGroupsAreRefusedInOneLine() {
    CliRun.of(SIM, "--shard-group", "5").refusedInOneLine(2, "--shard-group 5 must divide --dp 32 and "
        + "lie strictly between 1 and it");
    CliRun.of(SIM, "--shard-group", "32").refusedInOneLine(2, "--shard-group 32 must divide");
    CliRun.of(SIM, "--shard-group", "1").refusedInOneLine(2, "--shard-group must be at least 2");
    CliRun.of(SIM, "--shard-group", "0").refusedInOneLine(2, "--shard-group must be at least 2");
    // The replicas' cadence without replicas to reduce is refused, not ignored.
    CliRun.of(SIM, "--hsdp-step-reduce").refusedInOneLine(2, "--hsdp-step-reduce times hybrid "
        + "sharding's replica reduction");
    List<String> export = new ArrayList<>(SIM);
    export.set(0, "export");
    CliRun.of(export, "--to", "torchtitan", "--hsdp-step-reduce").refusedInOneLine(2,
        "--hsdp-step-reduce times");
    List<String> zero1 = new ArrayList<>(SIM);
    zero1.set(zero1.indexOf("--zero-stage") + 1, "1");
    CliRun.of(zero1, "--shard-group", "8").refusedInOneLine(2, "--shard-group shards the whole model "
        + "state inside groups: it needs --zero-stage 3");
    CliRun.of(SIM, "--shard-group", "8", "--cp", "2", "--attention", "flash")
        .refusedInOneLine(2, "not modelled");
  }

  /**
   * A torchtitan run of HSDP (data_parallel_replicate_degree 2, the shard degree the rest of 8
   * GPUs, so 4) timed as meshplan simulates it at compute scale 0.8125 is refitted to that scale
   * within 1e-3; the same run read as FSDP over all 8 simulates another time, so the reading is
   * not ignored.
   */
  @Test
  void aTorchtitanHybridRunIsRecalibratedToItsScale() throws Exception {
    Path examples = Path.of("examples/calibrate");
    String toml = Files.readString(examples.resolve("torchtitan_llama3_8b.toml"))
        .replace("data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2")
        .replace("mode = \"selective\"", "mode = \"full\"");
    Path config = dir.resolve("hsdp.toml");
    Files.writeString(config, toml);
    Path example = examples.resolve("torchtitan_llama3_8b_h100.log");
    double truth = 0.8125;
    TrainingRun r = TrainingLogs.read(example, Optional.of(config));
    assertThat(r.parallel().shardReplicas()).isEqualTo(2);
    double t = TrainRunSimulator.of(r, ClusterSpec.parse("1x8:h100-80gb")).iterationSeconds(truth);
    Path fsdpConfig = dir.resolve("fsdp.toml");
    Files.writeString(fsdpConfig, toml.replace("data_parallel_replicate_degree = 2",
        "data_parallel_replicate_degree = 1"));
    double fsdp = TrainRunSimulator.of(TrainingLogs.read(example, Optional.of(fsdpConfig)),
        ClusterSpec.parse("1x8:h100-80gb")).iterationSeconds(truth);
    assertThat(Math.abs(fsdp - t)).isGreaterThan(1e-4 * t);
    long tps = Math.round(8192 / t);
    Path log = dir.resolve("titan.log");
    Files.writeString(log, Files.readString(example).replaceAll("tps: [0-9,]+",
        "tps: " + String.format(Locale.ROOT, "%,d", tps)));
    Path out = dir.resolve("h100.json");
    CliRun run = CliRun.of("calibrate", "--train", log.toString(), "--config", config.toString(),
        "--cluster", "1x8:h100-80gb", "--out", out.toString(), "--json");
    assertThat(run.code()).as(run.err()).isZero();
    double fitted = ProfileFiles.read(out).computeScale(
        io.meshplan.cluster.GpuCatalog.find("h100-80gb").orElseThrow());
    assertThat(fitted).isCloseTo(truth, within(1e-3 * truth));
  }
}
