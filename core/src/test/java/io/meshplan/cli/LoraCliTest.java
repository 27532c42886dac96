package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

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
 * {@code --finetune lora} as a user meets it: Llama 3.1 8B with rank-16 adapters on its attention
 * and MLP projections on 8 H100s plans, simulates and exports; its model state per GPU is the
 * frozen weights and the adapters' gradients and Adam state; its peak memory meets a published
 * measurement; bad input is refused in one line.
 */
class LoraCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> SIM = List.of("simulate", "--model", "llama3.1-8b",
      "--cluster", "1x8:h100-80gb", "--seq", "4096", "--tp", "1", "--pp", "1", "--dp", "8",
      "--micro-batch", "1", "--global-batch", "64", "--json");

  @TempDir Path dir;

  private static JsonNode run(List<String> base, String... more) throws Exception {
    CliRun r = CliRun.of(base, more);
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  /**
   * Model state per GPU under plain data parallelism (each GPU holds everything): the frozen
   * 8,030,261,248 weights and the 41,943,040 adapters in bf16, (8,030,261,248 + 41,943,040) x 2 =
   * 16,144,408,576 bytes; the adapters' fp32 gradients 41,943,040 x 4 = 167,772,160 bytes; their
   * fp32 master copy and two Adam moments 41,943,040 x 12 = 503,316,480 bytes. Full fine-tuning
   * holds 8,030,261,248 x 4 bytes of gradients (and does not fit); LoRA's step is faster (no weight-gradient GEMMs)
   * and its data-parallel traffic is the adapters' gradients alone.
   */
  /** Writes the plan {@code text} to {@code bad} with one field of the object at {@code at} set. */
  private static void withField(String text, Path bad, String at, String field, Object value)
      throws Exception {
    JsonNode root = JSON.readTree(text);
    ((ObjectNode) root.at(at)).set(field, JSON.valueToTree(value));
    Files.writeString(bad, JSON.writeValueAsString(root));
  }

  @Test
  void adaptersAloneCarryGradientsAndOptimizerState() throws Exception {
    JsonNode lora = run(SIM, "--finetune", "lora", "--lora-rank", "16", "--lora-targets",
        "attention,mlp");
    // Full fine-tuning does not fit (157 GiB per GPU: exit 3), and is priced all the same.
    CliRun f = CliRun.of(SIM.toArray(String[]::new));
    assertThat(f.code()).as(f.err()).isEqualTo(3);
    JsonNode full = JSON.readTree(f.out());
    JsonNode mem = lora.at("/stages/0/memory");
    assertThat(mem.get("weights").asDouble()).isEqualTo(16_144_408_576.0);
    assertThat(mem.get("gradients").asDouble()).isEqualTo(167_772_160.0);
    assertThat(mem.get("optimizerState").asDouble()).isEqualTo(503_316_480.0);
    assertThat(full.at("/stages/0/memory/gradients").asDouble())
        .isEqualTo(8_030_261_248.0 * 4);
    assertThat(lora.at("/finetune/trainableParameters").asLong()).isEqualTo(41_943_040L);
    assertThat(lora.at("/finetune/frozenParameters").asLong()).isEqualTo(8_030_261_248L);
    assertThat(full.at("/finetune/mode").asText()).isEqualTo("full");
    assertThat(lora.get("iterationSeconds").asDouble())
        .isLessThan(0.9 * full.get("iterationSeconds").asDouble());
    assertThat(lora.at("/stages/0/communicationBytesPerGpu/dataParallel").asDouble())
        .isLessThan(0.01 * full.at("/stages/0/communicationBytesPerGpu/dataParallel")
            .asDouble());
  }

  /**
   * torchtune's README (pytorch/torchtune 0031bfb, "Memory and training speed"): Llama 3.1 8B
   * LoRA on one A6000, batch 2, a dataset packed to 2,048 tokens, peak memory 30.3 GiB. Its
   * config then (recipes/configs/llama3_1/8B_lora_single_device.yaml at 0031bfb): rank 8, alpha
   * 16, q_proj and v_proj, bf16, the chunked cross-entropy (upcast chunk by chunk); the 30.3 GiB
   * against the 16.2 GiB its 4090 row reports for the same run is the run without activation
   * checkpointing. meshplan: the 14.96 GiB of frozen weights, the activations of two 2,048-token
   * sequences through 32 blocks and the head's logits: within 10%.
   */
  @Test
  void peakMemoryMeetsTorchtunesPublishedSingleGpuRun() throws Exception {
    JsonNode r = run(List.of("simulate", "--model", "llama3.1-8b", "--cluster", "1x1:h100-80gb",
        "--seq", "2048", "--tp", "1", "--pp", "1", "--dp", "1", "--micro-batch", "2",
        "--global-batch", "2", "--recompute", "none", "--fused-cross-entropy", "--finetune",
        "lora", "--lora-rank", "8", "--lora-alpha", "16", "--lora-targets", "q_proj,v_proj",
        "--json"));
    double gib = r.at("/stages/0/peakMemoryBytes").asDouble() / (1L << 30);
    assertThat(gib).isCloseTo(30.3, withinPercentage(10));
  }

  @Test
  void thePlanKeepsItsAdaptersAndTorchtitanTrainsThem() throws Exception {
    Path plan = dir.resolve("plan.json");
    Path report = dir.resolve("report.html");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--seq", "4096", "--global-batch", "64", "--finetune", "lora", "--lora-rank", "16",
        "--lora-targets", "linear_qkv,o_proj,mlp", "--for", "torchtitan", "--out",
        plan.toString(), "--report", report.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(Files.readString(report)).contains("fine-tuned with LoRA rank 16, alpha 32, "
        + "targets linear_qkv,o_proj,gate_proj,up_proj,down_proj (37,748,736 trainable "
        + "parameters)");
    assertThat(p.out()).contains("fine-tuning: LoRA rank 16, alpha 32, targets linear_qkv,"
        + "o_proj,gate_proj,up_proj,down_proj\n  37,748,736 trainable of 8,068,009,984 "
        + "parameters (0.47%); the model's 8,030,261,248 weights frozen\n");
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/lora/rank").asInt()).isEqualTo(16);
    // Per block: linear_qkv 16 (4096 + 4096 + 2 x 1024) = 163,840, o_proj 16 (4096 + 4096) =
    // 131,072, gate, up and down 16 (4096 + 14336) = 294,912 each: 1,179,648; x 32 = 37,748,736.
    assertThat(saved.at("/model/lora/trainableParameters").asLong()).isEqualTo(37_748_736L);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isCloseTo(saved.get("iterationSeconds").asDouble(), withinPercentage(0.01));
    CliRun t = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan");
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("from torchtitan.components.lora import LoRAConverter")
        .contains("rank=16,").contains("alpha=32.0,")
        .contains("target_modules=[\"wqkv\", \"wo\", \"w1\", \"w3\", \"w2\"]");
    // Megatron-LM's pretrain_gpt.py trains every weight: exit 3, and the full fine-tuning offered.
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(m.code()).isEqualTo(3);
    assertThat(m.err()).contains("trains every weight");
    // Separate query, key and value adapters: torchtitan fuses the three, and says so.
    CliRun q = CliRun.of("export", "--to", "torchtitan", "--model", "llama3.1-8b", "--cluster",
        "1x8:h100-80gb", "--seq", "4096", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch",
        "1", "--global-batch", "64", "--finetune", "lora", "--lora-targets", "q_proj,v_proj");
    assertThat(q.code()).isEqualTo(3);
    assertThat(q.err()).contains("fuse the query, key and value projections");
    assertThat(q.out()).contains("--lora-targets linear_qkv");
  }

  @Test
  void badInputIsRefusedInOneLine() throws Exception {
    List<String> base = List.of("simulate", "--model", "llama3.1-8b", "--cluster",
        "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8");
    String[][] cases = {
        {"--finetune", "lora", "--lora-rank", "0", "--lora-rank must be at least 1"},
        {"--finetune", "lora", "--lora-rank", "4097", "--lora-rank 4097 exceeds the model's "
            + "hidden width 4096"},
        {"--finetune", "lora", "--lora-targets", "q_proj,lm_head", "unknown --lora-targets "
            + "'lm_head'"},
        {"--finetune", "lora", "--lora-targets", "q_proj,linear_qkv", "adapt q_proj twice"},
        {"--finetune", "lora", "--lora-alpha", "-1", "--lora-alpha must be a number from"},
        // Finite but absurd scales: 2^-1074 and 10^308 (the bounds are 1/1024 and 2^21).
        {"--finetune", "lora", "--lora-alpha", "4.9e-324", "--lora-alpha must be a number from"},
        {"--finetune", "lora", "--lora-alpha", "1e308", "--lora-alpha must be a number from"},
        {"--finetune", "qlora2", "--finetune 'qlora2' is unknown"},
        {"--lora-rank", "8", "--lora-rank needs --finetune lora"}};
    for (String[] c : cases) {
      List<String> args = new ArrayList<>(base);
      args.addAll(List.of(c).subList(0, c.length - 1));
      CliRun.of(args.toArray(String[]::new)).refusedInOneLine(2, c[c.length - 1]);
    }
    CliRun.of("simulate", "--model", "mixtral-8x7b", "--cluster", "1x8:h100-80gb",
        "--finetune", "lora").refusedInOneLine(2, "mixture-of-experts");
    CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "1x8:h100-80gb", "--finetune",
        "lora", "--lora-targets", "gate_proj").refusedInOneLine(2, "no gate projection");
    // shard builds one forward graph: frozen weights and packed documents are training's.
    CliRun.of("shard", "--model", "llama2-7b", "--mesh", "1x8", "--layers", "1", "--finetune",
        "lora").refusedInOneLine(2, "--finetune prices a training step");
    CliRun.of("shard", "--model", "llama2-7b", "--mesh", "1x8", "--layers", "1",
        "--mean-doc-len", "512").refusedInOneLine(2, "--mean-doc-len prices a training step");
    // An HLO module fixes its model: the training-step flags are refused beside --hlo too.
    CliRun.of("shard", "--hlo", "core/src/test/resources/hlo/softmax_fused.hlo", "--mesh", "2x4",
        "--finetune", "lora").refusedInOneLine(2, "--finetune changes a --model preset");
    CliRun.of("plan", "--hlo", "examples/gpt_train_step.hlo", "--microbatches", "2", "--cluster",
        "1x8:h100-80gb", "--lora-rank", "8").refusedInOneLine(2,
        "--lora-rank cannot be used with --hlo");
    CliRun.of("plan", "--hlo", "examples/gpt_train_step.hlo", "--microbatches", "2", "--cluster",
        "1x8:h100-80gb", "--mean-doc-len", "100").refusedInOneLine(2,
        "--mean-doc-len cannot be used with --hlo");
    // A plan carries its adapters: the flags are refused beside --plan, and a plan file whose
    // adapters are broken is refused by name.
    Path plan = dir.resolve("plan.json");
    assertThat(CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--finetune", "lora", "--out", plan.toString()).code()).isZero();
    CliRun.of("simulate", "--plan", plan.toString(), "--lora-rank", "4")
        .refusedInOneLine(2, "--lora-rank");
    String text = Files.readString(plan);
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, text.replaceFirst("\"rank\" : 16", "\"rank\" : 0"));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2, "at least 1");
    // The plan's own summary must agree with its model.
    ObjectNode root = (ObjectNode) JSON.readTree(text);
    assertThat(root.at("/finetune/mode").asText()).isEqualTo("lora");
    root.putObject("finetune").put("mode", "full");
    Files.writeString(bad, JSON.writeValueAsString(root));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.mode' is 'full' but model.lora makes it 'lora'");
    // Every derived count and setting too: the rank, the frozen weights, the adapters' size
    // (8,030,261,248 frozen; r16 on all seven projections of 32 layers: 32 x 16 x (2 x (4096 +
    // 4096) + 2 x (4096 + 1024) + 3 x (4096 + 14336)) = 41,943,040 trained).
    withField(text, bad, "/finetune", "rank", 1L << 40);
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.rank' is 1099511627776 but model.lora makes it 16");
    assertThat(JSON.readTree(text).at("/finetune/frozenParameters").asLong())
        .isEqualTo(8_030_261_248L);
    withField(text, bad, "/finetune", "frozenParameters", 7);
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.frozenParameters' is 7 but model.lora makes it 8030261248");
    assertThat(JSON.readTree(text).at("/model/lora/trainableParameters").asLong())
        .isEqualTo(41_943_040L);
    withField(text, bad, "/model/lora", "trainableParameters", 1);
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'model.lora.trainableParameters' is 1 but model.lora makes it 41943040");
    // Targets agree by the adapters they name, not by spelling.
    withField(text, bad, "/finetune", "targets", "All-Linear");
    assertThat(CliRun.of("simulate", "--plan", bad.toString()).code()).isZero();
    withField(text, bad, "/finetune", "targets", "q_proj,\u001b[2J");
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.targets' is 'q_proj,\\u001b[2J' but model.lora makes it 'q_proj,k_proj,");
    // A full training plan has no model.lora: its summary is the model's fields', and so says
    // the refusal (it blamed model.lora). Llama 3.1 8B at 32 layers trains 8,030,261,248
    // parameters; the file's 64 make 15,009,845,248.
    Path whole = dir.resolve("full.json");
    assertThat(CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--out", whole.toString()).code()).isZero();
    ObjectNode fullRoot = (ObjectNode) JSON.readTree(Files.readString(whole));
    ((ObjectNode) fullRoot.get("model")).put("layers", 64);
    Files.writeString(bad, JSON.writeValueAsString(fullRoot));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "field 'finetune.trainableParameters' is 8030261248 but the model's fields make it "
            + "15009845248");
    // torchtitan 0.2.2 writes no adapters, and names the form that does.
    CliRun v022 = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan",
        "--framework-version", "0.2.2");
    assertThat(v022.code()).isEqualTo(3);
    assertThat(v022.err()).contains("(main, not --framework-version 0.2.2)");
  }
}
