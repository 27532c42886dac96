package io.meshplan.export;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A torchtitan main-branch config file as meshplan writes it, read back: the recipe it starts
 * from, the flavor it builds, whether it converts Linear layers to float8, each {@code config.X =
 * literal} assignment, and {@code module_fqns_per_model_part} with its {@code _layers(a, b)}
 * ranges expanded. Tests (conformance and round trips) read the file this way instead of
 * trusting the writer's own records.
 *
 * @param recipe the recipe function called, for example {@code llama3_8b}
 * @param flavor the flavor given to {@code model_registry}
 * @param float8 whether a {@code Float8LinearConverter} is in the model spec
 * @param fields every assignment but the model parts, by dotted name, as written
 * @param parts the model parts, each module name in order; empty when none is written
 */
public record TorchtitanPythonFile(String recipe, String flavor, boolean float8,
    Map<String, String> fields, List<List<String>> parts) {
  private static final Pattern RECIPE = Pattern.compile("(?m)^    config = (\\w+)\\(\\)$");
  private static final Pattern FLAVOR = Pattern.compile("model_registry\\(\\s*\"([\\w.-]+)\"");
  private static final Pattern FIELD = Pattern.compile("(?m)^    config\\.([\\w.]+) = (.+)$");
  private static final Pattern NAME = Pattern.compile("\"([\\w.]+)\"|_layers\\((\\d+), (\\d+)\\)");

  /**
   * Reads a file.
   *
   * @param text the file
   * @return what it states
   */
  public static TorchtitanPythonFile parse(String text) {
    Matcher r = RECIPE.matcher(text);
    Matcher f = FLAVOR.matcher(text);
    if (!r.find() || !f.find()) {
      throw new IllegalArgumentException("no recipe or flavor in:\n" + text);
    }
    Map<String, String> fields = new LinkedHashMap<>();
    Matcher m = FIELD.matcher(text);
    while (m.find()) {
      fields.put(m.group(1), m.group(2));
    }
    List<List<String>> parts = new ArrayList<>();
    String open = "    config.parallelism.module_fqns_per_model_part = [\n";
    int at = text.indexOf(open);
    if (at >= 0) {
      String body = text.substring(at + open.length(), text.indexOf("\n    ]\n", at));
      for (String line : body.split("\n")) {
        List<String> part = new ArrayList<>();
        Matcher n = NAME.matcher(line);
        while (n.find()) {
          if (n.group(1) != null) {
            part.add(n.group(1));
          } else {
            for (int i = Integer.parseInt(n.group(2)); i < Integer.parseInt(n.group(3)); i++) {
              part.add("layers." + i);
            }
          }
        }
        parts.add(part);
      }
    }
    return new TorchtitanPythonFile(r.group(1), f.group(1),
        text.contains("Float8LinearConverter.Config("), fields, parts);
  }

  /**
   * An integer field.
   *
   * @param name the dotted name, for example {@code parallelism.tensor_parallel_degree}
   * @return its value
   */
  public long integer(String name) {
    return Long.parseLong(require(name));
  }

  /**
   * A field's literal with the quotes of a string removed.
   *
   * @param name the dotted name
   * @return the value, for example {@code bfloat16}, {@code True} or {@code FullAC.Config()}
   */
  public String text(String name) {
    String v = require(name);
    return v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
  }

  /**
   * The transformer layers ({@code layers.N}) of one model part.
   *
   * @param k the part
   * @return how many
   */
  public int layersOf(int k) {
    return (int) parts.get(k).stream().filter(s -> s.startsWith("layers.")).count();
  }

  private String require(String name) {
    String v = fields.get(name);
    if (v == null) {
      throw new IllegalArgumentException("config." + name + " is not set");
    }
    return v;
  }
}
