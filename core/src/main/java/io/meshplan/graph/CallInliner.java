package io.meshplan.graph;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
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
 * computation's root. Nested calls are inlined up to {@link #MAX_DEPTH} levels.
 *
 * <p>A {@code while} loop whose state is built by a {@code tuple} and whose body returns a {@code
 * tuple} (a {@code jax.lax.scan} over layers, for example) has its body inlined once, standing for
 * every iteration: the body's state elements become the initial tuple's elements, the loop's value
 * becomes the body's result, and each loop-carried element and its next value are paired as an
 * alias, since they share a buffer and must keep one layout across iterations. When XLA knows the
 * trip count ({@code backend_config} {@code known_trip_count}), the body's instructions record it
 * under {@link #REPEAT_KEY} so that their costs count every iteration. {@code conditional} stays
 * as it is.
 */
public final class CallInliner {
  /** How deep nested fusions and calls are inlined. */
  public static final int MAX_DEPTH = 8;

  /**
   * The raw-attribute key under which an instruction inlined from a loop body records how many
   * times it runs (XLA's {@code known_trip_count}, times that of enclosing loops). It is not a
   * valid HLO attribute name, so it cannot clash with one.
   */
  public static final String REPEAT_KEY = "$repeat";

  private static final java.util.regex.Pattern TRIP_COUNT = java.util.regex.Pattern.compile(
      "\"known_trip_count\"\\s*:\\s*\\{\\s*\"n\"\\s*:\\s*\"?([^\",}\\s]*)");

  /**
   * The most iterations one loop's {@code known_trip_count} may state: 2^20. A training step's
   * loops run over layers or microbatches, hundreds to thousands of times; a count past this is a
   * corrupt module, which would multiply the body's cost past any step.
   */
  public static final long MAX_TRIP_COUNT = 1L << 20;

  /** The most times an instruction may run per step, nested loops multiplied: 2^31 - 1. */
  public static final long MAX_REPEAT = Integer.MAX_VALUE;

  /**
   * How many times an instruction runs per step.
   *
   * @param ins an instruction of an inlined graph
   * @return its repeat count, 1 outside loops
   */
  public static long repeat(Instruction ins) {
    String r = ins.rawAttributes().get(REPEAT_KEY);
    return r == null ? 1 : AsciiDigits.parseLong(r);
  }

  private CallInliner() {}

  /**
   * How many times a {@code while} loop's body runs per step: the loop's {@code known_trip_count}
   * (at least once; a loop without one counts once) times the enclosing loops' count.
   *
   * @throws InputException when the count is not a whole number from 0 to {@link
   *     #MAX_TRIP_COUNT}, is stated twice, or the nested product passes {@link #MAX_REPEAT}
   */
  private static long tripCount(Instruction loop, long repeat) {
    java.util.regex.Matcher tc = TRIP_COUNT.matcher(
        loop.rawAttributes().getOrDefault("backend_config", ""));
    if (!tc.find()) {
      return repeat;
    }
    String n = tc.group(1);
    if (tc.find()) {
      throw new InputException("while " + loop.name() + ": its backend_config states "
          + "known_trip_count twice");
    }
    long count;
    try {
      count = AsciiDigits.isWhole(n) && !n.startsWith("-") && !n.startsWith("+")
          ? AsciiDigits.parseLong(n) : -1;
    } catch (NumberFormatException e) {
      count = -1;
    }
    if (count < 0 || count > MAX_TRIP_COUNT) {
      throw new InputException("while " + loop.name() + ": known_trip_count '"
          + io.meshplan.util.TerminalText.escape(n) + "' is not a whole number from 0 to "
          + String.format(java.util.Locale.ROOT, "%,d", MAX_TRIP_COUNT));
    }
    long times = repeat * Math.max(1L, count);
    if (times > MAX_REPEAT) {
      throw new InputException("while " + loop.name() + ": its body would run " + times
          + " times a step with the loops around it, more than "
          + String.format(java.util.Locale.ROOT, "%,d", MAX_REPEAT));
    }
    return times;
  }

  /**
   * The inlined entry computation.
   *
   * @param graph the entry graph, with all calls inlined
   * @param newIdOf for each instruction of the original entry, the instruction that now carries its
   *     value (for an inlined call, its computation's root)
   * @param cut the calls nested past {@link #MAX_DEPTH}, left one instruction each
   */
  public record Result(Graph graph, int[] newIdOf, int cut) {
    /** Copies the map. */
    public Result {
      newIdOf = newIdOf.clone();
    }

    /**
     * The warning for calls nested past {@link #MAX_DEPTH}, which stay one opaque instruction
     * each, their computations not costed; empty when none is.
     *
     * @return the warning's text
     */
    public java.util.Optional<String> depthWarning() {
      if (cut == 0) {
        return java.util.Optional.empty();
      }
      return java.util.Optional.of(cut == 1
          ? "1 call nested more than " + MAX_DEPTH + " levels deep stays one instruction: the "
              + "computation it calls is not costed"
          : cut + " calls nested more than " + MAX_DEPTH + " levels deep stay one instruction "
              + "each: the computations they call are not costed");
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
    List<AliasPair> loopCarried = new ArrayList<>();
    int[] cut = new int[1];
    int[] map = emit(module, entry, null, "", out, loopCarried, 1, 0, cut);
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
    aliases.addAll(loopCarried);
    return new Result(new Graph(entry.name(), out, aliases), map, cut[0]);
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
    String key = switch (ins.opcode()) {
      case FUSION -> "calls";
      case CALL -> "to_apply";
      case WHILE -> "body";
      default -> null;
    };
    if (key == null) {
      return null;
    }
    String target = ins.rawAttributes().get(key);
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

  /**
   * A loop can be inlined when its state is a tuple built in the graph and its body returns a
   * tuple (whose shape the caller checks like that of any call).
   */
  private static boolean inlinableLoop(Graph body, List<Integer> ops,
      List<Instruction> out) {
    return ops.size() == 1 && out.get(ops.get(0)).opcode() == Opcode.TUPLE
        && body.root().opcode() == Opcode.TUPLE && body.get(0).opcode() == Opcode.PARAMETER;
  }

  private static int[] emit(HloModule module, Graph g, int[] params, String prefix,
      List<Instruction> out, List<AliasPair> loopCarried, long repeat, int depth, int[] cut) {
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
      Graph called = callee(module, ins);
      if (called != null && depth >= MAX_DEPTH) {
        cut[0]++;
        called = null;
      }
      if (called != null && ins.opcode() == Opcode.WHILE && !inlinableLoop(called, ops, out)) {
        called = null;
      }
      if (called != null && called.root().shape().equals(ins.shape())) {
        int[] args = ops.stream().mapToInt(Integer::intValue).toArray();
        long times = repeat;
        if (ins.opcode() == Opcode.WHILE) {
          times = tripCount(ins, repeat);
        }
        int[] inner = emit(module, called, args, prefix + ins.name() + "/", out, loopCarried,
            times, depth + 1, cut);
        map[ins.id()] = inner[called.root().id()];
        if (ins.opcode() == Opcode.WHILE) {
          Instruction init = out.get(ops.get(0));
          Instruction next = out.get(map[ins.id()]);
          for (int k = 0; k < init.operands().size(); k++) {
            int a = init.operand(k);
            int b = next.operand(k);
            if (a != b && out.get(a).shape() instanceof TensorShape) {
              loopCarried.add(new AliasPair(a, b));
            }
          }
        }
        continue;
      }
      int id = out.size();
      java.util.Map<String, String> raw = ins.rawAttributes();
      if (repeat > 1) {
        raw = new java.util.LinkedHashMap<>(raw);
        raw.put(REPEAT_KEY, Long.toString(repeat));
      }
      out.add(new Instruction(id, prefix + ins.name(), ins.opcode(), ins.shape(), ops,
          ins.attrs(), ins.opName(), raw));
      map[ins.id()] = id;
    }
    return map;
  }
}
