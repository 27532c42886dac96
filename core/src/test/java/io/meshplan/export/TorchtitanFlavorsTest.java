package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.model.Presets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * torchtitan's flavors are looked up in one list ({@link TorchtitanFlavors}): each flavor once,
 * and the presets of torchtitan's published models find their model, flavor and recipe there.
 */
class TorchtitanFlavorsTest {
  @Test
  void eachFlavorIsListedOnceAndPresetsFindTheirs() {
    List<String> keys = TorchtitanFlavors.ALL.stream().map(f -> f.model() + "/" + f.name())
        .toList();
    assertThat(keys).containsExactly("deepseek_v3/671B", "qwen3/30B-A3B", "qwen3/235B-A22B",
        "llama3/8B", "llama3/70B", "llama3/405B");
    assertThat(TorchtitanFlavors.ALL).allSatisfy(f -> assertThat(f.recipe()).isNotNull());
    var llama = Presets.get("llama3.1-70b");
    assertThat(TorchtitanMain.family(llama)).isEqualTo("llama3");
    assertThat(TorchtitanMain.flavorName(llama)).isEqualTo("70B");
    assertThat(TorchtitanMain.recipe(llama)).isEqualTo("llama3_70b");
    var qwen = Presets.get("qwen3-30b-a3b");
    assertThat(TorchtitanMain.family(qwen)).isEqualTo("qwen3");
    assertThat(TorchtitanMain.flavorName(qwen)).isEqualTo("30B-A3B");
    var deepseek = Presets.get("deepseek-v3");
    assertThat(TorchtitanMain.family(deepseek)).isEqualTo("deepseek_v3");
    assertThat(TorchtitanMain.flavorName(deepseek)).isEqualTo("671B");
    assertThat(TorchtitanFlavors.of(Presets.get("llama2-7b"))).isEmpty();
  }
}
