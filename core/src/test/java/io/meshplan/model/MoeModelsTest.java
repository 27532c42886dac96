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

/** The mixture-of-experts presets and the Mixtral, Qwen3-MoE and GPT-OSS configs. */
class MoeModelsTest {
  private static Path fixture(String name) {
    return Path.of("core/src/test/resources/hf", name);
  }

  private static String text(String name) throws IOException {
    return Files.readString(fixture(name));
  }

  /**
   * Exact counts, as sum(p.numel()) over each model with its LM head; every model is untied, so
   * the token table and the head add 2 V h, and the final RMSNorm h.
   *
   * <ul>
   *   <li>Mixtral-8x7B, h 4096, a 32, kv 8 (d 128), 8 experts of f 14336, V 32000, 32 layers:
   *       block = q,o 2*4096^2 + k,v 2*4096*1024 = 41,943,040 + router 4096*8 = 32,768 + experts
   *       8 * 3*4096*14336 = 8 * 176,160,768 = 1,409,286,144 + norms 2*4096 = 1,451,270,144;
   *       32 * that + 2*32000*4096 + 4096 = 46,702,792,704 (the card's 46.7B). Active: 6 idle
   *       experts per block, 32 * 6 * 176,160,768 = 33,822,867,456 fewer: 12,879,925,248 (12.9B).
   *   <li>Mixtral-8x22B, h 6144, a 48, kv 8, f 16384, V 32000, 56 layers: block = 2*6144^2 +
   *       2*6144*1024 = 88,080,384 + 6144*8 = 49,152 + 8 * 3*6144*16384 = 8 * 301,989,888 =
   *       2,415,919,104 + 2*6144 = 2,504,060,928; 56 * that + 2*32000*6144 + 6144 =
   *       140,620,634,112 (141B). Active: 56 * 6 * 301,989,888 = 101,468,602,368 fewer:
   *       39,152,031,744 (39B).
   *   <li>Qwen3-235B-A22B, h 4096, a 64, kv 4, d 128, 128 experts of 1536, V 151936, 94 layers:
   *       block = q,o 2*4096*8192 + k,v 2*4096*512 = 71,303,168 + q/k norms 2*128 + router
   *       4096*128 = 524,288 + experts 128 * 3*4096*1536 = 128 * 18,874,368 = 2,415,919,104 +
   *       2*4096 = 2,487,755,008; 94 * that + 2*151936*4096 + 4096 = 235,093,634,560 (235B).
   *       Active: 94 * 120 * 18,874,368 = 212,902,871,040 fewer: 22,190,763,520 (22B).
   *   <li>Qwen3-30B-A3B, h 2048, a 32, kv 4, d 128, 128 experts of 768, V 151936, 48 layers:
   *       block = 2*2048*4096 + 2*2048*512 = 18,874,368 + 256 + 2048*128 = 262,144 + 128 *
   *       3*2048*768 = 128 * 4,718,592 = 603,979,776 + 2*2048 = 623,120,640; 48 * that +
   *       2*151936*2048 + 2048 = 30,532,122,624 (30.5B). Active: 48 * 120 * 4,718,592 =
   *       27,179,089,920 fewer: 3,353,032,704 (3.3B).
   *   <li>GPT-OSS-120B, h 2880, a 64, kv 8, d 64, biases, 128 experts of 2880 with biases, V
   *       201088, 36 layers: block = attention 2880*4096 + 4096 + 2 (2880*512 + 512) + 4096*2880
   *       + 2880 = 26,550,080 + sinks 64 + router 2880*128 + 128 = 368,768 + experts 128 *
   *       (3*2880*2880 + 2*2880 + 2880) = 128 * 24,891,840 = 3,186,155,520 + norms 5,760 =
   *       3,213,080,192; 36 * that + 2*201088*2880 + 2880 = 116,829,156,672 (the card's
   *       116.83B). Active: 36 * 124 * 24,891,840 = 111,117,173,760 fewer: 5,711,982,912; the
   *       card's 5.13B leaves out the 201088*2880 = 579,133,440 embedding table: 5,132,849,472.
   *   <li>GPT-OSS-20B, 24 layers, 32 experts: block = 26,550,080 + 64 + 2880*32 + 32 = 92,192 +
   *       32 * 24,891,840 = 796,538,880 + 5,760 = 823,186,976; 24 * that + 1,158,266,880 + 2880
   *       = 20,914,757,184 (the card's 20.91B). Active: 24 * 28 * 24,891,840 = 16,727,316,480
   *       fewer: 4,187,440,704; without the embedding table 3,608,307,264 (the card's 3.61B).
   * </ul>
   */
  @ParameterizedTest
  @CsvSource({"mixtral-8x7b, 46702792704, 12879925248",
      "mixtral-8x22b, 140620634112, 39152031744",
      "qwen3-235b-a22b, 235093634560, 22190763520",
      "qwen3-30b-a3b, 30532122624, 3353032704",
      "gpt-oss-120b, 116829156672, 5711982912",
      "gpt-oss-20b, 20914757184, 4187440704"})
  void presetCounts(String preset, long total, long active) {
    ModelSpec s = Presets.get(preset);
    assertThat(s.parameterCount()).isEqualTo(total);
    assertThat(s.activeParameterCount()).isEqualTo(active);
  }

