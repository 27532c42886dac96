package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Nemotron-H config.json whose {@code hybrid_override_pattern} holds a symbol it may not is
 * refused with the symbols Nemotron-H's pattern takes (M, *, - and E), not meshplan's own list,
 * whose S and G only the Jamba and Qwen3-Next readers build; S and G in a Nemotron-H pattern
 * are refused like any other stranger.
 */
class NemotronHPatternSymbolsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path FIXTURE = Path.of("core/src/test/resources/hf",
      "nemotron-h-8b-base-8k.json");
  private static final String THE_SYMBOLS = "; the symbols are M (Mamba-2), * (attention), - "
      + "(MLP) and E (mixture of experts)";

  @TempDir Path dir;

  /**
   * Seeded: a symbol at a random layer of the released pattern replaced by S, G, another
   * printable character or a control or format character, which the line names by code point.
   */
  @Test
  void aStrangeSymbolIsRefusedWithNemotronHsOwnSymbols() throws Exception {
    ObjectNode base = (ObjectNode) JSON.readTree(Files.readString(FIXTURE));
    String pattern = base.get("hybrid_override_pattern").asText();
    SplittableRandom r = new SplittableRandom(4);
    String strangers = "SGXm+0.A_e";
    for (int n = 0; n < 40; n++) {
      int at = r.nextInt(pattern.length());
      char c = n % 3 == 2 ? "\n\t\u0000\u001b\u202e\u2028\u0085".charAt(r.nextInt(7))
          : strangers.charAt(r.nextInt(strangers.length()));
      ObjectNode cfg = base.deepCopy();
      cfg.put("hybrid_override_pattern", pattern.substring(0, at) + c
          + pattern.substring(at + 1));
      Path file = dir.resolve("config.json");
      Files.writeString(file, cfg.toString());
      String shown = c > ' ' && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
      assertThatThrownBy(() -> HfConfigReader.read(file)).isInstanceOf(InputException.class)
          .hasMessageEndingWith("hybrid_override_pattern's layer " + at + " is " + shown
              + THE_SYMBOLS)
          .hasMessageStartingWith(file.toString())
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("Mamba-1", "Gated DeltaNet"));
    }
  }

  /**
   * A pattern of the wrong type is refused naming the file once; a character outside the Basic
   * Multilingual Plane is named whole and counts as one layer.
   */
  @Test
  void aMistypedOrAstralPatternIsNamedOnce() throws Exception {
    ObjectNode base = (ObjectNode) JSON.readTree(Files.readString(FIXTURE));
    String pattern = base.get("hybrid_override_pattern").asText();
    Path file = dir.resolve("config.json");
    ObjectNode number = base.deepCopy();
    number.put("hybrid_override_pattern", 52);
    Files.writeString(file, number.toString());
    assertThatThrownBy(() -> HfConfigReader.read(file)).isInstanceOf(InputException.class)
        .hasMessage(file + ": field 'hybrid_override_pattern' must be a string, got 52");
    // U+1D544 in place of the first layer: the pattern still names the model's 52 layers.
    ObjectNode astral = base.deepCopy();
    astral.put("hybrid_override_pattern", "\uD835\uDD44" + pattern.substring(1));
    Files.writeString(file, astral.toString());
    assertThatThrownBy(() -> HfConfigReader.read(file)).isInstanceOf(InputException.class)
        .hasMessageEndingWith("hybrid_override_pattern's layer 0 is U+1D544" + THE_SYMBOLS);
  }

  /** The released pattern reads, and its symbols are the ones the refusal names. */
  @Test
  void theReleasedPatternUsesOnlyThoseSymbols() throws Exception {
    String pattern = JSON.readTree(Files.readString(FIXTURE)).get("hybrid_override_pattern")
        .asText();
    assertThat(pattern.chars().allMatch(ch -> HybridPattern.NEMOTRON_H_SYMBOLS.indexOf(ch) >= 0))
        .isTrue();
    assertThat(HfConfigReader.read(FIXTURE).arch().hybrid().symbols()).isEqualTo(pattern);
  }
}
