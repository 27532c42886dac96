package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The Hugging Face families besides LLaMA, Mistral, GPT-NeoX and OPT, from their configs. */
class HfFamiliesTest {
  private static Path fixture(String name) {
    return Path.of("core/src/test/resources/hf", name);
  }

  /**
   * Exact counts, as sum(p.numel()) over each model with its LM head (tied weights once).
   *
   * <ul>
   *   <li>Qwen2.5-7B, h 3584, a 28, kv 4, d 128, f 18944, V 152064, 28 layers, untied: block =
   *       q 3584^2 + k,v 2*3584*512 + o 3584^2 + QKV bias 3584+2*512 + MLP 3*3584*18944 + 2
   *       norms 2*3584 = 233,057,792; 28 * that + 2 * 152064*3584 + 3584 = 7,615,616,512.
   *   <li>Qwen3-8B, h 4096, a 32, kv 8, d 128, f 12288, V 151936, 36 layers: block =
   *       2*4096^2 + 2*4096*1024 + q/k norm 2*128 + 3*4096*12288 + 2*4096 = 192,946,432;
   *       36 * that + 2 * 151936*4096 + 4096 = 8,190,735,360.
   *   <li>Gemma-2-9B, h 3584, a 16, kv 8, d 256, f 14336, V 256000, 42 layers, tied: block =
   *       2*3584*4096 + 2*3584*2048 + 3*3584*14336 + 4 norms 4*3584 = 198,195,200; 42 * that +
   *       256000*3584 + 3584 = 9,241,705,984.
   *   <li>Phi-3-mini-4k, h 3072, a = kv = 32, f 8192, V 32064, 32 layers (fused qkv_proj and
   *       gate_up_proj hold the same weights): block = 4*3072^2 + 3*3072*8192 + 2*3072 =
   *       113,252,352; 32 * that + 2 * 32064*3072 + 3072 = 3,821,079,552.
   *   <li>OLMo-2-1124-7B, h 4096, a = kv = 32, f 11008, V 100352, 32 layers: block = 4*4096^2 +
   *       q/k norms over all heads 4096+4096 + 3*4096*11008 + 2*4096 = 202,391,552; 32 * that +
   *       2 * 100352*4096 + 4096 = 7,298,617,344.
   *   <li>Granite-3.0-8B, h 4096, a 32, kv 8, f 12800, V 49155, 40 layers, tied: block =
   *       2*4096^2 + 2*4096*1024 + 3*4096*12800 + 2*4096 = 199,237,632; 40 * that +
   *       49155*4096 + 4096 = 8,170,848,256.
   *   <li>Gemma-3-4B's text model (text_config with the gemma3_text defaults a 8, kv 4, d 256,
   *       V 262208), h 2560, f 10240, 34 layers, tied: block = 2*2560*2048 + 2*2560*1024 +
   *       q/k norm 2*256 + 3*2560*10240 + 4*2560 = 94,382,592; 34 * that + 262208*2560 + 2560
   *       = 3,880,263,168.
   *   <li>StarCoder2-3B, h 3072, a 24, kv 2, d 128, f 12288, V 49152, 30 layers, LayerNorm,
   *       biases, tied: block = 2*3072^2 + 2*3072*256 + biases 3072+512+3072 + 2*3072*12288 +
   *       12288+3072 + 2 LayerNorms 4*3072 = 95,979,008; 30 * that + 49152*3072 + 2*3072 =
   *       3,030,371,328.
   * </ul>
   */
  @ParameterizedTest
  @CsvSource({"qwen2.5-7b.json, 7615616512", "qwen3-8b.json, 8190735360",
      "gemma-2-9b.json, 9241705984", "phi-3-mini-4k-instruct.json, 3821079552",
      "olmo-2-1124-7b.json, 7298617344", "granite-3.0-8b-base.json, 8170848256",
      "gemma-3-4b-pt.json, 3880263168", "starcoder2-3b.json, 3030371328"})
  void exactParameterCounts(String file, long params) {
    assertThat(HfConfigReader.read(fixture(file)).parameterCount()).isEqualTo(params);
  }

