package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The model-family registry is the one list of Hugging Face {@code model_type}s: the types the
 * reader takes, the types each command's help lists ({@link HfModelType#names}) and the families
 * with defaults and known fields are all its entries, each registered once.
 */
class HfRegistryTest {
  @Test
  void everyTypeIsRegisteredOnceAndTheHelpListsComeFromIt() {
    List<String> names = HfRegistry.ALL.stream().map(HfFamily::modelType).toList();
    assertThat(new HashSet<>(names)).hasSameSizeAs(names);
    assertThat(HfConfigReader.SUPPORTED).isEqualTo(names);
    assertThat(HfModelType.ALL.stream().map(HfModelType::name).toList()).isEqualTo(names);
    // plan, simulate, export and sweep take the LLaMA and GPT families (cli.ModelOptions
    // DECODERS), shard the LLaMA blocks only: both lists are drawn from the registry.
    Set<ModelSpec.Family> decoders = EnumSet.of(ModelSpec.Family.LLAMA, ModelSpec.Family.GPT);
    assertThat(HfModelType.names(decoders, false)).isEqualTo(names);
    assertThat(HfModelType.names(EnumSet.of(ModelSpec.Family.LLAMA), true))
        .isSubsetOf(names).contains("llama", "mistral", "phi3", "granite")
        .doesNotContain("qwen2", "gpt_neox", "deepseek_v3");
  }

  @Test
  void eachFamilyOwnsItsDefaultsKnownFieldsAndReader() {
    for (HfFamily f : HfRegistry.ALL) {
      assertThat(HfRegistry.find(f.modelType())).contains(f);
      assertThat(HfFamilies.defaults(f.modelType())).isEqualTo(f.defaults());
      assertThat(HfFamilies.KNOWN.get(f.modelType())).isEqualTo(f.known().orElse(null));
      // A family's known fields never restate the fields every family has.
      f.known().ifPresent(k -> assertThat(k).doesNotContainAnyElementsOf(
          Set.of("hidden_size", "num_hidden_layers", "vocab_size", "model_type")));
    }
    assertThat(HfRegistry.find("bloom")).isEmpty();
    assertThat(HfFamilies.defaults("bloom")).isEmpty();
  }

  @Test
  void torchtitanNamesAreTheModelsItsExportWrites() {
    // torchtitan main at b5bcd76 builds llama3, qwen3 and deepseek_v3 among the models under
    // torchtitan/models/ that meshplan's export writes (export.TorchtitanMain#family).
    for (HfFamily f : HfRegistry.ALL) {
      f.torchtitan().ifPresent(t -> assertThat(t).isIn("llama3", "qwen3", "deepseek_v3"));
    }
    assertThat(HfRegistry.find("llama").orElseThrow().torchtitan()).contains("llama3");
    assertThat(HfRegistry.find("qwen3_moe").orElseThrow().torchtitan()).contains("qwen3");
  }
}
