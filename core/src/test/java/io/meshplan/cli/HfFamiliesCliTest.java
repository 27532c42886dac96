package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code plan --model config.json} on the published configs of the Hugging Face families, and the
 * one-line refusals of hostile configs.
 */
class HfFamiliesCliTest {
  private static final String HF = "core/src/test/resources/hf/";

  /**
   * Each config plans on one node of eight H100s, and the plan's JSON states the exact parameter
   * count (the arithmetic is in {@code HfFamiliesTest.exactParameterCounts}).
   */
  @ParameterizedTest
  @CsvSource({"qwen2.5-7b.json, 7615616512", "qwen3-8b.json, 8190735360",
      "gemma-2-9b.json, 9241705984", "phi-3-mini-4k-instruct.json, 3821079552",
      "olmo-2-1124-7b.json, 7298617344", "granite-3.0-8b-base.json, 8170848256"})
  void eachPublishedConfigPlans(String file, long params) throws IOException {
    CliRun r = CliRun.of("plan", "--model", HF + file, "--cluster", "1x8:h100-80gb", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err()).doesNotContain("warning");
    JsonNode plan = new ObjectMapper().readTree(r.out());
    assertThat(plan.path("model").path("parameters").asLong()).isEqualTo(params);
    assertThat(plan.path("stages").size()).isPositive();
  }

  @Test
  void aModelDirectoryPlansAndAnUnknownFieldIsWarned(@TempDir Path dir) throws IOException {
    Path model = Files.createDirectory(dir.resolve("Qwen2.5-7B"));
    Files.writeString(model.resolve("config.json"), Files.readString(Path.of(HF
        + "qwen2.5-7b.json")).replaceFirst("\\{", "{\"attention_variant\": \"linear\", "));
    CliRun r = CliRun.of("plan", "--model", model.toString(), "--cluster", "1x8:h100-80gb");
    assertThat(r.code()).as(r.err()).isZero();
    // 131072 positions, capped at 8192 (HfSequence), which a note says.
    assertThat(r.out()).startsWith("plan for Qwen2.5-7B (7.6B parameters, 28 layers, seq 8192)");
    assertThat(r.err().strip()).isEqualTo("meshplan: warning: " + model.resolve("config.json")
        + ": field 'attention_variant' is not one meshplan knows for model_type qwen2; it is "
        + "ignored, and may change the model's cost\nmeshplan: note: "
        + model.resolve("config.json") + ": planning sequences of 8192 tokens"
        + " (max_position_embeddings 131072, capped at 8192, the longest pre-training sequence"
        + " meshplan takes by default); give --seq for another length");
  }

  @Test
  void hostileConfigsAreOneLineAndExit2(@TempDir Path dir) throws IOException {
    Path deep = dir.resolve("deep.json");
    Files.writeString(deep, "[".repeat(10_000) + "]".repeat(10_000));
    assertRefused(deep, "deep.json: not valid JSON (nesting depth above 100 levels");
    String gemma = Files.readString(Path.of(HF + "gemma-2-9b.json"));
    Path negative = dir.resolve("negative.json");
    Files.writeString(negative, gemma.replace("\"head_dim\": 256", "\"head_dim\": -256"));
    assertRefused(negative, "negative.json: field 'head_dim' must be a positive integer up to "
        + "65536, got -256");
    Path kv = dir.resolve("kv.json");
    Files.writeString(kv, gemma.replace("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 6"));
    assertRefused(kv, "kv.json: attention heads 16 must be a multiple of key/value heads 6");
    Path big = dir.resolve("big.json");
    try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
      f.setLength(100L << 20);
    }
    assertRefused(big, "big.json: larger than 1048576 bytes");
    Path bert = dir.resolve("bert.json");
    Files.writeString(bert, gemma.replace("\"gemma2\"", "\"bert\""));
    assertRefused(bert, "bert.json: model_type 'bert' is not supported; supported: "
        + String.join(", ", io.meshplan.model.HfConfigReader.SUPPORTED));
  }

  /**
   * Megatron-LM export writes Qwen3's head size and per-head q/k norms ({@code --kv-channels},
   * {@code --qk-layernorm}) but not OLMo 2's norms over all heads: export exits 3 with no nearest
   * configuration; shard's LLaMA graph refuses Gemma 2 in one line.
   */
  @Test
  void exportAndShardRefuseWhatTheyCannotBuild() {
    CliRun qwen = CliRun.of("export", "--to", "megatron", "--model", HF + "qwen3-8b.json",
        "--cluster", "1x8:h100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--global-batch", "64",
        "--micro-batch", "1");
    assertThat(qwen.code()).as(qwen.err()).isZero();
    assertThat(qwen.out()).contains("\n  --kv-channels 128\n  --qk-layernorm\n");
    CliRun export = CliRun.of("export", "--to", "megatron", "--model",
        HF + "olmo-2-1124-7b.json", "--cluster", "1x8:h100-80gb", "--tp", "8", "--pp", "1", "--dp",
        "1", "--global-batch", "64", "--micro-batch", "1");
    assertThat(export.code()).as(export.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(export.err()).contains("megatron cannot express this configuration: Megatron-LM's"
        + " --qk-layernorm norms each head; olmo-2-1124-7b has q/k norms over all heads together"
        + " (OLMo 2)");
    assertThat(export.out()).contains("no configuration megatron can express is near it");
    CliRun shard = CliRun.of("shard", "--model", HF + "gemma-2-9b.json", "--layers", "1",
        "--mesh", "2x2", "--alpha", "1,1", "--beta", "1,0.01", "--memory", "1000MB");
    assertThat(shard.code()).isEqualTo(2);
    // The model as --model named it.
    assertThat(shard.err().strip()).isEqualTo("meshplan: error: --model " + HF
        + "gemma-2-9b.json: shard builds"
        + " LLaMA's forward graph, and this model has a GeGLU MLP, head_dim 256, 4 norms per "
        + "block, logit soft-capping; it is planned by meshplan plan");
  }

  private static void assertRefused(Path config, String message) {
    CliRun r = CliRun.of("plan", "--model", config.toString(), "--cluster", "1x8:h100-80gb");
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.err()).startsWith("meshplan: error: ").contains(message).doesNotContain("\tat ");
    assertThat(r.err().strip().lines()).hasSize(1);
    assertThat(r.out()).isEmpty();
  }
}
