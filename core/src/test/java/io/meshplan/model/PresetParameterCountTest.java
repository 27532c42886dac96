package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.graph.DType;
import java.math.BigDecimal;
import java.math.RoundingMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Parameter counts of the presets against published numbers. */
class PresetParameterCountTest {

  /**
   * Narayanan et al. SC'21, Table 1 and section 5.1: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh)),
   * V = 51200, s = 2048. That is 12lh^2 (QKV, projection, two MLP matrices) + 13lh (biases and two
   * LayerNorms per block) + Vh (tied embedding) + sh (learned positions). Our count also has the
   * final LayerNorm (2h), which the formula leaves out and which is below the shown precision.
   * E.g. 1.7B: 12*24*2304^2 = 1,528,823,808; 13*24*2304 = 718,848; (51200+2048)*2304 =
   * 122,683,392; sum 1,652,226,048 -> 1.7 (one decimal).
   */
  @ParameterizedTest
  @CsvSource({"gpt-1.7b, 1.7", "gpt-3.6b, 3.6", "gpt-7.5b, 7.5", "gpt-18.4b, 18.4",
      "gpt-39.1b, 39.1", "gpt-76.1b, 76.1", "gpt-145.6b, 145.6", "gpt-310.1b, 310.1",
      "gpt-529.6b, 529.6", "gpt-1t, 1008.0"})
  void megatronTable1(String preset, String published) {
    ModelSpec s = Presets.get(preset);
    double l = s.layers();
    double h = s.hidden();
    double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (51200.0 + 2048) / (12 * l * h));
    assertThat(round1(formula)).isEqualTo(published);
    assertThat(round1(s.parameterCount())).isEqualTo(published);
    assertThat((double) s.parameterCount() - formula).isCloseTo(2 * h, within(1e-3));
    assertThat(s.vocab()).isEqualTo(51200);
    assertThat(s.seq()).isEqualTo(2048);
    assertThat(s.ffn()).isEqualTo(4 * s.hidden());
  }

  private static String round1(double params) {
    return new BigDecimal(params / 1e9).setScale(1, RoundingMode.HALF_UP).toPlainString();
  }

  /**
   * LLaMA counts against the sizes on the model cards (Hugging Face safetensors counts): Llama 2
   * 7B "6.74B", 13B "13B", 70B "69B", Llama 3.1 405B "406B" (Meta calls it 405B). Exact values
   * from the configs: 7B: per block 4*4096^2 + 3*4096*11008 + 2*4096 = 202,383,360; times 32 plus
   * two 32000 x 4096 tables and the final norm = 6,738,415,616.
   */
  @ParameterizedTest
  @CsvSource({"llama2-7b, 6738415616, 6.74e9", "llama2-13b, 13015864320, 13.0e9",
      "llama2-70b, 68976648192, 69.0e9", "llama3.1-405b, 405853388800, 405e9",
      "llama3-405b, 405853388800, 405e9",
      "llama-7b, 6738415616, 6.7e9", "llama-13b, 13015864320, 13.0e9",
      "llama-33b, 32528943616, 32.5e9", "llama-65b, 65285660672, 65.2e9",
      "llama3-8b, 8030261248, 8.03e9", "llama3-70b, 70553706496, 70.6e9",
      "llama3.1-8b, 8030261248, 8.03e9", "llama3.1-70b, 70553706496, 70.6e9",
      "mistral-7b, 7241732096, 7.24e9", "gpt3-175b, 174604259328, 175e9",
      "opt-125m, 125239296, 125e6", "opt-6.7b, 6658473984, 6.7e9",
      "opt-30b, 29974540288, 30e9", "opt-66b, 65719701504, 66e9",
      "opt-175b, 174604468224, 175e9"})
  void modelCards(String preset, long exact, double published) {
    ModelSpec s = Presets.get(preset);
    assertThat(s.parameterCount()).isEqualTo(exact);
    assertThat(Math.abs(s.parameterCount() - published) / published).isLessThan(0.01);
  }

  /**
   * OPT's size names are rounded more coarsely (Zhang et al. 2022, Table 1): 1.3B is 1.316e9
   * (1.2% off the name), 2.7B is 2.652e9 (1.8%), 13B is 12.853e9 (1.1%). The exact counts equal
   * the released checkpoints' (HF reports opt-1.3b as 1,315,758,080).
   */
  @ParameterizedTest
  @CsvSource({"opt-1.3b, 1315758080, 1.3e9", "opt-2.7b, 2651596800, 2.7e9",
      "opt-13b, 12853473280, 13e9"})
  void optNamesAreCoarse(String preset, long exact, double named) {
    ModelSpec s = Presets.get(preset);
    assertThat(s.parameterCount()).isEqualTo(exact);
    assertThat(Math.abs(s.parameterCount() - named) / named).isLessThan(0.02);
  }

  /** The parts add up; 70B has grouped-query attention: K and V are h x (8 * 128). */
  @Test
  void partsOfLlama2_70b() {
    ModelSpec s = Presets.get("llama2-70b");
    // 2*8192^2 + 2*8192*1024 + 3*8192*28672 + 2*8192 = 134,217,728 + 16,777,216 + 704,643,072
    // + 16,384 = 855,654,400.
    assertThat(s.blockParameterCount()).isEqualTo(855_654_400L);
    assertThat(s.embeddingParameterCount()).isEqualTo(32000L * 8192);
    assertThat(s.headParameterCount()).isEqualTo(32000L * 8192 + 8192);
    assertThat(s.blocksParameterCount()).isEqualTo(80 * 855_654_400L);
    assertThat(s.headDim()).isEqualTo(128);
  }

  /** The old defaults of the shard presets are unchanged: batch 8, sequence 1024, fp32. */
  @Test
  void shardPresetsKeepTheirWorkload() {
    for (String n : new String[] {"llama2-7b", "llama2-13b", "llama2-70b"}) {
      ModelSpec s = Presets.get(n);
      assertThat(s.batch()).isEqualTo(8);
      assertThat(s.seq()).isEqualTo(1024);
      assertThat(s.dtype()).isEqualTo(DType.F32);
      assertThat(s.family()).isEqualTo(ModelSpec.Family.LLAMA);
    }
    assertThat(Presets.get("alpa-mlp").parameterCount()).isEqualTo(2L * 128 * 128);
  }

  /** Tying the head removes V*h parameters; biases add 4h + f + h + ... per block. */
  @Test
  void architectureFlagsChangeTheCount() {
    ModelSpec gpt = Presets.get("gpt");
    ModelSpec untied = new ModelSpec("x", ModelSpec.Family.GPT, gpt.layers(), gpt.hidden(),
        gpt.heads(), gpt.kvHeads(), gpt.ffn(), gpt.vocab(), gpt.seq(), gpt.batch(), gpt.dtype(),
        new Architecture(Architecture.Mlp.GELU, Architecture.Norm.LAYER,
            Architecture.Positions.LEARNED, 2048, true, false));
    assertThat(untied.parameterCount() - gpt.parameterCount()).isEqualTo(51200L * 768);
    ModelSpec noBias = new ModelSpec("x", ModelSpec.Family.GPT, gpt.layers(), gpt.hidden(),
        gpt.heads(), gpt.kvHeads(), gpt.ffn(), gpt.vocab(), gpt.seq(), gpt.batch(), gpt.dtype(),
        new Architecture(Architecture.Mlp.GELU, Architecture.Norm.LAYER,
            Architecture.Positions.LEARNED, 2048, false, true));
    // Biases per block: QKV 3h, projection h, MLP f + h = 4*768 + 3072 + 768 = 6912.
    assertThat(gpt.blockParameterCount() - noBias.blockParameterCount()).isEqualTo(6912);
  }
}
