package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * DeepSeek-V3: multi-head latent attention, dense blocks among the expert blocks, multi-token
 * prediction, the preset and the {@code deepseek_v3} config.
 */
class DeepseekModelsTest {
  private static final Path CONFIG = Path.of("core/src/test/resources/hf/deepseek-v3.json");

  /**
   * Counts as sum(p.numel()), h 7168, a 128, V 129280:
   *
   * <ul>
   *   <li>latent attention: queries 7168*1536 = 11,010,048 + norm 1536 + 1536*128*192 =
   *       37,748,736; keys/values 7168*(512+64) = 4,128,768 + norm 512 + 512*128*(128+128) =
   *       16,777,216; output 128*128*7168 = 117,440,512: 187,107,328;
   *   <li>expert block: + router 7168*256 = 1,835,008 + 256 experts * 3*7168*2048 (44,040,192) =
   *       11,274,289,152 + the shared expert 44,040,192 + 2 norms 14,336 = 11,507,286,016;
   *   <li>dense block: 187,107,328 + 3*7168*18432 = 396,361,728 + 14,336 = 583,483,392;
   *   <li>blocks: 58 * 11,507,286,016 + 3 * 583,483,392 = 669,173,039,104; embedding and head
   *       2 * 926,679,040, final norm 7168: 671,026,404,352 (the report's 671B);
   *   <li>the prediction module: 3 norms 21,504 + projection 2*7168*7168 = 102,760,448 + an expert
   *       block: 11,610,067,968; in all 682,636,472,320;
   *   <li>active: 248 idle experts (10,921,967,616) in each of 58 + 1 expert blocks fewer:
   *       38,240,382,976 (37,552,282,624 without the module, the report's 37B).
   * </ul>
   */
  @Test
  void presetCounts() {
    ModelSpec s = Presets.get("deepseek-v3");
    assertThat(s.arch().attn().mla().parameters(7168, 128)).isEqualTo(187_107_328L);
    assertThat(s.blockParameterCount(3)).isEqualTo(11_507_286_016L);
    assertThat(s.blockParameterCount(2)).isEqualTo(583_483_392L);
    assertThat(s.blocksParameterCount()).isEqualTo(669_173_039_104L);
    assertThat(s.mtpParameterCount()).isEqualTo(11_610_067_968L);
    assertThat(s.parameterCount()).isEqualTo(682_636_472_320L);
    assertThat(s.parameterCount() - s.mtpParameterCount()).isEqualTo(671_026_404_352L);
    assertThat(s.activeParameterCount()).isEqualTo(38_240_382_976L);
    assertThat(s.denseBlocks()).isEqualTo(3);
    assertThat(s.headDim()).isEqualTo(192);
    assertThat(s.valueHeadDim()).isEqualTo(128);
    assertThat(s.arch().beyondLlama()).containsExactly("a mixture of 256 experts",
        "multi-head latent attention", "multi-token prediction");
    ModelSpec dense = s.denseBlockModel();
    assertThat(dense.arch().moe().routed()).isFalse();
    assertThat(dense.ffn()).isEqualTo(18432);
    assertThat(dense.blockParameterCount()).isEqualTo(583_483_392L);
  }

  /** The released config reads as the preset, and names no unknown field. */
  @Test
  void releasedConfigIsThePreset() {
    HfConfigReader.HfConfig c = HfConfigReader.readConfig(CONFIG);
    assertThat(c.warnings()).isEmpty();
    ModelSpec read = c.spec();
    ModelSpec p = Presets.get("deepseek-v3");
    assertThat(read.seq()).isEqualTo(4096);
    assertThat(new ModelSpec(p.name(), read.family(), read.layers(), read.hidden(), read.heads(),
        read.kvHeads(), read.ffn(), read.vocab(), p.seq(), p.batch(), read.dtype(), read.arch()))
        .isEqualTo(p);
  }

