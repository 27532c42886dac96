package io.meshplan.export;

import io.meshplan.model.ModelSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Every torchtitan flavor meshplan writes, in one list: the model directory it belongs to under
 * {@code torchtitan/models/} (main at b5bcd76), its name there, its recipe in the model's {@code
 * config_registry.py}, and the test of a model's dimensions and blocks against it. The dimensions
 * themselves stay with each model's writer ({@link TorchtitanV022#FLAVORS} for llama3, {@link
 * TorchtitanQwen3Moe#FLAVORS}, {@link TorchtitanDeepseekV3}); a model is looked up here once, in
 * the order DeepSeek-V3, Qwen3 mixture-of-experts, llama3.
 */
final class TorchtitanFlavors {
  /**
   * One flavor.
   *
   * @param model the model directory, for example {@code llama3}
   * @param name the flavor's key, for example {@code 70B}
   * @param recipe its recipe function, for example {@code llama3_70b} (both Qwen3 flavors run
   *     the one Qwen3 mixture-of-experts recipe, {@link TorchtitanQwen3Moe#RECIPE})
   * @param matches whether a model has the flavor's dimensions and blocks exactly
   */
  record Flavor(String model, String name, String recipe, Predicate<ModelSpec> matches) {}

  /** The flavors, in lookup order. */
  static final List<Flavor> ALL = all();

  private TorchtitanFlavors() {}

  private static List<Flavor> all() {
    List<Flavor> out = new ArrayList<>();
    out.add(new Flavor("deepseek_v3", TorchtitanDeepseekV3.FLAVOR, TorchtitanDeepseekV3.RECIPE,
        TorchtitanDeepseekV3::matches));
    for (TorchtitanQwen3Moe.Flavor f : TorchtitanQwen3Moe.FLAVORS) {
      out.add(new Flavor("qwen3", f.name(), TorchtitanQwen3Moe.RECIPE, f::matches));
    }
    for (TorchtitanV022.Flavor f : TorchtitanV022.FLAVORS) {
      out.add(new Flavor("llama3", f.name(), TorchtitanMain.RECIPES.get(f.name()), f::matches));
    }
    return List.copyOf(out);
  }

  /**
   * The flavor with a model's dimensions and blocks.
   *
   * @param m the model
   * @return the first flavor that matches, empty when none does
   */
  static Optional<Flavor> of(ModelSpec m) {
    return ALL.stream().filter(f -> f.matches().test(m)).findFirst();
  }
}
