package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.InputException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Named model presets. LLaMA 2 sizes are from Touvron et al. 2023 (Table 1 and the released
 * {@code config.json} files); their default workload is the example of the Alpa simulation
 * document: batch 8, sequence 1024, fp32 as in Alpa's prototype.
 */
public final class Presets {
  private static final Map<String, ModelSpec> PRESETS = new LinkedHashMap<>();

  static {
    put(new ModelSpec("llama2-7b", ModelSpec.Family.LLAMA, 32, 4096, 32, 32, 11008, 32000, 1024,
        8, DType.F32));
    put(new ModelSpec("llama2-13b", ModelSpec.Family.LLAMA, 40, 5120, 40, 40, 13824, 32000, 1024,
        8, DType.F32));
    put(new ModelSpec("llama2-70b", ModelSpec.Family.LLAMA, 80, 8192, 64, 8, 28672, 32000, 1024,
        8, DType.F32));
    put(new ModelSpec("alpa-mlp", ModelSpec.Family.ALPA_MLP, 2, 128, 1, 1, 128, 1, 1, 1024,
        DType.F32));
  }

  private Presets() {}

  private static void put(ModelSpec s) {
    PRESETS.put(s.name(), s);
  }

  /**
   * The preset names, in catalog order.
   *
   * @return the names
   */
  public static Iterable<String> names() {
    return PRESETS.keySet();
  }

  /**
   * Looks up a preset.
   *
   * @param name the preset name
   * @return its spec
   * @throws InputException naming the valid presets when the name is unknown
   */
  public static ModelSpec get(String name) {
    ModelSpec s = PRESETS.get(name);
    if (s == null) {
      throw new InputException("unknown model preset '" + name + "'; valid presets: "
          + String.join(", ", PRESETS.keySet()));
    }
    return s;
  }
}
