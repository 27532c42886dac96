package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Reading Hugging Face config.json files (fixtures written from the published configs). */
class HfConfigReaderTest {
  private static Path fixture(String name) {
    return Path.of("core/src/test/resources/hf", name);
  }

  /**
   * Parameter counts of the real configs. Llama-2-7b: 6,738,415,616 (HF "6.74B"); Llama 3.1
   * 405B: 126 * 3,187,703,808 + 2 * 128256 * 16384 + 16384 = 405,853,388,800; Mistral 7B:
   * 7,241,732,096 (HF "7.24B"); GPT-NeoX-20B: 44 * (12h^2 + 13h) + 2 * 50432 * 6144 + 2h with
   * h = 6144 = 20,554,567,680 (Black et al. 2022 report 20,554,567,680); OPT-1.3b:
   * 24 * (12h^2 + 13h) + 50272h + 2050h + 2h with h = 2048 = 1,315,758,080.
   */
  @ParameterizedTest
  @CsvSource({"llama-2-7b-hf.json, 6738415616, LLAMA", "meta-llama-3.1-405b.json, 405853388800,"
      + " LLAMA", "mistral-7b-v0.1.json, 7241732096, LLAMA",
      "gpt-neox-20b.json, 20554567680, GPT", "opt-1.3b.json, 1315758080, GPT"})
  void parameterCounts(String file, long params, ModelSpec.Family family) {
    ModelSpec s = HfConfigReader.read(fixture(file));
    assertThat(s.parameterCount()).isEqualTo(params);
    assertThat(s.family()).isEqualTo(family);
  }

  @Test
  void fieldsOfLlama405b() {
    ModelSpec s = HfConfigReader.read(fixture("meta-llama-3.1-405b.json"));
    assertThat(s.kvHeads()).isEqualTo(8);
    assertThat(s.heads()).isEqualTo(128);
    assertThat(s.seq()).isEqualTo(HfConfigReader.DEFAULT_SEQ_CAP);
    assertThat(s.dtype()).isEqualTo(DType.BF16);
    // The block is LLaMA's; its numbers are the config's, the preset's of the same model.
    assertThat(s.arch()).isEqualTo(Architecture.llama().withNumerics(
        Presets.get("llama3.1-405b").arch().numerics()));
    assertThat(s.name()).isEqualTo("meta-llama-3.1-405b");
    assertThat(s.parameterCount()).isEqualTo(Presets.get("llama3.1-405b").parameterCount());
    ModelSpec opt = HfConfigReader.read(fixture("opt-1.3b.json"));
    assertThat(opt.name()).isEqualTo("facebook/opt-1.3b");
    assertThat(opt.arch().positionRows()).isEqualTo(2050);
    assertThat(opt.arch().tiedEmbeddings()).isTrue();
    assertThat(opt.dtype()).isEqualTo(DType.F16);
    assertThat(opt.parameterCount()).isEqualTo(Presets.get("opt-1.3b").parameterCount());
  }

  @Test
  void kvHeadsDefaultToHeads() {
    ModelSpec s = HfConfigReader.parse("{\"model_type\":\"llama\",\"hidden_size\":64,"
        + "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"intermediate_size\":128,"
        + "\"vocab_size\":100,\"max_position_embeddings\":256}", "c.json", "tiny");
    assertThat(s.kvHeads()).isEqualTo(4);
    assertThat(s.name()).isEqualTo("tiny");
    assertThat(s.seq()).isEqualTo(256);
  }

  @Test
  void opt350mIsRefusedClearly() {
    assertThatThrownBy(() -> HfConfigReader.read(fixture("opt-350m.json")))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("opt-350m.json")
        .hasMessageContaining("word_embed_proj_dim 512 differs from hidden_size 1024");
  }

