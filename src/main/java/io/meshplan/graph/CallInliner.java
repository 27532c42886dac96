package io.meshplan.graph;

import java.util.ArrayList;
import java.util.List;

/**
 * Inlines the computations that {@code fusion} and {@code call} instructions of an entry
 * computation call, so that the planner sees the operations inside them instead of one opaque op.
 * An optimized XLA dump ({@code compile().as_text()}) is mostly fusions; without this they would all
 * be planned replicated.
 *
 * <p>A called computation's parameter {@code k} becomes the call's operand {@code k}; its other
 * instructions are copied in order under the name {@code <call>/<name>}; the call itself becomes its
 * computation's root. Nested calls are inlined up to {@link #MAX_DEPTH} levels. Loops ({@code
 * while}) and {@code conditional} stay as they are, since their bodies run a data-dependent number
 * of times.
 */
public final class CallInliner {
  /** How deep nested fusions and calls are inlined. */
  public static final int MAX_DEPTH = 8;

  private CallInliner() {}

  /**
   * The inlined entry computation.
   *
   * @param graph the entry graph, with all calls inlined
   * @param newIdOf for each instruction of the original entry, the instruction that now carries its
   *     value (for an inlined call, its computation's root)
   */
  public record Result(Graph graph, int[] newIdOf) {
    /** Copies the map. */
    public Result {
      newIdOf = newIdOf.clone();
    }

    @Override
    public int[] newIdOf() {
      return newIdOf.clone();
    }

    /**
     * Where the value of an original instruction now is.
     *
     * @param originalId an instruction id of the original entry
     * @return its id in the inlined graph
     */
    public int map(int originalId) {
      return newIdOf[originalId];
    }
  }

  /**
   * Inlines the entry computation of a module.
   *
   * @param module the module
   * @return the inlined graph and the id map
   */
  public static Result inline(HloModule module) {
    Graph entry = module.entry();
    List<Instruction> out = new ArrayList<>();
    int[] map = emit(module, entry, null, "", out, 0);
    int root = map[entry.root().id()];
    if (root != out.size() - 1) {
      // The entry's value comes from an earlier instruction (a call that returns a parameter):
      // copy it so that the root stays last.
      Instruction r = out.get(root);
      int id = out.size();
      out.add(new Instruction(id, entry.root().name() + "/copy", Opcode.COPY, r.shape(),
          List.of(root), OpAttrs.NONE, r.opName(), java.util.Map.of()));
      map[entry.root().id()] = id;
    }
    List<AliasPair> aliases = new ArrayList<>();
    for (AliasPair a : entry.aliases()) {
      aliases.add(new AliasPair(map[a.parameter()], map[a.output()]));
    }
    return new Result(new Graph(entry.name(), out, aliases), map);
  }

  /**
   * Whether a module has anything to inline.
   *
   * @param module the module
   * @return true when its entry computation calls a fusion or call computation
   */
  public static boolean hasCalls(HloModule module) {
    for (Instruction ins : module.entry().instructions()) {
      if (callee(module, ins) != null) {
        return true;
      }
    }
    return false;
  }

  private static Graph callee(HloModule module, Instruction ins) {
    if (ins.opcode() != Opcode.FUSION && ins.opcode() != Opcode.CALL) {
      return null;
    }
    String target = ins.rawAttributes().get(ins.opcode() == Opcode.FUSION ? "calls" : "to_apply");
    if (target == null) {
      return null;
    }
    String name = target.trim();
    if (name.startsWith("%")) {
      name = name.substring(1);
    }
    HloComputation c = module.computation(name);
    return c == null ? null : c.graph();
  }

  private static int[] emit(HloModule module, Graph g, int[] params, String prefix,
      List<Instruction> out, int depth) {
    int[] map = new int[g.size()];
    for (Instruction ins : g.instructions()) {
      if (params != null && ins.opcode() == Opcode.PARAMETER
          && ins.attrs() instanceof OpAttrs.Index idx && idx.index() < params.length) {
        map[ins.id()] = params[idx.index()];
        continue;
      }
      List<Integer> ops = new ArrayList<>(ins.operands().size());
      for (int op : ins.operands()) {
        ops.add(map[op]);
      }
      Graph called = depth < MAX_DEPTH ? callee(module, ins) : null;
      if (called != null && called.root().shape().equals(ins.shape())) {
        int[] args = ops.stream().mapToInt(Integer::intValue).toArray();
        int[] inner = emit(module, called, args, prefix + ins.name() + "/", out, depth + 1);
        map[ins.id()] = inner[called.root().id()];
        continue;
      }
      int id = out.size();
      out.add(new Instruction(id, prefix + ins.name(), ins.opcode(), ins.shape(), ops,
          ins.attrs(), ins.opName(), ins.rawAttributes()));
      map[ins.id()] = id;
    }
    return map;
  }
}
