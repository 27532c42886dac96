package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Writes an {@link HloModule} as HLO text that {@link HloParser} and XLA's own parser read back.
 *
 * <p>Names get a {@code %}; shapes print as written (with layouts) when the module came from text;
 * the typed attributes come first, in XLA's order, then the raw attributes in the order they were
 * written. The {@code input_output_alias} header is rebuilt from the entry graph's aliases. A
 * printer made with {@link #withShardings(IntFunction)} sets {@code sharding={...}} on entry
 * instructions, replacing what was there: this is how a sharded module is written back.
 *
 * <p>Output is deterministic: the same module gives the same text, byte for byte.
 */
public final class HloPrinter {
  private final IntFunction<String> entrySharding;

  /** A printer that keeps every instruction's sharding as it is. */
  public HloPrinter() {
    this(id -> null);
  }

  private HloPrinter(IntFunction<String> entrySharding) {
    this.entrySharding = entrySharding;
  }

  /**
   * A printer that sets the sharding of entry instructions.
   *
   * @param sharding for an entry instruction id, its HloSharding text such as {@code
   *     {devices=[2,2]0,1,2,3}} or {@code {replicated}}, or {@code null} to keep the sharding it has
   * @return the printer
   */
  public static HloPrinter withShardings(IntFunction<String> sharding) {
    return new HloPrinter(Require.nonNull(sharding, "sharding"));
  }

  /**
   * A printer that sets the sharding of the entry instructions in a map.
   *
   * @param sharding entry instruction id to HloSharding text; ids not in the map keep theirs
   * @return the printer
   */
  public static HloPrinter withShardings(Map<Integer, String> sharding) {
    Map<Integer, String> copy = Map.copyOf(sharding);
    return new HloPrinter(copy::get);
  }

  /**
   * Prints a graph as a module with one entry computation.
   *
   * @param graph the graph
   * @return HLO text
   */
  public String print(Graph graph) {
    return print(HloModule.of(graph));
  }

  /**
   * Prints a module.
   *
   * @param module the module
   * @return HLO text, ending in a newline
   * @throws IllegalArgumentException when an entry alias cannot be expressed in HLO (its output is
   *     neither the root nor an operand of a root tuple), or a sharding text is not in braces
   */
  public String print(HloModule module) {
    StringBuilder sb = new StringBuilder(1 << 16);
    header(module, sb);
    for (HloComputation computation : module.computations()) {
      sb.append('\n');
      computation(computation, sb);
    }
    return sb.toString();
  }

  private void header(HloModule module, StringBuilder sb) {
    sb.append("HloModule ").append(module.name());
    String aliases = aliasText(module);
    boolean aliasesPrinted = false;
    for (Map.Entry<String, String> e : module.headerAttributes().entrySet()) {
      if (e.getKey().equals("input_output_alias")) {
        if (aliases != null) {
          sb.append(", input_output_alias=").append(aliases);
        }
        aliasesPrinted = true;
        continue;
      }
      if (e.getKey().equals("entry_computation_layout") && !aliasesPrinted && aliases != null) {
        sb.append(", input_output_alias=").append(aliases);
        aliasesPrinted = true;
      }
      sb.append(", ").append(e.getKey()).append('=').append(e.getValue());
    }
    if (!aliasesPrinted && aliases != null) {
      sb.append(", input_output_alias=").append(aliases);
    }
    sb.append('\n');
  }

  private static String aliasText(HloModule module) {
    Graph entry = module.entry();
    List<String> parts = new ArrayList<>();
    Instruction root = entry.root();
    for (AliasPair a : entry.aliases()) {
      String index;
      if (a.output() == root.id()) {
        index = "{}";
      } else if (root.opcode() == Opcode.TUPLE && root.operands().contains(a.output())) {
        index = "{" + root.operands().indexOf(a.output()) + "}";
      } else {
        throw new IllegalArgumentException("alias " + a + " of " + entry.name()
            + " cannot be printed: its output is neither the root nor an element of a root tuple");
      }
      int param = ((OpAttrs.Index) entry.get(a.parameter()).attrs()).index();
      String kind = module.aliasKinds().getOrDefault(param, "may-alias");
      parts.add(index + ": (" + param + ", {}" + (kind.isEmpty() ? "" : ", " + kind) + ")");
    }
    parts.addAll(module.extraAliasEntries());
    return parts.isEmpty() ? null : "{ " + String.join(", ", parts) + " }";
  }

  private void computation(HloComputation computation, StringBuilder sb) {
    Graph graph = computation.graph();
    if (computation.entry()) {
      sb.append("ENTRY ");
    }
    sb.append('%').append(graph.name()).append(" (");
    List<Instruction> parameters = new ArrayList<>();
    for (Instruction ins : graph.instructions()) {
      if (ins.opcode() == Opcode.PARAMETER) {
        parameters.add(ins);
      }
    }
    parameters.sort((a, b) -> Integer.compare(((OpAttrs.Index) a.attrs()).index(),
        ((OpAttrs.Index) b.attrs()).index()));
    for (int i = 0; i < parameters.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      Instruction p = parameters.get(i);
      sb.append(p.name()).append(": ").append(computation.shapeText(p.id()));
    }
    sb.append(") -> ").append(computation.shapeText(graph.root().id())).append(" {\n");
    for (Instruction ins : graph.instructions()) {
      String sharding = computation.entry() ? entrySharding.apply(ins.id()) : null;
      instruction(computation, ins, ins.id() == graph.size() - 1, sharding, sb);
    }
    sb.append('}').append(computation.trailer()).append('\n');
  }

  private static void instruction(HloComputation computation, Instruction ins, boolean root,
      String sharding, StringBuilder sb) {
    sb.append("  ");
    if (root) {
      sb.append("ROOT ");
    }
    sb.append('%').append(ins.name()).append(" = ").append(computation.shapeText(ins.id()))
        .append(' ');
    Opcode op = ins.opcode();
    sb.append(op == Opcode.UNKNOWN
        ? ins.rawAttributes().getOrDefault(HloModule.OPCODE_KEY, "unknown")
        : op.hloName()).append('(');
    operands(computation.graph(), ins, sb);
    sb.append(')');
    typedAttributes(ins, sb);
    if (sharding != null) {
      Require.that(sharding.startsWith("{") && sharding.endsWith("}"),
          () -> "a sharding must be in braces, e.g. {replicated}, got " + sharding);
    }
    textAttributes(ins, sharding, sb);
    sb.append('\n');
  }

  /** What goes in the parentheses: a constant's literal, a parameter's number, else operands. */
  private static void operands(Graph graph, Instruction ins, StringBuilder sb) {
    Opcode op = ins.opcode();
    if (op == Opcode.CONSTANT && ins.attrs() instanceof OpAttrs.Literal l) {
      sb.append(l.literal());
    } else if (op == Opcode.PARAMETER && ins.attrs() instanceof OpAttrs.Index i) {
      sb.append(i.index());
    } else {
      for (int k = 0; k < ins.operands().size(); k++) {
        if (k > 0) {
          sb.append(", ");
        }
        sb.append('%').append(graph.get(ins.operand(k)).name());
      }
    }
  }

  /**
   * The attributes kept as text, in the order read, with {@code sharding} replaced (or added)
   * when one is given; then what a forced replication and the op name need if they were not read.
   */
  private static void textAttributes(Instruction ins, String sharding, StringBuilder sb) {
    Map<String, String> raw = ins.rawAttributes();
    boolean shardingPrinted = false;
    for (Iterator<Map.Entry<String, String>> it = raw.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, String> e = it.next();
      String key = e.getKey();
      if (key.startsWith("$")) {
        continue;
      }
      String value = e.getValue();
      if (key.equals("sharding") && sharding != null) {
        value = sharding;
        shardingPrinted = true;
      }
      sb.append(", ").append(key).append('=').append(value);
    }
    if (ins.opcode() == Opcode.FUSED_ATTENTION && !raw.containsKey("custom_call_target")) {
      sb.append(", custom_call_target=")
          .append(HloText.quote(HloAttributeReader.FUSED_ATTENTION_TARGET));
    }
    if (ins.opcode() == Opcode.FUSED_ATTENTION_GRAD && !raw.containsKey("custom_call_target")) {
      sb.append(", custom_call_target=")
          .append(HloText.quote(HloAttributeReader.FUSED_ATTENTION_GRAD_TARGET))
          .append(", output_index=").append(((OpAttrs.Attention) ins.attrs()).output());
    }
    if (ins.opcode().kind() == OpKind.SCAN && !raw.containsKey("custom_call_target")) {
      String target = switch (ins.opcode()) {
        case SSD_SCAN -> "meshplan$ssdScan";
        case SSD_SCAN_GRAD -> "meshplan$ssdScanBackward";
        case GDN_SCAN -> "meshplan$gdnScan";
        case GDN_SCAN_GRAD -> "meshplan$gdnScanBackward";
        case SELECTIVE_SCAN -> "meshplan$selectiveScan";
        default -> "meshplan$selectiveScanBackward";
      };
      sb.append(", custom_call_target=").append(HloText.quote(target));
      if (((OpAttrs.Scan) ins.attrs()).output() >= 0) {
        sb.append(", output_index=").append(((OpAttrs.Scan) ins.attrs()).output());
      }
    }
    if ((ins.opcode() == Opcode.MOE_DISPATCH || ins.opcode() == Opcode.MOE_COMBINE)
        && !raw.containsKey("custom_call_target")) {
      sb.append(", custom_call_target=").append(HloText.quote(ins.opcode() == Opcode.MOE_DISPATCH
          ? "meshplan$moeDispatch" : "meshplan$moeCombine"));
    }
    if (ins.opcode() == Opcode.FORCE_REPLICATED) {
      if (!raw.containsKey("custom_call_target")) {
        sb.append(", custom_call_target=\"Sharding\"");
      }
      if (!raw.containsKey("sharding") && sharding == null) {
        sb.append(", sharding={replicated}");
      }
    }
    if (sharding != null && !shardingPrinted) {
      sb.append(", sharding=").append(sharding);
    }
    if (!raw.containsKey("metadata") && !ins.opName().isEmpty()) {
      sb.append(", metadata={op_name=").append(HloText.quote(ins.opName())).append('}');
    }
  }

  private static void typedAttributes(Instruction ins, StringBuilder sb) {
    OpAttrs attrs = ins.attrs();
    if (attrs instanceof OpAttrs.Dims d) {
      list(sb.append(", dimensions="), d.dims());
    } else if (attrs instanceof OpAttrs.Dot d) {
      if (!d.lhsBatch().isEmpty()) {
        list(sb.append(", lhs_batch_dims="), d.lhsBatch());
      }
      if (!d.lhsContracting().isEmpty()) {
        list(sb.append(", lhs_contracting_dims="), d.lhsContracting());
      }
      if (!d.rhsBatch().isEmpty()) {
        list(sb.append(", rhs_batch_dims="), d.rhsBatch());
      }
      if (!d.rhsContracting().isEmpty()) {
        list(sb.append(", rhs_contracting_dims="), d.rhsContracting());
      }
    } else if (attrs instanceof OpAttrs.Slice s) {
      sb.append(", slice={");
      for (int i = 0; i < s.starts().size(); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        sb.append('[').append(s.starts().get(i)).append(':').append(s.limits().get(i));
        if (s.strides().get(i) != 1) {
          sb.append(':').append(s.strides().get(i));
        }
        sb.append(']');
      }
      sb.append('}');
    } else if (attrs instanceof OpAttrs.Compare cmp) {
      if (!cmp.direction().isEmpty()) {
        sb.append(", direction=").append(cmp.direction());
      }
    } else if (attrs instanceof OpAttrs.Index i && ins.opcode() == Opcode.GET_TUPLE_ELEMENT) {
      sb.append(", index=").append(i.index());
    }
  }

  private static void list(StringBuilder sb, List<Integer> values) {
    sb.append('{');
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(values.get(i));
    }
    sb.append('}');
  }
}
