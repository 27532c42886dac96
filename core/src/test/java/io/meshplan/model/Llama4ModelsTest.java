package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Llama 4 Scout and Maverick: their parameter counts, layer pattern and attention work. */
class Llama4ModelsTest {
  private static final Path HF = Path.of("core/src/test/resources/hf");

  /**
   * The text models' parameters, as sum(p.numel()) over their modules. Per block: Q and O 5120 x
   * 5120 = 26,214,400 each, K and V 5120 x 1024 = 5,242,880 each (attention 62,914,560), two
   * RMSNorms of 5120 (10,240; the L2 q/k norm has no weight). Scout, 48 blocks of 16 experts:
   * router 5120 x 16 = 81,920, experts 16 x 3 x 5120 x 8192 = 2,013,265,920, shared expert
   * 125,829,120; a block 2,202,101,760, x 48 = 105,700,884,480. Maverick: 24 dense blocks of
   * 62,924,800 + 3 x 5120 x 16384 = 314,583,040 (7,549,992,960) and 24 expert blocks of
   * 62,924,800 + 5120 x 128 + 128 x 125,829,120 + 125,829,120 = 16,295,536,640
   * (391,092,879,360). Both: embedding and LM head 202048 x 5120 = 1,034,485,760 each and the
   * final norm 5120: Scout 107,769,861,120, Maverick 400,711,848,960 (Meta's "109B" and "400B"
   * count the vision encoder too). Active: the attention, norms, router, shared expert and one
   * expert per block, 17,172,894,720 and 17,184,691,200 (Meta: 17B active).
   */
  @Test
  void exactParameterCounts() {
    ModelSpec scout = Presets.get("llama4-scout");
    ModelSpec maverick = Presets.get("llama4-maverick");
    assertThat(scout.blocksParameterCount()).isEqualTo(105_700_884_480L);
    assertThat(scout.parameterCount()).isEqualTo(107_769_861_120L);
    assertThat(maverick.blocksParameterCount()).isEqualTo(398_642_872_320L);
    assertThat(maverick.parameterCount()).isEqualTo(400_711_848_960L);
    assertThat(scout.activeParameterCount()).isEqualTo(17_172_894_720L);
    assertThat(maverick.activeParameterCount()).isEqualTo(17_184_691_200L);
    // Maverick's experts on blocks 1, 3, ..., 47; Scout's on every block.
    assertThat(maverick.arch().moe().denseLayer(0)).isTrue();
    assertThat(maverick.arch().moe().denseLayer(1)).isFalse();
    assertThat(maverick.denseBlocks()).isEqualTo(24);
    assertThat(scout.denseBlocks()).isZero();
  }

  @Test
  void theirConfigsAreThePresets() {
    for (String[] c : new String[][] {{"llama-4-scout-17b-16e.json", "llama4-scout"},
        {"llama-4-maverick-17b-128e.json", "llama4-maverick"}}) {
      ModelSpec p = Presets.get(c[1]);
      ModelSpec read = HfConfigReader.read(HF.resolve(c[0]));
      assertThat(new ModelSpec(c[1], read.family(), read.layers(), read.hidden(), read.heads(),
          read.kvHeads(), read.ffn(), read.vocab(), read.seq(), read.batch(), read.dtype(),
          read.arch())).as(c[0]).isEqualTo(p);
    }
  }