  @Test
  void missingAndMistypedFieldsAreNamed() {
    String base = "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,"
        + "\"num_attention_heads\":4,\"vocab_size\":100,\"max_position_embeddings\":256";
    assertThatThrownBy(() -> HfConfigReader.parse(base + "}", "x/config.json", "x"))
        .isInstanceOf(InputException.class)
        .hasMessage("x/config.json: missing field 'intermediate_size'");
    assertThatThrownBy(() -> HfConfigReader.parse(base + ",\"intermediate_size\":\"big\"}",
        "x/config.json", "x"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("field 'intermediate_size' must be a positive integer");
    assertThatThrownBy(() -> HfConfigReader.parse(base + ",\"intermediate_size\":1.5}",
        "x/config.json", "x")).hasMessageContaining("'intermediate_size'");
    assertThatThrownBy(() -> HfConfigReader.parse(base + ",\"intermediate_size\":128,"
        + "\"tie_word_embeddings\":\"no\"}", "x/config.json", "x"))
        .hasMessageContaining("'tie_word_embeddings' must be true or false");
    assertThatThrownBy(() -> HfConfigReader.parse(base.replace("\"hidden_size\":64",
        "\"hidden_size\":66") + ",\"intermediate_size\":128}", "x/config.json", "x"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("x/config.json: hidden size 66 must be a multiple of attention heads 4");
    // A rotary base past 10^12 was written to Megatron's --rotary-base saturated at 2^63 - 1,
    // and 4.9e-324 to torchtitan's rope.theta.
    for (String theta : new String[] {"1e19", "4.9e-324", "0.5", "1e308"}) {
      assertThatThrownBy(() -> HfConfigReader.parse(base + ",\"intermediate_size\":128,"
          + "\"rope_theta\":" + theta + "}", "x/config.json", "x")).as(theta)
          .isInstanceOf(InputException.class)
          .hasMessageContaining("x/config.json: the rotary base must be a number from 1 to 10^12");
    }
    // A Llama's MLP is SwiGLU: hidden_act gelu, relu or a made-up name was priced and exported
    // as SwiGLU (--swiglu).
    for (String act : new String[] {"gelu", "relu", "bogus"}) {
      assertThatThrownBy(() -> HfConfigReader.parse(base + ",\"intermediate_size\":128,"
          + "\"hidden_act\":\"" + act + "\"}", "x/config.json", "x")).as(act)
          .isInstanceOf(InputException.class)
          .hasMessage("x/config.json: field 'hidden_act' is '" + act + "', but meshplan builds a "
              + "llama model's MLP with SiLU (SwiGLU), as Transformers' code for it does; another "
              + "activation is not supported");
    }
    assertThat(HfConfigReader.parse(base + ",\"intermediate_size\":128,\"hidden_act\":\"silu\"}",
        "x/config.json", "x").arch().mlp()).isEqualTo(Architecture.Mlp.SWIGLU);
    assertThatThrownBy(() -> HfConfigReader.parse("{\"hidden_size\":1}", "y.json", "y"))
        .hasMessage("y.json: missing field 'model_type'");
    assertThatThrownBy(() -> HfConfigReader.parse("[1]", "y.json", "y"))
        .hasMessage("y.json: a config.json is a JSON object");
    assertThatThrownBy(() -> HfConfigReader.parse("{", "y.json", "y"))
        .isInstanceOf(InputException.class).hasMessageStartingWith("y.json: not valid JSON");
  }

  @Test
  void unknownModelTypeNamesTheSupportedOnes() {
    assertThatThrownBy(() -> HfConfigReader.parse("{\"model_type\":\"bert\",\"hidden_size\":64,"
        + "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,"
        + "\"max_position_embeddings\":256}", "b.json", "b"))
        .isInstanceOf(InputException.class)
        .hasMessage("b.json: model_type 'bert' is not supported; supported: "
            + String.join(", ", HfConfigReader.SUPPORTED));
  }

  @Test
  void aConfigJsonIsNamedAfterItsFolder(@TempDir Path dir) throws IOException {
    Path folder = Files.createDirectory(dir.resolve("Mistral-7B-v0.1"));
    Path config = folder.resolve("config.json");
    Files.copy(fixture("mistral-7b-v0.1.json"), config);
    assertThat(HfConfigReader.read(config).name()).isEqualTo("Mistral-7B-v0.1");
  }

  @Test
  void oversizedAndNonRegularFilesAreRefused(@TempDir Path dir) throws IOException {
    Path big = dir.resolve("config.json");
    Files.writeString(big, "{\"pad\":\"" + "x".repeat(HfConfigReader.MAX_BYTES) + "\"}");
    assertThatThrownBy(() -> HfConfigReader.read(big))
        .isInstanceOf(InputException.class).hasMessageContaining("larger than 1048576 bytes");
    // A directory is read through its config.json: here the oversized one, and none in an empty
    // directory.
    assertThatThrownBy(() -> HfConfigReader.read(dir))
        .isInstanceOf(InputException.class).hasMessageContaining("larger than 1048576 bytes");
    Path empty = Files.createDirectory(dir.resolve("empty"));
    assertThatThrownBy(() -> HfConfigReader.read(empty)).isInstanceOf(InputException.class)
        .hasMessageContaining("empty/config.json: no such file (the Hugging Face config.json of "
            + "directory");
    assertThatThrownBy(() -> HfConfigReader.read(dir.resolve("absent.json")))
        .isInstanceOf(InputException.class).hasMessageContaining("absent.json: no such file");
  }

  /**
   * The hybrid families' fields that change the model are read or refused, as the other
   * families' are: an activation (Jamba's and Qwen3-Next's hidden_act, Nemotron-H's
   * mamba_hidden_act), a sliding window where meshplan prices whole-sequence attention, and a
   * topk_group that no n_group allows. Each was accepted with the output of the unchanged config.
   */
  @Test
  void hybridFieldsThatChangeTheModelAreRefused() throws IOException {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    String[][] cases = {
        {"jamba-v0.1.json", "", "hidden_act", "\"gelu\"", "field 'hidden_act' is 'gelu', but "
            + "meshplan builds a jamba model's MLP with SiLU (SwiGLU)"},
        {"jamba-v0.1.json", "", "sliding_window", "256", "field 'sliding_window' is 256, but "
            + "meshplan prices a jamba model's attention layers over the whole sequence"},
        {"qwen3-next-80b-a3b.json", "", "hidden_act", "\"gelu\"", "field 'hidden_act' is "
            + "'gelu', but meshplan builds a qwen3_next model's MLP with SiLU (SwiGLU)"},
        {"nemotron-3-nano-30b-a3b.json", "", "mamba_hidden_act", "\"nonsense\"", "field "
            + "'mamba_hidden_act' is 'nonsense', but meshplan builds a nemotron_h model's Mamba "
            + "mixer with SiLU,"},
        {"nemotron-3-nano-30b-a3b.json", "", "sliding_window", "256", "field 'sliding_window' "
            + "is 256"},
        {"nemotron-3-nano-30b-a3b.json", "", "topk_group", "\"8\"", "field 'topk_group' must "
            + "be a positive integer"},
        {"kimi-k2.5.json", "text_config", "topk_group", "2", "n_group 1 and topk_group 2 do not "
            + "route 8 of 384 experts"},
        // And the fields other families read already: Qwen3-Next's rope scaling, DeepSeek's
        // router names, Gemma's local rotary base and query scale.
        {"qwen3-next-80b-a3b.json", "", "rope_scaling", "{\"rope_type\":\"bogus\"}", "field "
            + "'rope_scaling' is {\"rope_type\":\"bogus\"}; meshplan reads Qwen3-Next with plain RoPE"},
        {"kimi-k2.5.json", "text_config", "topk_method", "\"bogus\"", "field 'topk_method' is "
            + "\"bogus\"; meshplan reads noaux_tc, group_limited_greedy, greedy"},
        {"deepseek-v3.json", "", "scoring_func", "5", "field 'scoring_func' is 5; meshplan reads "
            + "sigmoid, softmax"},
        {"gemma-3-4b-pt.json", "text_config", "rope_local_base_freq", "\"x\"", "field "
            + "'rope_local_base_freq' must be a number not below 0"},
        {"gemma-3-4b-pt.json", "text_config", "rope_local_base_freq", "0.5", "field "
            + "'rope_local_base_freq' must be a number from 1 to 10^12"},
        {"gemma-2-9b.json", "", "query_pre_attn_scalar", "0", "field 'query_pre_attn_scalar' "
            + "must be a positive number"},
        // A gemma3 config's text model is Gemma 3's: a llama text_config was read as Gemma 3.
        {"gemma-3-4b-pt.json", "text_config", "model_type", "\"llama\"", "text_config: "
            + "model_type 'llama' is not the gemma3_text text model a gemma3 config holds"},
        {"gemma-3-4b-pt.json", "text_config", "attn_logit_softcapping", "\"x\"", "field "
            + "'attn_logit_softcapping' must be a positive number or null"}};
    for (String[] c : cases) {
      com.fasterxml.jackson.databind.node.ObjectNode root = fixture(json, c[0]);
      com.fasterxml.jackson.databind.node.ObjectNode at = c[1].isEmpty() ? root
          : (com.fasterxml.jackson.databind.node.ObjectNode) root.get(c[1]);
      at.set(c[2], json.readTree(c[3]));
      assertThatThrownBy(() -> HfConfigReader.parse(json.writeValueAsString(root),
          "x/config.json", "x")).as(c[0] + " " + c[2]).isInstanceOf(InputException.class)
          .hasMessageContaining("x/config.json: " + c[4]);
      // The released config itself reads.
      HfConfigReader.read(Path.of("core/src/test/resources/hf", c[0]));
    }
  }

  /**
   * OLMoE's head_dim is read, as its attention reads it, and no warning says it is ignored:
   * 64 gives 6,784,911,360 parameters against the released 6,919,161,856 (the warning said
   * "ignored" while the count changed).
   */
  @Test
  void olmoeHeadDimIsReadWithoutAWarningThatItIsIgnored() throws IOException {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.node.ObjectNode root = fixture(json, "olmoe-1b-7b-0924.json");
    assertThat(HfConfigReader.parseConfig(json.writeValueAsString(root), "o.json", "o").spec()
        .parameterCount()).isEqualTo(6_919_161_856L);
    root.put("head_dim", 64);
    HfConfigReader.HfConfig c = HfConfigReader.parseConfig(json.writeValueAsString(root),
        "o.json", "o");
    assertThat(c.warnings()).noneMatch(w -> w.contains("head_dim"));
    assertThat(c.spec().parameterCount()).isEqualTo(6_784_911_360L);
  }

  /**
   * Gemma 3's logit caps are read where its config gives them (null as released), as Gemma 2's
   * are; a cap of 50 was ignored.
   */
  @Test
  void gemma3LogitCapsAreRead() throws IOException {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.node.ObjectNode root = fixture(json, "gemma-3-4b-pt.json");
    ModelSpec released = HfConfigReader.parse(json.writeValueAsString(root), "g.json", "g");
    assertThat(released.arch().attn().attentionSoftcap()).isZero();
    ((com.fasterxml.jackson.databind.node.ObjectNode) root.get("text_config"))
        .put("attn_logit_softcapping", 50.0);
    ModelSpec capped = HfConfigReader.parse(json.writeValueAsString(root), "g.json", "g");
    assertThat(capped.arch().attn().attentionSoftcap()).isEqualTo(50.0);
  }

  /** A shipped config.json, as a tree to edit. */
  private static com.fasterxml.jackson.databind.node.ObjectNode fixture(
      com.fasterxml.jackson.databind.ObjectMapper json, String name) throws IOException {
    return (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(
        Path.of("core/src/test/resources/hf", name).toFile());
  }
}