  /**
   * Variants: uncompressed queries (q_lora_rank null: 7168*128*192 = 176,160,768 in place of
   * 48,760,320, so the block grows by 127,400,448); moe_layer_freq 2 makes blocks 0-2 and the odd
   * ones from 3 dense (3 + 29 = 32); no prediction module when num_nextn_predict_layers is
   * absent.
   */
  @Test
  void configVariants() throws IOException {
    String json = Files.readString(CONFIG);
    ModelSpec direct = HfConfigReader.parse(json.replace("\"q_lora_rank\": 1536",
        "\"q_lora_rank\": null"), "d.json", "d");
    assertThat(direct.arch().attn().mla().qLoraRank()).isZero();
    assertThat(direct.blockParameterCount(3) - Presets.get("deepseek-v3").blockParameterCount(3))
        .isEqualTo(176_160_768L - 48_760_320L);
    ModelSpec every2 = HfConfigReader.parse(json.replace("\"moe_layer_freq\": 1",
        "\"moe_layer_freq\": 2"), "d.json", "d");
    assertThat(every2.denseBlocks()).isEqualTo(32);
    assertThat(every2.arch().moe().denseLayer(4)).isFalse();
    assertThat(every2.arch().moe().denseLayer(5)).isTrue();
    ModelSpec noMtp = HfConfigReader.parse(json.replace("\"num_nextn_predict_layers\": 1,", ""),
        "d.json", "d");
    assertThat(noMtp.arch().mtpDepth()).isZero();
    assertThat(noMtp.parameterCount()).isEqualTo(671_026_404_352L);
  }

