package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --grad-reduce-in-bf16}, Megatron-LM's flag that Megatron-Bridge's performance recipes
 * set: the distributed optimizer's gradient buffer and reduce-scatter in bf16. It halves the
 * gradients kept and the gradient bytes reduced, a plan file keeps it, Megatron-LM's export
 * writes it, and torchtitan (float32 reductions only) and DeepSpeed refuse it in one line with the
 * fp32 reduction as the nearest; it needs bf16 training.
 */
class Bf16GradReduceCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] FLAGS = {"--model", "llama3-8b", "--seq", "2048", "--cluster",
      "2x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "16", "--distributed-optimizer", "--sequence-parallel"};

  @TempDir Path dir;

  private static CliRun run(String command, String... extra) {
    List<String> a = new ArrayList<>(List.of(command));
    a.addAll(List.of(FLAGS));
    a.addAll(List.of(extra));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void halvesTheGradientsKeptAndReduced() throws Exception {
    CliRun fp32 = run("simulate", "--json");
    CliRun bf16 = run("simulate", "--json", "--grad-reduce-in-bf16");
    assertThat(bf16.code()).as(bf16.err()).isZero();
    JsonNode a = JSON.readTree(fp32.out());
    JsonNode b = JSON.readTree(bf16.out());
    // The distributed optimizer's buffer holds every gradient of the replica: 4 bytes each in
    // fp32, 2 in bf16, so exactly half.
    assertThat(b.at("/memory/gradients").asDouble())
        .isEqualTo(a.at("/memory/gradients").asDouble() / 2);
    // The data-parallel bytes: the gradient reduce-scatter over 8 GPUs sends 7/8 of the
    // gradient buffer, which shrinks by the half just checked; the weight gather (bf16 either
    // way) stays. So the bytes fall by 7/8 of the gradients' difference.
    double saved = a.at("/memory/gradients").asDouble() - b.at("/memory/gradients").asDouble();
    assertThat(a.at("/communicationBytesPerGpu/dataParallel").asDouble()
        - b.at("/communicationBytesPerGpu/dataParallel").asDouble())
        .isCloseTo(saved * 7 / 8, org.assertj.core.data.Offset.offset(1.0));
    assertThat(b.at("/iterationSeconds").asDouble())
        .isLessThanOrEqualTo(a.at("/iterationSeconds").asDouble());
  }

  @Test
  void aPlanKeepsItAndMegatronWritesIt() throws Exception {
    Path plan = dir.resolve("bf16.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--megatron-grid", "--grad-reduce-in-bf16",
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/overlaps/bf16GradReduce").asBoolean()).isTrue();
    CliRun same = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(JSON.readTree(same.out()).get("iterationSeconds").asDouble())
        .isEqualTo(saved.get("iterationSeconds").asDouble());
    CliRun megatron = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(megatron.code()).as(megatron.err()).isZero();
    assertThat(megatron.out()).contains("--grad-reduce-in-bf16");
    // A plan without it writes no such flag.
    CliRun plain = run("export", "--to", "megatron");
    assertThat(plain.out()).doesNotContain("--grad-reduce-in-bf16");
    // A string where a boolean belongs is refused, naming the field.
    ObjectNode bad = (ObjectNode) JSON.readTree(Files.readString(plan));
    ((ObjectNode) bad.get("overlaps")).put("bf16GradReduce", "yes");
    Path f = dir.resolve("bad.json");
    JSON.writeValue(f.toFile(), bad);
    CliRun r = CliRun.of("simulate", "--plan", f.toString());
    r.refusedInOneLine(ExitCodes.BAD_INPUT, "meshplan: error: " + f + ": overlaps: ");
  }

  @Test
  void torchtitanAndDeepSpeedRefuseIt() {
    for (String to : List.of("torchtitan", "deepspeed")) {
      CliRun r = run("export", "--to", to, "--grad-reduce-in-bf16");
      assertThat(r.code()).as(to + r.err()).isEqualTo(3);
      assertThat(r.err().strip()).doesNotContain("\n").contains("--grad-reduce-in-bf16");
      String nearest = r.nearestExport();
      assertThat(nearest).as(to).doesNotContain("--grad-reduce-in-bf16");
    }
  }

  /** A V100 plan (f16) whose file says the gradients reduce in bf16 is refused by its field. */
  @Test
  void anF16PlanFileCannotSayIt() throws Exception {
    Path plan = dir.resolve("v100.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:v100-32gb", "--global-batch", "16", "--megatron-grid", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    ((ObjectNode) root.get("overlaps")).put("bf16GradReduce", true);
    Path f = dir.resolve("v100-bf16.json");
    JSON.writeValue(f.toFile(), root);
    for (String command : List.of("simulate", "export")) {
      List<String> a = new ArrayList<>(List.of(command, "--plan", f.toString()));
      if (command.equals("export")) {
        a.addAll(List.of("--to", "megatron"));
      }
      CliRun r = CliRun.of(a.toArray(String[]::new));
      r.refusedInOneLine(ExitCodes.BAD_INPUT, "meshplan: error: " + f
          + ": overlaps: 'bf16GradReduce' is true, but the model trains in f16");
    }
  }

  /**
   * A plan file's tensor-parallel overlap needs sequence parallelism, as the flag does; a
   * --moe-dispatcher on a dense model is refused as the other routing flags are. Both were taken
   * and priced as given.
   */
  @Test
  void overlapsAndDispatchersTheJobCannotRunAreRefused() throws Exception {
    Path plan = dir.resolve("dense.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:a100-80gb", "--global-batch", "16", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    ((ObjectNode) root.get("overlaps")).put("tensorComm", true);
    root.get("stages").forEach(st -> ((ObjectNode) st).put("sequenceParallel", false));
    Path f = dir.resolve("tc.json");
    JSON.writeValue(f.toFile(), root);
    CliRun.of("simulate", "--plan", f.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        f + ": overlaps: 'tensorComm' is true, but no stage runs sequence parallelism");
    // A stage of tensor-parallel size 1 in sequence parallelism is named by file and stage; the
    // simulator said only 'stage 0 cannot run with tensor-parallel size 1'.
    ObjectNode tp1 = (ObjectNode) JSON.readTree(Files.readString(plan));
    ObjectNode first = (ObjectNode) tp1.get("stages").get(0);
    // The stage's mesh of 8 as data-parallel 8 x tensor-parallel 1: its microbatch split 8 ways.
    int replicas = first.get("logicalMesh").get(0).asInt();
    first.putArray("logicalMesh").add(8).add(1);
    first.put("microBatch", first.get("microBatch").asInt() * replicas / 8);
    first.put("sequenceParallel", true);
    Path g = dir.resolve("sp.json");
    JSON.writeValue(g.toFile(), tp1);
    CliRun.of("simulate", "--plan", g.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        g + ": stages[0]: sequenceParallel is true with a tensor-parallel size of 1");
    for (String command : List.of("simulate", "export")) {
      List<String> a = new ArrayList<>(List.of(command, "--model", "llama2-7b", "--layers", "2",
          "--cluster", "1x8:a100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch",
          "1", "--global-batch", "16", "--moe-dispatcher", "deepep"));
      if (command.equals("export")) {
        a.addAll(List.of("--to", "megatron"));
      }
      CliRun.of(a.toArray(String[]::new)).refusedInOneLine(ExitCodes.BAD_INPUT,
          "--moe-dispatcher needs a mixture-of-experts model; this model is dense");
    }
  }

  @Test
  void needsBf16Training() {
    CliRun r = CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "1x8:v100-32gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "16",
        "--grad-reduce-in-bf16");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().strip()).doesNotContain("\n")
        .contains("--grad-reduce-in-bf16 needs bf16 training");
  }
}