  /** The published configs carry only fields their family's list knows: no warning. */
  @ParameterizedTest
  @ValueSource(strings = {"qwen2.5-7b.json", "qwen3-8b.json", "gemma-2-9b.json",
      "phi-3-mini-4k-instruct.json", "olmo-2-1124-7b.json", "granite-3.0-8b-base.json",
      "starcoder2-3b.json"})
  void publishedConfigsGiveNoWarning(String file) {
    assertThat(HfConfigReader.readConfig(fixture(file)).warnings()).isEmpty();
  }

  /**
   * A head size other than hidden / heads is read wherever transformers reads it. Mistral-Nemo
   * (hidden 5120, 32 heads of 128, 8 key/value heads, ffn 14336, vocabulary 131072, untied):
   * attention 5120*4096 + 2*5120*1024 + 4096*5120 = 52,428,800, MLP 3*5120*14336 = 220,200,960,
   * norms 10,240: 272,640,000 a layer, * 40 = 10,905,600,000, + 2*131072*5120 + 5120 =
   * 12,247,782,400 (the published 12.2B); with the head derived (160) it read 12,772,070,400. An
   * odd head cannot rotate in pairs, and the biases LlamaConfig can switch on are refused.
   */
  @Test
  void aHeadSizeOtherThanHiddenOverHeadsIsRead() {
    String nemo = "{\"model_type\":\"%s\",\"hidden_size\":5120,\"num_hidden_layers\":40,"
        + "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"head_dim\":128,"
        + "\"intermediate_size\":14336,\"vocab_size\":131072,\"tie_word_embeddings\":false,"
        + "\"max_position_embeddings\":1024000%s}";
    for (String type : java.util.List.of("mistral", "llama", "qwen2", "phi3", "olmo2",
        "granite")) {
      ModelSpec m = HfConfigReader.parse(String.format(nemo, type, ""), "n.json", "n");
      // Qwen2's q, k and v biases and OLMo 2's q and k norms are 4096 + 1024 (+ 1024) a layer.
      long own = type.equals("qwen2") ? 40L * (4096 + 2 * 1024)
          : type.equals("olmo2") ? 40L * (4096 + 1024) : 0;
      assertThat(m.parameterCount() - own).as(type).isEqualTo(12_247_782_400L);
      assertThat(m.headDim()).as(type).isEqualTo(128);
    }
    for (String bad : java.util.List.of("63", "0", "-64")) {
      assertThatThrownBy(() -> HfConfigReader.parse(String.format(nemo, "mistral", "")
          .replace("\"head_dim\":128", "\"head_dim\":" + bad), "n.json", "n"))
          .isInstanceOf(InputException.class).hasMessageStartingWith("n.json: field 'head_dim'");
    }
    for (String bias : java.util.List.of("attention_bias", "mlp_bias")) {
      assertThatThrownBy(() -> HfConfigReader.parse(String.format(nemo, "llama",
          ",\"" + bias + "\":true"), "n.json", "n")).isInstanceOf(InputException.class)
          .hasMessageStartingWith("n.json: field '" + bias + "' true is not supported");
    }
  }

  /**
   * rope_scaling is an object of a form transformers defines, or null; an activation is a name.
   * What transformers would refuse on loading is refused, not read as no scaling.
   */
  @Test
  void ropeScalingAndActivationsAreWhatTransformersReads() {
    String base = "{\"model_type\":\"llama\",\"hidden_size\":2048,\"num_hidden_layers\":2,"
        + "\"num_attention_heads\":32,\"intermediate_size\":8192,\"vocab_size\":1000,"
        + "\"max_position_embeddings\":4096%s}";
    java.util.Map<String, String> bad = java.util.Map.of(
        ",\"rope_scaling\":\"llama3\"", "field 'rope_scaling' must be an object (or null)",
        ",\"rope_scaling\":[1,2]", "field 'rope_scaling' must be an object (or null)",
        ",\"rope_scaling\":4.0", "field 'rope_scaling' must be an object (or null)",
        ",\"rope_scaling\":{\"rope_type\":\"weird\",\"factor\":2}",
        "rope_type 'weird' is none transformers defines",
        ",\"rope_scaling\":{\"type\":\"dynamic\",\"factor\":\"NaN\"}", "factor",
        ",\"hidden_act\":5", "field 'hidden_act' must be an activation's name");
    bad.forEach((extra, message) -> assertThatThrownBy(() -> HfConfigReader.parse(
        String.format(base, extra), "r.json", "r")).as(extra)
        .isInstanceOf(InputException.class).hasMessageStartingWith("r.json: ")
        .hasMessageContaining(message));
    for (String ok : java.util.List.of("", ",\"rope_scaling\":null", ",\"rope_scaling\":{}",
        ",\"rope_scaling\":{\"type\":\"dynamic\",\"factor\":2.0}",
        ",\"hidden_act\":\"silu\"")) {
      assertThat(HfConfigReader.parse(String.format(base, ok), "r.json", "r").layers()).as(ok)
          .isEqualTo(2);
    }
  }