  /** GPT-OSS-120B's block, part by part, as the arithmetic above has it. */
  @Test
  void gptOssBlockParts() {
    ModelSpec s = Presets.get("gpt-oss-120b");
    assertThat(s.blockParameterCount()).isEqualTo(3_213_080_192L);
    assertThat(s.arch().moe().parameters(2880)).isEqualTo(368_768L + 128L * 24_891_840);
    assertThat(s.arch().moe().expertParameters(2880)).isEqualTo(128L * 24_891_840);
    // Without the sinks the block has 64 parameters fewer, one per head.
    AttentionShape a = s.arch().attn();
    AttentionShape noSinks = new AttentionShape(a.headDim(), a.qkvBias(), a.qkNorm(),
        a.blockNorms(), a.attentionSoftcap(), a.finalSoftcap(), a.window(), a.globalEvery(),
        a.windowFrom());
    Architecture r = s.arch();
    ModelSpec without = new ModelSpec(s.name(), s.family(), s.layers(), s.hidden(), s.heads(),
        s.kvHeads(), s.ffn(), s.vocab(), s.seq(), s.batch(), s.dtype(), new Architecture(
            r.mlp(), r.norm(), r.positions(), r.positionRows(), r.biases(), r.tiedEmbeddings(),
            noSinks, r.moe()));
    assertThat(s.blockParameterCount() - without.blockParameterCount()).isEqualTo(64);
    // Layers 0, 2, ... attend within 128 tokens, layers 1, 3, ... globally.
    assertThat(a.windowed(0)).isTrue();
    assertThat(a.windowed(1)).isFalse();
    assertThat(a.windowed(34)).isTrue();
    assertThat(a.windowed(35)).isFalse();
    assertThat(s.arch().beyondLlama()).containsExactly("a mixture of 128 experts", "head_dim 64",
        "attention sinks");
  }

  /** Each published config reads as its preset, name and workload aside. */
  @ParameterizedTest
  @CsvSource({"mixtral-8x7b-v0.1.json, mixtral-8x7b, 8192",
      "mixtral-8x22b-v0.1.json, mixtral-8x22b, 8192",
      "qwen3-235b-a22b.json, qwen3-235b-a22b, 8192", "qwen3-30b-a3b.json, qwen3-30b-a3b, 8192",
      "gpt-oss-120b.json, gpt-oss-120b, 4096", "gpt-oss-20b.json, gpt-oss-20b, 4096",
      "deepseek-v2.json, deepseek-v2, 4096", "deepseek-v2-lite.json, deepseek-v2-lite, 4096"})
  void publishedConfigsAreThePresets(String file, String preset, int seq) {
    ModelSpec p = Presets.get(preset);
    ModelSpec read = HfConfigReader.read(fixture(file));
    assertThat(read.name()).isEqualTo(file.substring(0, file.length() - 5));
    // The reader's workload is batch 8 and the pre-training sequence (HfSequence): gpt-oss's
    // YaRN original of 4096; Mixtral's 32768/65536 and Qwen3's 40960 positions capped at 8192.
    assertThat(read.seq()).isEqualTo(seq);
    assertThat(read.batch()).isEqualTo(8);
    assertThat(new ModelSpec(preset, read.family(), read.layers(), read.hidden(), read.heads(),
        read.kvHeads(), read.ffn(), read.vocab(), p.seq(), p.batch(), read.dtype(), read.arch()))
        .isEqualTo(p);
  }

