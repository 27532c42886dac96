package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --model} takes a preset name or the path of a Hugging Face config.json. */
class ModelOptionsTest {
  private static final String[] MESH = {"--mesh", "2x2", "--alpha", "1,1", "--beta", "1,0.01",
      "--memory", "1000MB"};

  private static CliRun shard(String model, String... more) {
    String[] args = new String[2 + more.length + MESH.length + 1];
    args[0] = "shard";
    args[1] = "--model=" + model;
    System.arraycopy(more, 0, args, 2, more.length);
    System.arraycopy(MESH, 0, args, 2 + more.length, MESH.length);
    args[args.length - 1] = "--json";
    return CliRun.of(args);
  }

  @Test
  void configPathWorksLikeAPreset() throws IOException {
    String[] small = {"--layers", "1", "--seq", "32", "--batch", "2", "--hidden", "64",
        "--heads", "4", "--ffn", "128"};
    CliRun fromFile = shard("core/src/test/resources/hf/llama-2-7b-hf.json", small);
    CliRun fromPreset = shard("llama2-7b", small);
    assertThat(fromFile.code()).as(fromFile.err()).isZero();
    // Same dimensions; the config is fp16, the preset fp32, so pin the dtype of both.
    CliRun a = shard("core/src/test/resources/hf/llama-2-7b-hf.json", concat(small, "--dtype", "f32"));
    CliRun b = shard("llama2-7b", concat(small, "--dtype", "f32"));
    var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    var ja = mapper.readTree(a.out());
    var jb = mapper.readTree(b.out());
    assertThat(ja.get("instructions")).isEqualTo(jb.get("instructions"));
    assertThat(ja.get("objective")).isEqualTo(jb.get("objective"));
    assertThat(fromPreset.code()).isZero();
  }

  private static String[] concat(String[] a, String... b) {
    String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }

  @Test
  void badConfigsExitTwoWithOneLine(@TempDir Path dir) throws IOException {
    CliRun missing = shard(dir.resolve("absent.json").toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("absent.json: no such file").doesNotContain("\tat ");
    CliRun opt350 = shard("core/src/test/resources/hf/opt-350m.json");
    assertThat(opt350.code()).isEqualTo(2);
    assertThat(opt350.err()).contains("word_embed_proj_dim 512 differs");
    Path bad = dir.resolve("config.json");
    Files.writeString(bad, "{\"model_type\": \"llama\", \"hidden_size\": \"4096\"}");
    CliRun typed = shard(bad.toString());
    assertThat(typed.code()).isEqualTo(2);
    assertThat(typed.err()).contains("config.json: field 'hidden_size' must be a positive integer");
    assertThat(typed.err().strip().lines()).hasSize(1);
  }

  @Test
  void unknownPresetListsTheNewOnes() {
    CliRun r = shard("llama9-1t");
    assertThat(r.code()).isEqualTo(2);
    // Shard's own presets only: not the GPT and OPT ones it refuses.
    assertThat(r.err()).contains("unknown model preset 'llama9-1t'").contains("llama3.1-405b")
        .contains("mistral-7b").contains("alpa-mlp").doesNotContain("gpt-1t")
        .doesNotContain("opt-175b");
  }

  @Test
  void gptFamilyIsRefusedByShardWithAReason() {
    CliRun r = shard("gpt-1.7b");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("GPT, OPT and GPT-NeoX models are planned by meshplan plan");
  }

  /**
   * A mixture-of-experts model's ffn is its expert size, so --ffn resizes every expert: Mixtral
   * 8x7B with --ffn 1024 has blocks of attention 41,943,040 + router 32,768 + experts 8 *
   * 3*4096*1024 = 100,663,296 + norms 8192 = 142,647,296 parameters. Without --ffn the preset's
   * 14336 stays.
   */
  @Test
  void ffnResizesTheExpertsOfAnMoeModel() {
    ModelOptions o = new ModelOptions();
    o.model = "mixtral-8x7b";
    o.ffn = 1024;
    io.meshplan.model.ModelSpec s = o.spec();
    assertThat(s.ffn()).isEqualTo(1024);
    assertThat(s.arch().moe().expertFfn()).isEqualTo(1024);
    assertThat(s.blockParameterCount()).isEqualTo(142_647_296L);
    ModelOptions plain = new ModelOptions();
    plain.model = "mixtral-8x7b";
    assertThat(plain.spec().arch().moe().expertFfn()).isEqualTo(14336);
    assertThat(plain.spec().blockParameterCount()).isEqualTo(1_451_270_144L);
  }
}
