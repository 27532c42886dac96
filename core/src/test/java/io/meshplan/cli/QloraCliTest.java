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
 * {@code --finetune qlora} as a user meets it: Llama 3.1 8B with rank-16 adapters on its attention
 * and MLP projections over an NF4 base on 8 H100s simulates and plans; its weights are the
 * 4.127-bit base, the bf16 embeddings, head and norms, and the adapters; the plan file keeps the
 * base; every export refuses it (exit 3, nothing written); bad input is refused in one line.
 */
class QloraCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> SIM = List.of("simulate", "--model", "llama3.1-8b",
      "--cluster", "1x8:h100-80gb", "--seq", "4096", "--tp", "1", "--pp", "1", "--dp", "8",
      "--micro-batch", "1", "--global-batch", "64", "--lora-rank", "16", "--lora-targets",
      "attention,mlp", "--json");

  @TempDir Path dir;

  private static JsonNode run(List<String> base, String... more) throws Exception {
    CliRun r = CliRun.of(base, more);
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  /**
   * Weights per GPU (plain data parallelism: each GPU holds all): the NF4 base of the 32 blocks'
   * seven projections, 32 x 112,513,024 = 3,600,416,768 bytes (QloraTest); the bf16 embedding
   * and LM head (2 x 128,256 x 4,096 = 1,050,673,152) and norms (32 x 2 x 4,096 + 4,096 =
   * 266,240), 1,050,939,392 x 2 = 2,101,878,784 bytes; the adapters 41,943,040 x 2 = 83,886,080
   * bytes: 5,786,181,632 bytes (5.39 GiB, LoRA's bf16 base 16,144,408,576). The adapters'
   * gradients and Adam state are LoRA's: 41,943,040 x 4 and x 12. The same trainable count as
   * LoRA (8,030,261,248 frozen). Dequantizing the base before each GEMM, forward and backward,
   * costs time: the step is slower than LoRA's, by less than 10% here.
   */
  @Test
  void theBaseIsHeldInFourBitsAndDequantizedForEachGemm() throws Exception {
    JsonNode q = run(SIM, "--finetune", "qlora");
    JsonNode l = run(SIM, "--finetune", "lora");
    JsonNode mem = q.at("/stages/0/memory");
    assertThat(mem.get("weights").asDouble()).isEqualTo(5_786_181_632.0);
    assertThat(l.at("/stages/0/memory/weights").asDouble()).isEqualTo(16_144_408_576.0);
    assertThat(mem.get("gradients").asDouble()).isEqualTo(167_772_160.0);
    assertThat(mem.get("optimizerState").asDouble()).isEqualTo(503_316_480.0);
    assertThat(q.at("/finetune/mode").asText()).isEqualTo("qlora");
    assertThat(q.at("/finetune/trainableParameters").asLong()).isEqualTo(41_943_040L);
    assertThat(q.at("/finetune/frozenParameters").asLong()).isEqualTo(8_030_261_248L);
    double tq = q.get("iterationSeconds").asDouble();
    double tl = l.get("iterationSeconds").asDouble();
    assertThat(tq).isGreaterThan(tl).isLessThan(1.1 * tl);
    CliRun text = CliRun.of(SIM.subList(0, SIM.size() - 1), "--finetune", "qlora");
    assertThat(text.out()).contains("fine-tuning: QLoRA (NF4 base) rank 16, alpha 32, targets "
        + "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj\n  41,943,040 trainable of "
        + "8,072,204,288 parameters (0.52%); the model's 8,030,261,248 weights frozen\n");
  }

  /**
   * torchtune's README (pytorch/torchtune 0031bfb, "Memory and training speed"): Llama 3.1 405B
   * QLoRA on 8 A100s, peak memory per GPU 44.8 GB (41.72 GiB). Its config then
   * (recipes/configs/llama3_1/405B_qlora.yaml at 0031bfb): rank 16, alpha 32, q, k, v and output
   * projections and the MLP, FSDP over the 8 GPUs without CPU offload, activation checkpointing,
   * bf16, batch size 1; the README's note says its rows ran batch 2 packed to 2,048 tokens. Read
   * as the config states it (one 2,048-token sequence a GPU), meshplan's 43.63 GiB is 4.6% above;
   * at batch 2 it is 53.60 GiB, 28% above, which this test does not claim. torchtune's base is
   * torchao's NF4Tensor: the same blocks of 64 and constants quantized in blocks of 256. Its 8B
   * row (one RTX 4090, 7.4 GiB) meshplan overstates by half (11.10 GiB: 3.42 GiB of head-logit
   * temporaries that torchtune's chunked cross-entropy avoids), and it is not pinned either.
   */
  @Test
  void peakMemoryMeetsTorchtunes405bQloraRun() throws Exception {
    JsonNode r = run(List.of("simulate", "--model", "llama3.1-405b", "--cluster",
        "1x8:a100-80gb", "--seq", "2048", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch",
        "1", "--global-batch", "8", "--zero-stage", "3", "--recompute", "full", "--finetune",
        "qlora", "--lora-rank", "16", "--lora-alpha", "32", "--lora-targets", "attention,mlp",
        "--json"));
    double gb = r.at("/stages/0/peakMemoryBytes").asDouble() / 1e9;
    assertThat(gb).isCloseTo(44.8, org.assertj.core.api.Assertions.withinPercentage(10));
  }

  /**
   * plan searches data-parallel layouts only (tensor parallelism of a 4-bit base refused), keeps
   * the base in the plan file (model.lora.base nf4, finetune.mode qlora), which simulate reads
   * back at the same time; the exports refuse it, exit 3, and write nothing.
   */
  @Test
  void thePlanKeepsTheBaseAndNoExportWritesIt() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--seq", "4096", "--global-batch", "64", "--finetune", "qlora", "--lora-rank", "16",
        "--lora-targets", "attention,mlp", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/lora/base").asText()).isEqualTo("nf4");
    assertThat(saved.at("/finetune/mode").asText()).isEqualTo("qlora");
    for (JsonNode s : saved.get("stages")) {
      // The logical mesh is data-parallel x tensor-parallel; every weight replicated.
      assertThat(s.at("/logicalMesh/1").asInt()).isEqualTo(1);
      for (JsonNode t : s.get("tensors")) {
        assertThat(t.get("sharding").asText()).isEqualTo("{replicated}");
      }
    }
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isEqualTo(saved.get("iterationSeconds").asDouble());
    for (String to : List.of("megatron", "torchtitan", "accelerate")) {
      Path out = dir.resolve("out-" + to);
      CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", to, "--out",
          out.toString());
      assertThat(e.code()).as(to).isEqualTo(3);
      assertThat(e.err()).as(to).contains(to + " export writes no 4-bit base (--finetune "
          + "qlora)").doesNotContain("\tat ");
      assertThat(e.err().strip().lines().count()).as(to).isEqualTo(1);
      assertThat(Files.exists(out)).as(to).isFalse();
    }
  }

  @Test
  void badInputIsRefusedInOneLine() throws Exception {
    List<String> base = List.of("simulate", "--model", "llama3.1-8b", "--cluster",
        "1x8:h100-80gb", "--finetune", "qlora", "--micro-batch", "1", "--global-batch", "64");
    String[][] cases = {
        {"--dtype", "fp8", "--tp", "1", "--pp", "1", "--dp", "8", "QLoRA trains in bf16 (its "
            + "4-bit base is dequantized to bf16 for each GEMM); the training precision is fp8"},
        {"--dtype", "f32", "--tp", "1", "--pp", "1", "--dp", "8", "training precision is f32"},
        {"--dtype", "f16", "--tp", "1", "--pp", "1", "--dp", "8", "training precision is f16"},
        {"--tp", "2", "--pp", "1", "--dp", "4", "QLoRA's 4-bit base runs data-parallel only"},
        {"--lora-rank", "0", "--tp", "1", "--pp", "1", "--dp", "8",
            "--lora-rank must be at least 1, got 0"},
        {"--lora-rank", "4097", "--tp", "1", "--pp", "1", "--dp", "8", "exceeds the model's "
            + "hidden width 4096"}};
    for (String[] c : cases) {
      List<String> args = new ArrayList<>(base);
      args.addAll(List.of(c).subList(0, c.length - 1));
      CliRun.of(args.toArray(String[]::new)).refusedInOneLine(2, c[c.length - 1]);
    }
    CliRun.of("simulate", "--model", "nemotron-h-8b", "--cluster", "1x8:h100-80gb",
        "--finetune", "qlora").refusedInOneLine(2, "QLoRA on a hybrid model");
    // A plan file's base: any word but nf4 is refused by name, and the file is left as it was.
    Path plan = dir.resolve("plan.json");
    assertThat(CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--finetune", "qlora", "--out", plan.toString()).code()).isZero();
    String text = Files.readString(plan);
    Path bad = dir.resolve("bad.json");
    for (Object v : new Object[] {"nf8", "NF4 ", 4, "\u001b[2J"}) {
      ObjectNode root = (ObjectNode) JSON.readTree(text);
      ((ObjectNode) root.at("/model/lora")).set("base", JSON.valueToTree(v));
      String written = JSON.writeValueAsString(root);
      Files.writeString(bad, written);
      CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2, "base");
      assertThat(Files.readString(bad)).isEqualTo(written);
    }
    // The summary must agree: a QLoRA plan is not a LoRA one.
    ObjectNode root = (ObjectNode) JSON.readTree(text);
    ((ObjectNode) root.get("finetune")).put("mode", "lora");
    Files.writeString(bad, JSON.writeValueAsString(root));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.mode' is 'lora' but model.lora makes it 'qlora'");
    // A QLoRA plan is fp8 nowhere: a dtype edited to fp8 is refused.
    assertThat(text).contains("\"dtype\" : \"bf16\"");
    Files.writeString(bad, text.replace("\"dtype\" : \"bf16\"", "\"dtype\" : \"fp8\""));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2, "QLoRA trains in bf16");
  }
}
