package io.meshplan.graph;

import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The layer of each instruction, read from the framework scope that a dump carries in {@code
 * metadata={op_name=...}} (see {@link Instruction#opName()}). Layer clustering uses it to group the
 * instructions of a model into its repeated blocks.
 *
 * <p>The scope is split into parts at {@code /} and {@code .}. A wrapped part such as {@code
 * jit(train_step)} or {@code transpose(jvp(Model))} stands for its innermost name ({@code
 * train_step}, {@code Model}), so that forward and backward ops of one layer agree. The first
 * (outermost) part that names a layer decides:
 *
 * <ul>
 *   <li>a stack word with an index: {@code layers_3}, {@code layer_3}, {@code h_3}, {@code
 *       DecoderLayer_3}, {@code TransformerBlock_3}, {@code blocks3};
 *   <li>a stack word followed by a numeric part: {@code blocks/3}, {@code h.3}, {@code
 *       model.layers.3}.
 * </ul>
 *
 * A stack word is {@code h}, or a word ending in {@code layer}, {@code layers}, {@code block} or
 * {@code blocks} (case-insensitive; {@code layer_norm} is not one). The key's stack is the path of
 * the parts before it, so {@code encoder/layers_3} and {@code decoder/layers_3} differ.
 */
public final class LayerScopes {
  private static final Set<String> NOISE = Set.of("checkpoint", "remat", "rematted_computation",
      "while", "body", "cond", "jit", "pjit", "jvp", "transpose", "vmap", "main");

  private final List<LayerKey> keys;
  private final List<LayerKey> layers;

  /**
   * Reads the layer of every instruction.
   *
   * @param graph the graph
   */
  public LayerScopes(Graph graph) {
    List<LayerKey> k = new ArrayList<>(graph.size());
    Set<LayerKey> distinct = new LinkedHashSet<>();
    for (Instruction ins : graph.instructions()) {
      LayerKey key = keyOf(ins.opName());
      k.add(key);
      if (key != null) {
        distinct.add(key);
      }
    }
    this.keys = Collections.unmodifiableList(k);
    this.layers = List.copyOf(distinct);
  }

  /**
   * The layer of an instruction.
   *
   * @param id the instruction id
   * @return its layer, or empty when its scope names none
   */
  public Optional<LayerKey> key(int id) {
    return Optional.ofNullable(keys.get(id));
  }

  /**
   * The distinct layers, in the order of their first instruction.
   *
   * @return the layers
   */
  public List<LayerKey> layers() {
    return layers;
  }

  /**
   * The layer named by one scope.
   *
   * @param opName a scope such as {@code jit(train_step)/transformer/layers_3/mlp/dot_general}
   * @return the layer, or {@code null} when the scope names none
   */
  public static LayerKey keyOf(String opName) {
    if (opName == null || opName.isEmpty()) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    for (String part : opName.split("[/.]")) {
      String p = innermost(part);
      if (!p.isEmpty()) {
        parts.add(p);
      }
    }
    List<String> path = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      String p = parts.get(i);
      int digits = p.length();
      while (digits > 0 && AsciiDigits.isDigit(p.charAt(digits - 1))) {
        digits--;
      }
      if (digits > 0 && digits < p.length() && digits >= p.length() - 9) {
        String word = p.substring(0, p.charAt(digits - 1) == '_' ? digits - 1 : digits);
        if (isStackWord(word)) {
          return key(path, word, p.substring(digits));
        }
      } else if (isStackWord(p) && i + 1 < parts.size() && isIndex(parts.get(i + 1))) {
        return key(path, p, parts.get(i + 1));
      }
      if (!NOISE.contains(p)) {
        path.add(p);
      }
    }
    return null;
  }

  private static LayerKey key(List<String> path, String word, String index) {
    String stack = path.isEmpty() ? word : String.join("/", path) + "/" + word;
    return new LayerKey(stack, AsciiDigits.parseInt(index));
  }

  private static boolean isIndex(String s) {
    if (s.isEmpty() || s.length() > 9) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (!AsciiDigits.isDigit(s.charAt(i)) || s.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private static boolean isStackWord(String word) {
    String w = word.toLowerCase(Locale.ROOT);
    return w.equals("h") || w.endsWith("layer") || w.endsWith("layers") || w.endsWith("block")
        || w.endsWith("blocks");
  }

  /** {@code transpose(jvp(Model))} -> {@code Model}; a plain part is returned as it is. */
  private static String innermost(String part) {
    int open = part.lastIndexOf('(');
    if (open < 0) {
      return part.replace(")", "").strip();
    }
    int close = part.indexOf(')', open);
    return (close < 0 ? part.substring(open + 1) : part.substring(open + 1, close)).strip();
  }
}