  /** A field outside a family's list is named; one on the neutral list or the family's is not. */
  @Test
  void unknownFieldsAreNamed() throws IOException {
    String qwen = Files.readString(fixture("qwen3-8b.json"));
    // rope_scaling (null in the file) is replaced, not given twice: a key twice is refused.
    String extra = qwen.replace("\"rope_scaling\": null,", "\"rope_scaling\": {\"factor\": 4.0},")
        .replaceFirst("\\{", "{\"attention_variant\": \"linear\", "
        + "\"quantization_config\": {\"bits\": 4}, ");
    HfConfigReader.HfConfig c = HfConfigReader.parseConfig(extra, "q.json", "q");
    assertThat(c.warnings()).containsExactly(
        "q.json: field 'attention_variant' is not one meshplan knows for model_type qwen3; it is "
            + "ignored, and may change the model's cost",
        "q.json: field 'quantization_config' is not one meshplan knows for model_type qwen3; it "
            + "is ignored, and may change the model's cost");
    // head_dim belongs to Qwen3's list and to Qwen2's (Qwen2Attention reads it when given).
    assertThat(HfFamilies.KNOWN.get("qwen3")).contains("head_dim");
    assertThat(HfFamilies.KNOWN.get("qwen2")).contains("head_dim");
    assertThat(HfFamilies.NEUTRAL).contains("rope_scaling").doesNotContain("quantization_config");
    // Every family HfConfigReader reads beyond the four older ones keeps a list.
    // (gemma3, llama4 and kimi_k25 are read as their text_config's gemma3_text, llama4_text and
    // kimi_k2.)
    assertThat(HfFamilies.KNOWN.keySet()).containsAll(java.util.List.of("qwen2", "qwen3",
        "gemma2", "gemma3_text", "phi3", "olmo2", "granite", "starcoder2", "mixtral",
        "qwen3_moe", "gpt_oss", "deepseek_v3"));
    assertThat(HfFamilies.KNOWN.keySet()).containsExactlyInAnyOrderElementsOf(
        HfConfigReader.SUPPORTED.stream().filter(t -> !java.util.Set.of("llama", "mistral",
            "gpt_neox", "opt", "gemma3", "llama4", "kimi_k25").contains(t)).toList());
  }

  @Test
  void gemma3ReadsItsTextConfigAndWarnsOfTheVisionTower() {
    HfConfigReader.HfConfig c = HfConfigReader.readConfig(fixture("gemma-3-4b-pt.json"));
    ModelSpec s = c.spec();
    assertThat(s.layers()).isEqualTo(34);
    assertThat(s.headDim()).isEqualTo(256);
    assertThat(s.arch().mlp()).isEqualTo(Architecture.Mlp.GEGLU);
    // Gemma 3: the sixth layer of every six attends globally, the window is 1024.
    AttentionShape a = s.arch().attn();
    assertThat(a.window()).isEqualTo(1024);
    assertThat(a.windowed(4)).isTrue();
    assertThat(a.windowed(5)).isFalse();
    assertThat(a.windowed(11)).isFalse();
    assertThat(c.warnings()).singleElement().asString().contains("vision tower");
  }

