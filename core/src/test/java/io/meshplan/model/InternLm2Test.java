package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * InternLM2.5-7B read from its released config (restated in {@code
 * src/test/resources/hf/internlm2_5-7b.json}) as LLaMA's blocks, and the attention biases its
 * configuration class defaults to refused.
 */
class InternLm2Test {
  private static final Path CONFIG = Path.of("core/src/test/resources/hf/internlm2_5-7b.json");

  /**
   * h 4096, a 32, kv 8 (d 128), f 14336, V 92544, 32 layers, untied: block = q, o 2*4096^2 +
   * k, v 2*4096*1024 + MLP 3*4096*14336 + 2 norms 2*4096 = 33,554,432 + 8,388,608 +
   * 176,160,768 + 8,192 = 218,112,000; 32 * that + embedding and head 2*92544*4096 + final norm
   * 4096 = 6,979,584,000 + 758,120,448 + 4,096 = 7,737,708,544 (InternLM2.5-7B's 7.74 B).
   */
  @Test
  void readsInternLm25As7_7BillionLlamaParameters() {
    HfConfigReader.HfConfig cfg = HfConfigReader.readConfig(CONFIG);
    ModelSpec m = cfg.spec();
    assertThat(m.parameterCount()).isEqualTo(7_737_708_544L);
    assertThat(m.family()).isEqualTo(ModelSpec.Family.LLAMA);
    assertThat(m.kvHeads()).isEqualTo(8);
    assertThat(m.ffn()).isEqualTo(14336);
    assertThat(m.arch().beyondLlama()).isEmpty();
    assertThat(m.arch().numerics().ropeTheta()).isEqualTo(1_000_000.0);
    assertThat(m.arch().numerics().normEps()).isEqualTo(1e-5);
    // bias, attn_implementation and pretraining_tp are the family's own fields: no warning.
    assertThat(cfg.warnings()).isEmpty();
    assertThat(HfModelType.ALL.stream().map(HfModelType::name)).contains("internlm2");
  }

  @Test
  void attentionBiasesAreRefusedWhenSetOrLeftToTheClassDefault() {
    String base = "{\"model_type\": \"internlm2\", \"hidden_size\": 512, "
        + "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"intermediate_size\": 1024, "
        + "\"vocab_size\": 1000, \"max_position_embeddings\": 2048";
    assertThatThrownBy(() -> HfConfigReader.parse(base + ", \"bias\": true}", "c.json", "x"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("c.json: field 'bias' is true: biases on the fused");
    assertThatThrownBy(() -> HfConfigReader.parse(base + "}", "c.json", "x"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("absent (InternLM2Config defaults it to true)");
    // Without biases the small config is LLaMA's: 2 * (4*512^2 + 3*512*1024 + 2*512)
    // + 2*1000*512 + 512 = 2 * 2,622,464 + 1,024,000 + 512 = 6,269,440.
    assertThat(HfConfigReader.parse(base + ", \"bias\": false}", "c.json", "x")
        .parameterCount()).isEqualTo(6_269_440L);
  }
}