  /**
   * Chunked attention on blocks 0, 1, 2, 4, 5, 6, ... and global attention on blocks 3, 7, 11,
   * ... (the NoPE blocks). At 32,768 tokens a chunked block computes 4 chunks of 8192^2 / 2
   * pairs, a quarter of the whole sequence's 32768^2 / 2; the 36 chunked and 12 global blocks
   * average (36 x 0.25 + 12 x 1) / 48 = 0.4375. At 8,192 tokens a chunk is the sequence: 1.
   */
  @Test
  void chunkedBlocksComputeTheirChunksSquares() {
    ModelSpec scout = Presets.get("llama4-scout");
    AttentionShape at = scout.arch().attn();
    assertThat(at.windowed(0)).isTrue();
    assertThat(at.windowed(3)).isFalse();
    assertThat(at.windowed(7)).isFalse();
    assertThat(AttentionShape.chunkedPairs(32768, 8192)).isEqualTo(4 * 8192.0 * 8192 / 2);
    // A last partial chunk: 10,000 tokens are 8,192 and 1,808.
    assertThat(AttentionShape.chunkedPairs(10_000, 8192))
        .isEqualTo(8192.0 * 8192 / 2 + 1808.0 * 1808 / 2);
    assertThat(DecoderForward.windowWork(scout.withSequence(32768), 32768)).isEqualTo(0.4375);
    assertThat(DecoderForward.windowWork(scout, 8192)).isEqualTo(1.0);
    // Model FLOPs follow: the chunked blocks' score FLOPs are a quarter of a global block's.
    ModelSpec longer = scout.withSequence(32768);
    assertThat(ModelFlops.causalScoreFlops(longer, 0, 32768))
        .isEqualTo(ModelFlops.causalScoreFlops(longer, 3, 32768) / 4);
    // Packed documents inside chunks are not modelled: refused, not mispriced.
    assertThatThrownBy(() -> scout.withPacking(Packing.meanLength(1024)))
        .hasMessageContaining("chunked attention");
  }

  @Test
  void theNoRopeListGivesThePatternAndAnIrregularOneIsRefused() throws IOException {
    String text = Files.readString(HF.resolve("llama-4-scout-17b-16e.json"));
    List<String> every4 = new ArrayList<>();
    List<String> irregular = new ArrayList<>();
    for (int i = 0; i < 48; i++) {
      every4.add((i + 1) % 4 == 0 ? "0" : "1");
      irregular.add(i == 5 || i == 30 ? "0" : "1");
    }
    ModelSpec listed = HfConfigReader.parseConfig(text.replace("\"no_rope_layers\": []",
        "\"no_rope_layers\": [" + String.join(", ", every4) + "]"), "scout.json", "scout")
        .spec();
    assertThat(listed.arch().attn()).isEqualTo(Presets.get("llama4-scout").arch().attn());
    assertThatThrownBy(() -> HfConfigReader.parseConfig(text.replace("\"no_rope_layers\": []",
        "\"no_rope_layers\": [" + String.join(", ", irregular) + "]"), "scout.json", "scout"))
        .isInstanceOf(InputException.class).hasMessageContaining("no_rope_layers")
        .hasMessageNotContaining("\n");
    // 2^32 + 1 and 2^32 are not 1 and 0, which a read into an int would wrap them to.
    for (String wrap : new String[] {"4294967297", "4294967296"}) {
      List<String> wrapped = new ArrayList<>(every4);
      wrapped.set(3, wrap);
      assertThatThrownBy(() -> HfConfigReader.parseConfig(text.replace("\"no_rope_layers\": []",
          "\"no_rope_layers\": [" + String.join(", ", wrapped) + "]"), "scout.json", "scout"))
          .as(wrap).isInstanceOf(InputException.class)
          .hasMessageContaining("no_rope_layers[3] is " + wrap);
    }
    // A layer count past the limit is refused before any per-layer list is made; one under it
    // reads (its dense-block list checked once per entry).
    assertThatThrownBy(() -> HfConfigReader.parseConfig(text.replace("\"num_hidden_layers\": 48",
        "\"num_hidden_layers\": 200000"), "scout.json", "scout"))
        .isInstanceOf(InputException.class)
        .hasMessage("scout.json: field 'num_hidden_layers' must be at most 131072, got 200000");
    String maverick = Files.readString(HF.resolve("llama-4-maverick-17b-128e.json"));
    ModelSpec deep = HfConfigReader.parseConfig(maverick.replace("\"num_hidden_layers\": 48",
        "\"num_hidden_layers\": 100000"), "m.json", "m").spec();
    assertThat(deep.denseBlocks()).isEqualTo(50_000);
    // Without a chunk size every block attends globally.
    ModelSpec global = HfConfigReader.parseConfig(text.replace("\"attention_chunk_size\": 8192",
        "\"attention_chunk_size\": null"), "scout.json", "scout").spec();
    assertThat(global.arch().attn().window()).isZero();
    assertThat(global.arch().attn().chunked()).isFalse();
  }
}
