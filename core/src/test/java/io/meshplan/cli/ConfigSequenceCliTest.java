package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.model.HfConfigReader;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A config.json and the preset of the same model plan the same workload: the config's default
 * sequence is the one the model was pre-trained on ({@code HfSequence}), not a silent 4,096.
 */
class ConfigSequenceCliTest {
  private static final String HF = "core/src/test/resources/hf/";

  private static JsonNode planJson(String model) throws Exception {
    CliRun r = CliRun.of("plan", "--model", model, "--cluster", "2x8:h100-80gb",
        "--global-batch", "64", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    ObjectNode plan = (ObjectNode) new ObjectMapper().readTree(r.out());
    ((ObjectNode) plan.get("model")).remove("name");
    return plan;
  }

  /** LLaMA-3-8B's config.json plans exactly what --model llama3-8b plans, at 8,192 tokens. */
  @Test
  void llama3ConfigPlansThePresetsWorkload() throws Exception {
    JsonNode config = planJson(HF + "meta-llama-3-8b.json");
    assertThat(config.get("model").get("seq").asInt()).isEqualTo(8192);
    assertThat(config).isEqualTo(planJson("llama3-8b"));
    // Its own context, 8192 positions: nothing was cut, so no note.
    CliRun r = CliRun.of("simulate", "--model", HF + "meta-llama-3-8b.json", "--layers", "1",
        "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch",
        "1", "--global-batch", "8");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err()).isEmpty();
  }

  /**
   * Each config whose preset's sequence comes from the same pre-training report plans the
   * preset's sequence; the exceptions are pinned with why.
   */
  @Test
  void eachConfigAgainstItsPreset() {
    Map<String, String> same = Map.of("meta-llama-3-8b.json", "llama3-8b",
        "meta-llama-3.1-405b.json", "llama3.1-405b", "mistral-7b-v0.1.json", "mistral-7b",
        "deepseek-v3.json", "deepseek-v3", "gpt-oss-120b.json", "gpt-oss-120b",
        "gpt-oss-20b.json", "gpt-oss-20b");
    same.forEach((file, preset) -> assertThat(HfConfigReader.read(Path.of(HF + file)).seq())
        .as(file).isEqualTo(Presets.get(preset).seq()));
    // Mixtral pre-trained at 32K (its preset), capped here at 8192; Qwen3's preset takes its
    // first stage's 4,096, the config's 40,960 positions are capped at 8,192; the LLaMA 2
    // presets plan the Alpa document's 1,024, the config its 4,096 positions.
    Map<String, int[]> differ = Map.of("mixtral-8x7b-v0.1.json", new int[] {8192, 32768},
        "mixtral-8x22b-v0.1.json", new int[] {8192, 32768},
        "qwen3-235b-a22b.json", new int[] {8192, 4096},
        "qwen3-30b-a3b.json", new int[] {8192, 4096},
        "llama-2-7b-hf.json", new int[] {4096, 1024});
    Map<String, String> presetOf = Map.of("mixtral-8x7b-v0.1.json", "mixtral-8x7b",
        "mixtral-8x22b-v0.1.json", "mixtral-8x22b", "qwen3-235b-a22b.json", "qwen3-235b-a22b",
        "qwen3-30b-a3b.json", "qwen3-30b-a3b", "llama-2-7b-hf.json", "llama2-7b");
    differ.forEach((file, seqs) -> {
      ModelSpec m = HfConfigReader.read(Path.of(HF + file));
      assertThat(m.seq()).as(file).isEqualTo(seqs[0]);
      assertThat(Presets.get(presetOf.get(file)).seq()).as(file).isEqualTo(seqs[1]);
    });
  }

  /** A shorter default than the config's positions is said in one note, unless --seq is given. */
  @Test
  void aCutIsSaidInOneNoteUnlessSeqIsGiven() {
    String[] sim = {"--layers", "1", "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1",
        "--dp", "8", "--micro-batch", "1", "--global-batch", "8"};
    for (String command : new String[] {"simulate", "export"}) {
      java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(command));
      if (command.equals("export")) {
        args.addAll(java.util.List.of("--to", "megatron"));
      }
      args.addAll(java.util.List.of("--model", HF + "qwen3-8b.json"));
      args.addAll(java.util.List.of(sim));
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertThat(r.code()).as(r.err()).isZero();
      assertThat(r.err()).isEqualTo("meshplan: note: " + HF + "qwen3-8b.json: planning"
          + " sequences of 8192 tokens (max_position_embeddings 40960, capped at 8192, the"
          + " longest pre-training sequence meshplan takes by default); give --seq for another"
          + " length\n");
      args.addAll(java.util.List.of("--seq", "2048"));
      CliRun given = CliRun.of(args.toArray(String[]::new));
      assertThat(given.code()).as(given.err()).isZero();
      assertThat(given.err()).isEmpty();
    }
  }
}
