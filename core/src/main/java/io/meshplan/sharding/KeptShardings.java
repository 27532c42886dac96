package io.meshplan.sharding;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.TensorShape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;

/**
 * The shardings a module already carries ({@code sharding={...}}), read as layouts on a mesh so the
 * planner can keep them fixed.
 *
 * @param layouts the layout of each kept instruction, by id in the planned graph
 * @param warnings one line per sharding that is not a layout of the mesh (for example {@code
 *     {manual}} or a tuple sharding), which is therefore not kept
 */
public record KeptShardings(Map<Integer, ShardingSpec> layouts, List<String> warnings) {
  /** Copies the collections. */
  public KeptShardings {
    layouts = java.util.Collections.unmodifiableMap(new TreeMap<>(layouts));
    warnings = List.copyOf(warnings);
  }

  /**
   * Reads the shardings of a module's entry computation.
   *
   * @param entry the entry computation as written
   * @param plannedId where each entry instruction's value is in the planned graph (after inlining)
   * @param mesh the mesh
   * @return the kept layouts and the warnings
   */
  public static KeptShardings read(Graph entry, IntUnaryOperator plannedId, LogicalMesh mesh) {
    Map<Integer, ShardingSpec> layouts = new TreeMap<>();
    List<String> warnings = new ArrayList<>();
    for (Instruction ins : entry.instructions()) {
      String text = ins.rawAttributes().get("sharding");
      if (text == null) {
        continue;
      }
      if (!(ins.shape() instanceof TensorShape ts)) {
        // A tuple's value is its elements, planned where they are produced; a tuple sharding of
        // replicated elements asks for nothing beyond that.
        if (!onlyReplicated(text)) {
          warnings.add(ins.name() + ": tuple sharding " + text + " is not kept (the elements are"
              + " planned where they are produced; put shardings on those instructions)");
        }
        continue;
      }
      ShardingSpec s = HloShardingText.parse(text, ts, mesh);
      if (s == null) {
        warnings.add(ins.name() + ": sharding " + text + " is not a layout of mesh " + mesh
            + "; not kept");
      } else {
        layouts.put(plannedId.applyAsInt(ins.id()), s);
      }
    }
    return new KeptShardings(layouts, warnings);
  }

  /** Whether sharding text is {replicated} or a tuple of only {replicated} elements. */
  static boolean onlyReplicated(String text) {
    String rest = text.replaceAll("\\s+", "").replace("{replicated}", "");
    return rest.chars().allMatch(c -> c == '{' || c == '}' || c == ',');
  }
}