  /**
   * Kimi K2 is DeepSeek-V3's architecture under its own model_type; Kimi K2.5's config holds it in
   * text_config. h 7168, a 64, 384 experts, 1 dense block, V 163840, untied, no prediction module:
   *
   * <ul>
   *   <li>latent attention: queries 7168*1536 = 11,010,048 + norm 1536 + 1536*64*192 = 18,874,368;
   *       keys/values 7168*576 = 4,128,768 + norm 512 + 512*64*256 = 8,388,608; output
   *       64*128*7168 = 58,720,256: 101,124,096;
   *   <li>expert block: + router 7168*384 = 2,752,512 + 384 * 44,040,192 = 16,911,433,728 + the
   *       shared expert 44,040,192 + 2 norms 14,336 = 17,059,364,864;
   *   <li>dense block: 101,124,096 + 3*7168*18432 = 396,361,728 + 14,336 = 497,500,160;
   *   <li>60 * 17,059,364,864 + 497,500,160 = 1,024,059,392,000; embedding and head 2 *
   *       1,174,405,120, final norm 7168: 1,026,408,209,408 (the card's "1T");
   *   <li>active: 376 idle experts (16,559,112,192) in each of 60 blocks fewer: 32,861,477,888
   *       (the card's "32B activated").
   * </ul>
   */
  @Test
  void kimiK2IsDeepseekV3sArchitecture() throws IOException {
    HfConfigReader.HfConfig c = HfConfigReader.readConfig(
        Path.of("core/src/test/resources/hf/kimi-k2.5.json"));
    assertThat(c.warnings()).isEmpty();
    ModelSpec k = c.spec();
    assertThat(k.arch().attn().mla().parameters(7168, 64)).isEqualTo(101_124_096L);
    assertThat(k.blockParameterCount(1)).isEqualTo(17_059_364_864L);
    assertThat(k.blockParameterCount(0)).isEqualTo(497_500_160L);
    assertThat(k.blocksParameterCount()).isEqualTo(1_024_059_392_000L);
    assertThat(k.parameterCount()).isEqualTo(1_026_408_209_408L);
    assertThat(k.activeParameterCount()).isEqualTo(32_861_477_888L);
    assertThat(k.denseBlocks()).isEqualTo(1);
    assertThat(k.arch().mtpDepth()).isZero();
    // The text model alone, as a kimi_k2 config, reads the same.
    String text = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
        Files.readString(Path.of("core/src/test/resources/hf/kimi-k2.5.json")))
        .get("text_config").toString();
    assertThat(HfConfigReader.parse(text, "k.json", "k").parameterCount())
        .isEqualTo(1_026_408_209_408L);
    // No field has a default: one left out is refused, not guessed.
    refused(text.replace("\"n_routed_experts\":384,", ""), "k.json: missing field 'n_routed_experts'");
    refused(Files.readString(Path.of("core/src/test/resources/hf/kimi-k2.5.json"))
        .replace("\"model_type\": \"kimi_k2\"", "\"model_type\": \"llama\""),
        "d.json: text_config: model_type 'llama' is not the kimi_k2 text model");
  }

  /**
   * DeepSeek-V2 and V2-Lite (arXiv:2405.04434: 236B total and 21B active; 15.7B and 2.4B), read
   * from their {@code deepseek_v2} configs as DeepSeek-V3's blocks without a prediction module.
   *
   * <p>V2, h 5120, a 128, V 102400: latent attention 5120*1536 = 7,864,320 + norm 1536 +
   * 1536*128*192 = 37,748,736 + 5120*576 = 2,949,120 + norm 512 + 512*128*256 = 16,777,216 +
   * output 128*128*5120 = 83,886,080: 149,227,520; an expert block adds 2 norms 10,240, router
   * 160*5120 = 819,200, 160 experts * 3*5120*1536 (23,592,960) = 3,774,873,600 and 2 shared
   * experts 3*5120*3072 = 47,185,920: 3,972,116,480; the dense block 149,227,520 + 10,240 +
   * 3*5120*12288 = 188,743,680: 337,981,440; 59 expert blocks and the dense one 234,692,853,760,
   * embedding and head 2 * 524,288,000 and the final norm 5120: 235,741,434,880.
   *
   * <p>V2-Lite, h 2048, a 16, no query latent: queries 2048*16*192 = 6,291,456, keys/values
   * 2048*576 = 1,179,648 + norm 512 + 512*16*256 = 2,097,152, output 16*128*2048 = 4,194,304:
   * 13,763,072; an expert block 13,763,072 + 4,096 + router 64*2048 = 131,072 + 64 experts *
   * 3*2048*1408 (8,650,752) = 553,648,128 + 2 shared 3*2048*2816 = 17,301,504: 584,847,872; the
   * dense block 13,763,072 + 4,096 + 3*2048*10944 = 67,239,936: 81,007,104; 26 expert blocks,
   * the dense one, embedding and head 2 * 209,715,200 and the final norm 2048: 15,706,484,224.
   * Active: 58 idle experts a block (501,743,616) fewer in each of 26: 2,661,150,208.
   */
  @Test
  void deepseekV2IsReadAsV3sBlocksWithoutAPredictionModule() throws IOException {
    ModelSpec v2 = HfConfigReader.readConfig(Path.of("core/src/test/resources/hf/deepseek-v2.json"))
        .spec();
    assertThat(v2.arch().attn().mla().parameters(5120, 128)).isEqualTo(149_227_520L);
    assertThat(v2.blockParameterCount(1)).isEqualTo(3_972_116_480L);
    assertThat(v2.blockParameterCount(0)).isEqualTo(337_981_440L);
    assertThat(v2.parameterCount()).isEqualTo(235_741_434_880L);
    assertThat(v2.arch().mtpDepth()).isZero();
    assertThat(v2.denseBlocks()).isEqualTo(1);
    assertThat(v2.arch().moe().groups()).isEqualTo(8);
    assertThat(v2.arch().moe().groupTopK()).isEqualTo(3);
    HfConfigReader.HfConfig lite = HfConfigReader.readConfig(
        Path.of("core/src/test/resources/hf/deepseek-v2-lite.json"));
    assertThat(lite.warnings()).isEmpty();
    ModelSpec l = lite.spec();
    assertThat(l.arch().attn().mla().qLoraRank()).isZero();
    assertThat(l.arch().attn().mla().parameters(2048, 16)).isEqualTo(13_763_072L);
    assertThat(l.blockParameterCount(1)).isEqualTo(584_847_872L);
    assertThat(l.blockParameterCount(0)).isEqualTo(81_007_104L);
    assertThat(l.parameterCount()).isEqualTo(15_706_484_224L);
    assertThat(l.activeParameterCount()).isEqualTo(2_661_150_208L);
    // Each config reads as its preset: MoeModelsTest.publishedConfigsAreThePresets.
    // As for Kimi K2, no size field has a default: one left out is refused, not guessed.
    String text = Files.readString(Path.of("core/src/test/resources/hf/deepseek-v2-lite.json"));
    refused(text.replace("  \"moe_intermediate_size\": 1408,\n", ""),
        "d.json: missing field 'moe_intermediate_size'");
  }

  /** Impossible sizes are refused in one line naming the field. */
  @Test
  void badConfigsAreRefused() throws IOException {
    String json = Files.readString(CONFIG);
    refused(json.replace("\"qk_rope_head_dim\": 64", "\"qk_rope_head_dim\": 63"),
        "d.json: field 'qk_rope_head_dim' must be even (rotary embeddings rotate pairs), got 63");
    refused(json.replace("\"num_experts_per_tok\": 8", "\"num_experts_per_tok\": 300"),
        "d.json: field 'num_experts_per_tok' 300 is more than the 256 experts (n_routed_experts)");
    refused(json.replace("\"first_k_dense_replace\": 3", "\"first_k_dense_replace\": 61"),
        "d.json: no block routes to experts (first_k_dense_replace 61, moe_layer_freq 1, 61 "
            + "blocks)");
    refused(json.replace("\"first_k_dense_replace\": 3", "\"first_k_dense_replace\": -1"),
        "d.json: field 'first_k_dense_replace' must be a non-negative integer, got -1");
    refused(json.replace("\"kv_lora_rank\": 512", "\"kv_lora_rank\": 0"),
        "d.json: field 'kv_lora_rank' must be a positive integer below 2^31, got 0");
    refused(json.replace("\"num_nextn_predict_layers\": 1", "\"num_nextn_predict_layers\": 99"),
        "d.json: field 'num_nextn_predict_layers' must be at most 16, got 99");
    refused(json.replace("\"attention_bias\": false", "\"attention_bias\": true"),
        "d.json: field 'attention_bias' true is not supported");
    // 2^32 shared experts is not none, which a read into an int would wrap it to.
    refused(json.replace("\"n_shared_experts\": 1", "\"n_shared_experts\": 4294967296"),
        "d.json: field 'n_shared_experts' must be a positive integer below 2^31, got 4294967296");
  }

  private static void refused(String json, String message) {
    String where = message.startsWith("k.json") ? "k.json" : "d.json";
    assertThatThrownBy(() -> HfConfigReader.parse(json, where, "d"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith(message)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  /**
   * A small latent-attention block's fused attention: b 1, a 4, s 64, d_qk 16 + 8 = 24, d_v 16.
   * Causal pairs times 2: 1*4*64*64 = 16,384. Forward 16,384 * (24 + 16) = 655,360; backward dQ
   * 16,384 * (2*24 + 16) = 1,048,576, of which the rebuilt scores 16,384 * 24 = 393,216; dK
   * 16,384 * 24 = 393,216; dV 16,384 * 16 = 262,144. The output is [1, 64, 4, 16].
   */
  @Test
  void latentAttentionKernelFlops() {
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        AttentionShape.latent(new Mla(32, 16, 16, 8, 16)), MoeShape.DENSE);
    ModelSpec m = new ModelSpec("mla", ModelSpec.Family.LLAMA, 2, 64, 4, 4, 128, 256, 64, 1,
        DType.BF16, arch);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, 1, 64)
        .withAttention(Attention.FLASH));
    Graph g = tg.graph();
    double[] byOutput = new double[4];
    double recomputed = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.FUSED_ATTENTION) {
        byOutput[3] += OpCost.flops(g, ins);
        assertThat(ins.tensorShape().dims()).containsExactly(1, 64, 4, 16);
      } else if (ins.opcode() == Opcode.FUSED_ATTENTION_GRAD) {
        byOutput[((OpAttrs.Attention) ins.attrs()).output()] += OpCost.flops(g, ins);
        recomputed += OpCost.recomputedFlops(g, ins);
      }
    }
    assertThat(byOutput).containsExactly(1_048_576, 393_216, 262_144, 655_360);
    assertThat(recomputed).isEqualTo(393_216);
    // The block's weights: the four latent projections, the output, two latent norms.
    List<String> names = tg.weights().stream().map(WeightTensors::name)
        .filter(n -> n.contains("/attention/")).sorted().toList();
    assertThat(names).containsExactly("layer_0/attention/kv_a_norm", "layer_0/attention/q_a_norm",
        "layer_0/attention/wkv_a", "layer_0/attention/wkv_b", "layer_0/attention/wo",
        "layer_0/attention/wq_a", "layer_0/attention/wq_b");
  }

  /**
   * The prediction module's input graph: its own embedding copy, two norms and the projection;
   * the block and head are priced as the model's.
   */
  @Test
  void predictionModuleGraph() {
    Architecture a = Presets.get("deepseek-v3").arch();
    ModelSpec small = new ModelSpec("mtp", ModelSpec.Family.LLAMA, 4, 64, 4, 4, 32, 256, 32, 1,
        DType.BF16, new Architecture(a.mlp(), a.norm(), a.positions(), 0, false, false,
            AttentionShape.latent(new Mla(32, 16, 16, 8, 16)),
            new MoeShape(4, 2, 32, 32, false).withDenseLayers(List.of(0), 96), 1));
    TrainingGraph tg = TrainingGraphBuilder.buildMtp(small, TrainingOptions.of(small)
        .withWorkload(1, 32).withAttention(Attention.FLASH).withOptimizer(false));
    List<String> names = tg.weights().stream().map(WeightTensors::name).sorted().toList();
    assertThat(names).containsExactly("layer_4/mtp_embedding/table",
        "layer_4/mtp_enorm/scale", "layer_4/mtp_hnorm/scale", "layer_4/mtp_projection/eh_proj");
    assertThat(tg.graph().get(tg.outputGradient()).tensorShape().dims())
        .containsExactly(1, 32, 64);
    assertThatThrownBy(() -> TrainingGraphBuilder.buildMtp(Presets.get("mixtral-8x7b"),
        TrainingOptions.of(Presets.get("mixtral-8x7b"))))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
