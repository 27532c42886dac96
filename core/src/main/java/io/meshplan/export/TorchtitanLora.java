package io.meshplan.export;

import io.meshplan.model.Lora;
import io.meshplan.model.ModelSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * LoRA adapters ({@link Lora}) as torchtitan main writes them: {@code LoRAConverter.Config(rank,
 * alpha, target_modules)} in the model's {@code converters}, after any quantization converter
 * ({@code components/lora.py} and {@code models/utils.py} {@code validate_converter_order} at
 * {@value TorchtitanMain#VERSION}). The converter adapts each {@code Linear.Config} whose last
 * path segment is a target, freezes every other parameter, and gives an adapted linear one
 * {@code lora_a} and one {@code lora_b}. The llama3 flavors build their query, key and value
 * projections as one fused linear, {@code wqkv} ({@code models/llama3/__init__.py}, {@code
 * fuse_qkv=True}; {@code models/common/attention.py}, {@code FusedQKVLinear}), and the MLP's
 * {@code w1}, {@code w2}, {@code w3} as three: so torchtitan adapts the query, key and value
 * projections together, with one adapter (meshplan's {@code linear_qkv}), and gate and up each on
 * their own.
 */
final class TorchtitanLora {

  /** meshplan's adapters by projections, to torchtitan's target names. */
  private static final Map<List<String>, String> TARGETS = Map.of(
      List.of("wq", "wk", "wv"), "wqkv", List.of("wo"), "wo", List.of("w1"), "w1",
      List.of("w3"), "w3", List.of("w2"), "w2");

  private TorchtitanLora() {}

  /**
   * Why torchtitan cannot train a model's adapters as they are.
   *
   * @param m the model
   * @return the reason, or empty when it can (or the model has no adapters)
   */
  static Optional<String> missing(ModelSpec m) {
    for (Lora.Adapter a : m.lora().adapters()) {
      if (!TARGETS.containsKey(a.projections())) {
        return Optional.of(a.projections().contains("w1") || a.projections().contains("w3")
            ? "torchtitan's w1 and w3 are separate linear layers: it adapts gate_proj and "
            + "up_proj each on its own, not " + a.name() + " (one adapter over both)"
            : "torchtitan's llama3 flavors fuse the query, key and value projections into one "
            + "linear, wqkv (models/llama3/__init__.py, fuse_qkv=True): LoRA adapts them "
            + "together (--lora-targets linear_qkv), not " + a.name() + " alone");
      }
    }
    return Optional.empty();
  }

  /**
   * The model with its adapters in torchtitan's form: any of the query, key and value
   * projections adapted becomes one fused adapter over the three, and a fused gate/up adapter
   * two adapters.
   *
   * @param m the model
   * @return the model, itself when its adapters are already torchtitan's
   */
  static ModelSpec nearest(ModelSpec m) {
    if (missing(m).isEmpty()) {
      return m;
    }
    Map<String, Lora.Adapter> out = new LinkedHashMap<>();
    for (Lora.Adapter a : m.lora().adapters()) {
      for (String p : a.projections()) {
        if (p.equals("wq") || p.equals("wk") || p.equals("wv")) {
          out.putIfAbsent("wqkv", new Lora.Adapter("linear_qkv", List.of("wq", "wk", "wv")));
        } else {
          String name = switch (p) {
            case "wo" -> "o_proj";
            case "w1" -> "gate_proj";
            case "w3" -> "up_proj";
            default -> "down_proj";
          };
          out.putIfAbsent(p, new Lora.Adapter(name, List.of(p)));
        }
      }
    }
    Lora l = m.lora();
    return m.withLora(new Lora(l.rank(), l.alpha(), new ArrayList<>(out.values())));
  }

  /**
   * The converter's Python text, one item of a {@code converters=[...]} list, indented for
   * {@link TorchtitanPython}.
   *
   * @param m a model whose adapters are torchtitan's ({@link #missing} empty)
   * @return the text, ending in a newline
   */
  static String converter(ModelSpec m) {
    Lora l = m.lora();
    List<String> targets = new ArrayList<>();
    for (Lora.Adapter a : l.adapters()) {
      targets.add("\"" + TARGETS.get(a.projections()) + "\"");
    }
    return "            LoRAConverter.Config(\n"
        + "                rank=" + l.rank() + ",\n"
        + "                alpha=" + python(l.alpha()) + ",\n"
        + "                target_modules=[" + String.join(", ", targets) + "],\n"
        + "            ),\n";
  }

  /** A Python float literal: round-trips the double. */
  private static String python(double v) {
    return Double.toString(v);
  }
}