  /**
   * Mixtral and Qwen3-MoE configs carry only known fields; GPT-OSS's name its MXFP4
   * quantization, which meshplan does not model (it plans training in the config's precision).
   */
  @Test
  void warningsOfThePublishedConfigs() {
    for (String f : new String[] {"mixtral-8x7b-v0.1.json", "mixtral-8x22b-v0.1.json",
        "qwen3-235b-a22b.json", "qwen3-30b-a3b.json"}) {
      assertThat(HfConfigReader.readConfig(fixture(f)).warnings()).as(f).isEmpty();
    }
    assertThat(HfConfigReader.readConfig(fixture("gpt-oss-20b.json")).warnings())
        .containsExactly("core/src/test/resources/hf/gpt-oss-20b.json: field "
            + "'quantization_config' is not one meshplan knows for model_type gpt_oss; it is "
            + "ignored, and may change the model's cost");
  }

  /**
   * Dense blocks among the expert blocks, as Qwen3-MoE's modeling file makes them. Qwen3-30B-A3B's
   * dense block: attention 18,874,368 + q/k norms 256 + MLP 3*2048*6144 = 37,748,736 + norms
   * 4096 = 56,627,456; its expert block 623,120,640; embedding and head 2*151936*2048 =
   * 622,329,856 and final norm 2048: 622,331,904.
   * decoder_sparse_step 2 routes blocks 1, 3, ..., 47: 24 * 623,120,640 + 24 * 56,627,456 +
   * 622,331,904 = 16,936,286,208. mlp_only_layers [0, 47]: 46 * 623,120,640 + 2 * 56,627,456 +
   * 622,331,904 = 29,399,136,256.
   */
  @Test
  void denseBlocksAmongExperts() throws IOException {
    String qwen = text("qwen3-30b-a3b.json");
    ModelSpec alternate = HfConfigReader.parse(qwen.replace("\"decoder_sparse_step\": 1",
        "\"decoder_sparse_step\": 2"), "q.json", "q");
    assertThat(alternate.denseBlocks()).isEqualTo(24);
    assertThat(alternate.arch().moe().denseLayer(0)).isTrue();
    assertThat(alternate.arch().moe().denseLayer(1)).isFalse();
    assertThat(alternate.blockParameterCount(0)).isEqualTo(56_627_456L);
    assertThat(alternate.blockParameterCount(1)).isEqualTo(623_120_640L);
    assertThat(alternate.parameterCount()).isEqualTo(16_936_286_208L);
    ModelSpec ends = HfConfigReader.parse(qwen.replace("\"mlp_only_layers\": []",
        "\"mlp_only_layers\": [0, 47]"), "q.json", "q");
    assertThat(ends.arch().moe().denseLayers()).containsExactly(0, 47);
    assertThat(ends.arch().moe().denseIn(1, 46)).isZero();
    assertThat(ends.arch().moe().denseIn(40, 47)).isEqualTo(1);
    assertThat(ends.parameterCount()).isEqualTo(29_399_136_256L);
    assertRefused(qwen.replace("\"mlp_only_layers\": []", "\"mlp_only_layers\": [48]"),
        "q.json: mlp_only_layers[0] is 48; layers are numbered 0 to 47");
    assertRefused(qwen.replace("\"mlp_only_layers\": []", "\"mlp_only_layers\": 3"),
        "q.json: field 'mlp_only_layers' must be a list of layer numbers, got 3");
    assertRefused(qwen.replace("\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 49"),
        "q.json: no block routes to experts (decoder_sparse_step 49, mlp_only_layers [], 48 "
            + "blocks); without experts, use model_type qwen3");
    // null and an absent field both mean no dense layers, as in transformers.
    assertThat(HfConfigReader.parse(qwen.replace("\"mlp_only_layers\": []",
        "\"mlp_only_layers\": null"), "q.json", "q").parameterCount())
        .isEqualTo(30_532_122_624L);
  }