  @Test
  void featuresOfEachFamily() {
    ModelSpec qwen2 = HfConfigReader.read(fixture("qwen2.5-7b.json"));
    assertThat(qwen2.arch().attn().qkvBias()).isTrue();
    assertThat(qwen2.arch().attn().window()).isZero();
    ModelSpec gemma = HfConfigReader.read(fixture("gemma-2-9b.json"));
    assertThat(gemma.arch().attn().attentionSoftcap()).isEqualTo(50.0);
    assertThat(gemma.arch().attn().finalSoftcap()).isEqualTo(30.0);
    assertThat(gemma.arch().attn().blockNorms()).isEqualTo(4);
    assertThat(gemma.arch().tiedEmbeddings()).isTrue();
    // 16 heads of 256 are 4096 wide, more than hidden 3584.
    assertThat(gemma.headDim() * gemma.heads()).isEqualTo(4096);
    ModelSpec phi = HfConfigReader.read(fixture("phi-3-mini-4k-instruct.json"));
    assertThat(phi.arch().attn().window()).isEqualTo(2047);
    assertThat(phi.arch().attn().windowed(0)).isTrue();
    assertThat(HfConfigReader.read(fixture("olmo-2-1124-7b.json")).arch().attn().qkNorm())
        .isEqualTo(AttentionShape.QkNorm.WHOLE);
    assertThat(HfConfigReader.read(fixture("qwen3-8b.json")).arch().attn().qkNorm())
        .isEqualTo(AttentionShape.QkNorm.PER_HEAD);
    ModelSpec star = HfConfigReader.read(fixture("starcoder2-3b.json"));
    assertThat(star.arch().norm()).isEqualTo(Architecture.Norm.LAYER);
    assertThat(star.arch().biases()).isTrue();
    // Mistral 7B windows every layer at 4096.
    assertThat(HfConfigReader.read(fixture("mistral-7b-v0.1.json")).arch().attn().window())
        .isEqualTo(4096);
  }

  /**
   * At s = 8192 a Gemma-2-9B local layer (window 4096) has 3/4 of a global layer's causal
   * score FLOPs: global s^2/2 = 33,554,432 pairs; local w^2/2 + (s - w) w = 8,388,608 +
   * 16,777,216 = 25,165,824 pairs; 25,165,824 / 33,554,432 = 0.75. Layer 0 is local, layer 1
   * global; each pair costs 2 a d = 2 * 16 * 256 = 8192 FLOPs.
   */
  @Test
  void gemma2LocalLayerHasThreeQuartersOfTheScoreFlops() {
    ModelSpec gemma = HfConfigReader.read(fixture("gemma-2-9b.json"));
    double local = ModelFlops.causalScoreFlops(gemma, 0, 8192);
    double global = ModelFlops.causalScoreFlops(gemma, 1, 8192);
    assertThat(global).isEqualTo(8192.0 * 33_554_432);
    assertThat(local / global).isEqualTo(0.75);
    // The training count follows: 21 local layers save a quarter of their attention term,
    // 21 * 0.25 * 4 s a d = 21 * 0.25 * 4 * 8192 * 4096 per token, forward; three times that.
    ModelSpec plain = gemma.withLayers(gemma.layers());
    double saved = 3 * 21 * 0.25 * 4 * 8192.0 * 4096;
    double full = 3 * (gemma.layers() * ModelFlops.blockForwardFlopsPerToken(plain, 8192)
        + 2.0 * gemma.vocab() * gemma.hidden());
    assertThat(ModelFlops.trainingFlopsPerToken(gemma, 8192)).isEqualTo(full - saved);
  }

  /**
   * The training graph prices the window: a Gemma-2-9B block's fused attention at s = 8192
   * computes the mean of its 21 local layers (0.75 of the causal pairs) and 21 global ones,
   * (0.75 + 1) / 2 = 0.875 of the unwindowed kernel's FLOPs; GPT-OSS-120B's 128-token window on 18
   * of 36 layers at s = 4096 keeps (128^2/2 + 3968 x 128) / (4096^2/2) = 516,096 / 8,388,608 of
   * the pairs there, a mean of (1 + 0.061523...) / 2.
   */
  @Test
  void fusedAttentionFlopsFollowTheWindowsOfTheLayers() {
    ModelSpec gemma = HfConfigReader.read(fixture("gemma-2-9b.json")).withSequence(8192);
    assertThat(attentionFlops(gemma) / attentionFlops(noWindow(gemma)))
        .isCloseTo(0.875, org.assertj.core.api.Assertions.within(1e-12));
    ModelSpec oss = Presets.get("gpt-oss-120b").withSequence(4096);
    assertThat(attentionFlops(oss) / attentionFlops(noWindow(oss)))
        .isCloseTo((1 + 516_096.0 / 8_388_608) / 2, org.assertj.core.api.Assertions.within(1e-12));
  }

