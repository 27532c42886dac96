package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.util.InputException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The default sequence of a config.json: the context before a RoPE extension where the config
 * states one, else {@code max_position_embeddings}, at most 8,192 tokens; a note whenever it is
 * below {@code max_position_embeddings}.
 */
class HfSequenceTest {
  private static HfSequence of(String json, int max) throws Exception {
    return HfSequence.of(new ObjectMapper().readTree(json), "c.json", max);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      // LLaMA-3-8B: 8192 positions, no scaling: its own context, no note.
      "{\"rope_scaling\": null}                                           | 8192   | 8192 | ",
      // OPT, GPT-NeoX, Llama 2: short contexts are kept as they are.
      "{}                                                                 | 2048   | 2048 | ",
      // Llama 3.1: the llama3 scaling's original 8192 of 131072.
      "{\"rope_scaling\": {\"rope_type\": \"llama3\", \"original_max_position_embeddings\": 8192}}"
          + " | 131072 | 8192 | rope_scaling.original_max_position_embeddings 8192, the context"
          + " before max_position_embeddings 131072",
      // DeepSeek-V3 and gpt-oss: YaRN from 4096.
      "{\"rope_scaling\": {\"type\": \"yarn\", \"original_max_position_embeddings\": 4096}}"
          + " | 163840 | 4096 | rope_scaling.original_max_position_embeddings 4096",
      // Phi-3's LongRoPE states it at the top level.
      "{\"original_max_position_embeddings\": 4096}                       | 131072 | 4096 |"
          + " original_max_position_embeddings 4096",
      // Qwen3: 40960 positions, no original: capped.
      "{}                                                                 | 40960  | 8192 |"
          + " max_position_embeddings 40960, capped at 8192",
      // An original above the cap is capped too.
      "{\"rope_scaling\": {\"original_max_position_embeddings\": 32768}}  | 65536  | 8192 |"
          + " rope_scaling.original_max_position_embeddings 32768, the context before"
          + " max_position_embeddings 65536, capped at 8192",
      // Linear scaling without an original: the positions, capped (Gemma 3).
      "{\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0}}   | 131072 | 8192 |"
          + " max_position_embeddings 131072, capped at 8192",
      // An original at or above the positions says nothing shorter.
      "{\"rope_scaling\": {\"original_max_position_embeddings\": 4096}}   | 4096   | 4096 | "})
  void theDefaultSequence(String json, int max, int tokens, String note) throws Exception {
    HfSequence s = of(json, max);
    assertThat(s.tokens()).isEqualTo(tokens);
    if (note == null) {
      assertThat(s.note()).isEmpty();
    } else {
      assertThat(s.note()).hasValueSatisfying(n -> assertThat(n)
          .startsWith("c.json: planning sequences of " + tokens + " tokens (" + note)
          .endsWith("); give --seq for another length").doesNotContain("\n"));
    }
  }

  @Test
  void aBadOriginalIsRefusedNamingTheField() {
    for (String bad : new String[] {"\"x\"", "-1", "0", "1.5", "4294967296"}) {
      assertThatThrownBy(() -> of("{\"rope_scaling\": {\"original_max_position_embeddings\": "
          + bad + "}}", 8192)).as(bad).isInstanceOf(InputException.class)
          .hasMessageStartingWith("c.json: field 'rope_scaling.original_max_position_embeddings'"
              + " must be a positive integer");
    }
    assertThat(new HfSequence(1, null).note()).isEqualTo(Optional.empty());
    assertThat(HfSequence.CAP).isEqualTo(8192);
  }
}