  /** Expert counts that no router can use are refused in one line. */
  @Test
  void impossibleExpertCountsAreRefused() throws IOException {
    String mixtral = text("mixtral-8x7b-v0.1.json");
    assertRefused(mixtral.replace("\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9"),
        "q.json: field 'num_experts_per_tok' 9 is more than the 8 experts (num_local_experts)");
    assertRefused(mixtral.replace("\"num_local_experts\": 8", "\"num_local_experts\": 0"),
        "q.json: field 'num_local_experts' is 0; meshplan reads mixture-of-experts configs "
            + "whose every layer routes to experts (without experts, use the dense family's "
            + "model_type)");
    assertRefused(mixtral.replace("\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 0"),
        "q.json: field 'num_experts_per_tok' must be a positive integer below 2^31, got 0");
    assertRefused(text("qwen3-30b-a3b.json").replace("\"num_experts\": 128",
        "\"num_experts\": 100000"), "q.json: field 'num_experts' must be at most 65536, got "
        + "100000");
    assertRefused(text("gpt-oss-20b.json").replace("\"experts_per_token\": 4",
        "\"experts_per_token\": 2"), "q.json: field 'experts_per_token' 2 disagrees with "
        + "num_experts_per_tok 4 (transformers reads num_experts_per_tok); make them equal");
    // Experts of 2^31 - 1 are past ModelSpec.MAX_FFN = 2^22 (#36). Within the bounds the
    // parameter count still refuses 65536 experts of 2^22 at hidden 2^20: 3 h f = 3 x 2^42 =
    // 1.3e13 per expert, x 65536 = 8.6e17 per block, x 32 blocks = 2.8e19 > 2^63 - 1 = 9.2e18.
    String huge = mixtral.replace("\"num_local_experts\": 8", "\"num_local_experts\": 65536")
        .replace("\"intermediate_size\": 14336", "\"intermediate_size\": 2147483647")
        .replace("\"hidden_size\": 4096", "\"hidden_size\": 1048576");
    assertRefused(huge, "q.json: expert intermediate size must be from 1 to 4194304, got "
        + "2147483647");
    assertRefused(huge.replace("2147483647", "4194304"), "q.json: the model's parameter count "
        + "does not fit in a 64-bit integer");
  }

  /** An unknown family is refused with the supported list, the MoE families among them. */
  @Test
  void unknownFamilyIsRefusedWithTheSupportedList() throws IOException {
    String other = text("mixtral-8x7b-v0.1.json").replace("\"mixtral\"", "\"phimoe\"");
    assertThatThrownBy(() -> HfConfigReader.parse(other, "d.json", "d"))
        .isInstanceOf(InputException.class)
        .hasMessage("d.json: model_type 'phimoe' is not supported; supported: "
            + String.join(", ", HfConfigReader.SUPPORTED));
    // The list is the registry's, in its order: a new family adds itself to it.
    assertThat(HfConfigReader.SUPPORTED).containsSubsequence("llama", "mistral", "gpt_neox",
        "opt", "qwen2", "qwen3", "gemma2", "gemma3", "gemma3_text", "phi3", "olmo2", "granite",
        "starcoder2", "mixtral", "olmoe", "qwen3_moe", "gpt_oss", "deepseek_v3", "deepseek_v2");
  }