  private static ModelSpec noWindow(ModelSpec m) {
    AttentionShape a = m.arch().attn();
    AttentionShape plain = new AttentionShape(a.headDim(), a.qkvBias(), a.qkNorm(),
        a.blockNorms(), a.attentionSoftcap(), a.finalSoftcap(), 0, 0, 0, a.sinks());
    Architecture r = m.arch();
    return new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(), new Architecture(r.mlp(), r.norm(),
        r.positions(), r.positionRows(), r.biases(), r.tiedEmbeddings(), plain, r.moe()));
  }

  private static double attentionFlops(ModelSpec m) {
    io.meshplan.graph.Graph g = TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, 1,
        m.seq()).withAttention(Attention.FLASH)).graph();
    double f = 0;
    for (io.meshplan.graph.Instruction ins : g.instructions()) {
      if (ins.opcode().kind() == io.meshplan.graph.OpKind.FUSED_ATTENTION) {
        f += io.meshplan.graph.OpCost.flops(g, ins);
      }
    }
    return f;
  }

  @Test
  void qwenLayerTypesAndMaxWindowLayers() {
    String base = "{\"model_type\":\"qwen2\",\"hidden_size\":64,\"num_hidden_layers\":4,"
        + "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":128,"
        + "\"vocab_size\":100,\"max_position_embeddings\":256,\"sliding_window\":32,";
    AttentionShape from = HfConfigReader.parse(base + "\"use_sliding_window\":true,"
        + "\"max_window_layers\":2}", "q.json", "q").arch().attn();
    assertThat(from.windowed(1)).isFalse();
    assertThat(from.windowed(2)).isTrue();
    AttentionShape typed = HfConfigReader.parse(base + "\"layer_types\":[\"sliding_attention\","
        + "\"full_attention\",\"sliding_attention\",\"full_attention\"]}", "q.json", "q")
        .arch().attn();
    assertThat(typed.globalEvery()).isEqualTo(2);
    assertThatThrownBy(() -> HfConfigReader.parse(base + "\"layer_types\":["
        + "\"full_attention\",\"sliding_attention\",\"sliding_attention\",\"full_attention\"]}",
        "q.json", "q")).isInstanceOf(InputException.class)
        .hasMessageContaining("q.json: the pattern of layer_types is not supported");
  }

  @Test
  void badConfigsAreRefusedInOneLine() {
    String gemma = "{\"model_type\":\"gemma2\",\"hidden_size\":64,\"num_hidden_layers\":2,"
        + "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
        + "\"max_position_embeddings\":256,";
    assertThatThrownBy(() -> HfConfigReader.parse(gemma + "\"head_dim\":-16}", "g.json", "g"))
        .isInstanceOf(InputException.class)
        .hasMessage("g.json: field 'head_dim' must be a positive integer up to 65536, got -16");
    assertThatThrownBy(() -> HfConfigReader.parse(gemma + "\"num_key_value_heads\":3}",
        "g.json", "g")).isInstanceOf(InputException.class)
        .hasMessage("g.json: attention heads 4 must be a multiple of key/value heads 3");
    assertThatThrownBy(() -> HfConfigReader.parse(gemma.replace("gemma2", "granite")
        + "\"attention_bias\":true}", "r.json", "r")).isInstanceOf(InputException.class)
        .hasMessageStartingWith("r.json: field 'attention_bias' true is not supported");
  }

  @Test
  void aDirectoryIsReadThroughItsConfigJson(@org.junit.jupiter.api.io.TempDir Path dir)
      throws IOException {
    Path model = Files.createDirectory(dir.resolve("Qwen3-8B"));
    Files.copy(fixture("qwen3-8b.json"), model.resolve("config.json"));
    ModelSpec s = HfConfigReader.read(model);
    assertThat(s.name()).isEqualTo("Qwen3-8B");
    assertThat(s.parameterCount()).isEqualTo(8_190_735_360L);
  }
}