  /**
   * OLMoE-1B-7B (Muennighoff et al. 2024, arXiv:2409.02060: 6.9B parameters, 1.3B active),
   * h 2048, 16 heads, V 50304, 16 blocks of 64 experts of 1024, 8 a token. A block: attention
   * 4 * 2048^2 = 16,777,216, the query and key norms over the whole projections 2 * 2048, the
   * two block norms 2 * 2048, router 64 * 2048 = 131,072 and 64 experts * 3*2048*1024
   * (6,291,456) = 402,653,184: 419,569,664; 16 blocks 6,713,114,624, embedding and head
   * 2 * 103,022,592 and the final norm 2048: 6,919,161,856. Active: 56 idle experts a block
   * (352,321,536) fewer in each of 16: 1,282,017,280.
   */
  @Test
  void olmoeIsOlmo2sAttentionWithExpertsOnEveryBlock() throws IOException {
    String json = text("olmoe-1b-7b-0924.json");
    ModelSpec m = HfConfigReader.parse(json, "o.json", "o");
    assertThat(m.arch().attn().qkNorm()).isEqualTo(AttentionShape.QkNorm.WHOLE);
    assertThat(m.blockParameterCount()).isEqualTo(419_569_664L);
    assertThat(m.parameterCount()).isEqualTo(6_919_161_856L);
    assertThat(m.activeParameterCount()).isEqualTo(1_282_017_280L);
    assertThat(m.arch().moe().denseLayers()).isEmpty();
    assertThat(m.arch().numerics().normEps()).isEqualTo(1e-5);
    // No size field has a default (the class's intermediate_size 2048 is not the model's 1024).
    assertRefused(json.replace("  \"intermediate_size\": 1024,\n", ""),
        "q.json: missing field 'intermediate_size'");
    assertRefused(json.replace("\"clip_qkv\": null", "\"clip_qkv\": \"8\""),
        "q.json: field 'clip_qkv' must be a positive number or null, got \"8\"");
    assertRefused(json.replace("\"attention_bias\": false", "\"attention_bias\": true"),
        "q.json: field 'attention_bias'");
    // A clamp of the projections changes no count.
    assertThat(HfConfigReader.parse(json.replace("\"clip_qkv\": null", "\"clip_qkv\": 8.0"),
        "o.json", "o").parameterCount()).isEqualTo(6_919_161_856L);
  }

  /**
   * Defaults and windows: a Mixtral config that states head_dim = hidden / heads reads as one
   * without; Mixtral's sliding_window windows every layer; Qwen3-MoE's use_sliding_window
   * windows every layer (its modeling file has no max_window_layers); GPT-OSS with the layer
   * types left out alternates from layer 0, and with sliding_window null has no window.
   */
  @Test
  void familyDetails() throws IOException {
    String mixtral = text("mixtral-8x7b-v0.1.json");
    ModelSpec stated = HfConfigReader.parse(mixtral.replace("\"hidden_act\"",
        "\"head_dim\": 128, \"hidden_act\""), "m.json", "m");
    assertThat(stated.arch().attn().headDim()).isZero();
    ModelSpec windowed = HfConfigReader.parse(mixtral.replace("\"sliding_window\": null",
        "\"sliding_window\": 4096"), "m.json", "m");
    assertThat(windowed.arch().attn().window()).isEqualTo(4096);
    assertThat(windowed.arch().attn().windowed(31)).isTrue();
    ModelSpec qwen = HfConfigReader.parse(text("qwen3-30b-a3b.json")
        .replace("\"use_sliding_window\": false", "\"use_sliding_window\": true"), "q.json", "q");
    // sliding_window null takes the class default, 4096.
    assertThat(qwen.arch().attn().window()).isEqualTo(4096);
    assertThat(qwen.arch().attn().windowed(0)).isTrue();
    String oss = text("gpt-oss-20b.json").replaceAll("(?s)\"layer_types\": \\[[^]]*],", "");
    ModelSpec alternating = HfConfigReader.parse(oss, "o.json", "o");
    assertThat(alternating.arch()).isEqualTo(Presets.get("gpt-oss-20b").arch());
    ModelSpec noWindow = HfConfigReader.parse(oss.replace("\"sliding_window\": 128",
        "\"sliding_window\": null"), "o.json", "o");
    assertThat(noWindow.arch().attn().window()).isZero();
    assertThat(noWindow.arch().attn().sinks()).isTrue();
    // GPT-OSS without attention_bias keeps its expert biases.
    ModelSpec noBias = HfConfigReader.parse(oss.replace("\"attention_bias\": true",
        "\"attention_bias\": false"), "o.json", "o");
    assertThat(noBias.arch().biases()).isFalse();
    assertThat(noBias.arch().moe().expertBiases()).isTrue();
    // The attention biases per block: Q 4096 + K, V 2 * 512 + output 2880 = 8000.
    assertThat(alternating.blockParameterCount() - noBias.blockParameterCount())
        .isEqualTo(8000);
  }

  private static void assertRefused(String json, String message) {
    assertThatThrownBy(() -> HfConfigReader.parse(json, "q.json", "q"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith(message)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }
}
