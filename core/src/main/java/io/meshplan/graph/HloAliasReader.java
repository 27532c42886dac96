package io.meshplan.graph;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a module's {@code input_output_alias={ {0}: (1, {}, may-alias), ... }} header attribute
 * into alias pairs of the entry computation.
 */
final class HloAliasReader {
  private final HloCursor c;

  HloAliasReader(HloCursor cursor) {
    this.c = cursor;
  }

  /** One entry as written: {@code {outputIndex}: (param, {paramIndex}, kind)}. */
  private record Entry(int at, String text, List<Integer> outputIndex, int param, int paramAt,
      List<Integer> paramIndex, String kind) {}

  /**
   * Reads the attribute value.
   *
   * @param at the offset of the value's opening brace
   * @param entry the entry computation's instructions, root last
   * @param kinds receives parameter number -> alias kind ({@code may-alias}, {@code must-alias}
   *     or empty) of each pair returned
   * @param extras receives the text of each entry that is no pair of whole values (a tuple
   *     element of a parameter, or an output the root does not name directly)
   * @return the pairs of whole values
   */
  List<AliasPair> read(int at, List<Instruction> entry, Map<Integer, String> kinds,
      List<String> extras) {
    Map<Integer, Integer> parameters = parameterIds(entry);
    List<AliasPair> out = new ArrayList<>();
    c.pos = at;
    c.expect('{');
    if (c.accept('}')) {
      return out;
    }
    do {
      Entry e = entry();
      Integer paramId = parameters.get(e.param());
      if (paramId == null) {
        throw c.errorAt(e.paramAt(), "the number of a parameter of the entry computation");
      }
      int output = output(e.outputIndex(), entry.get(entry.size() - 1));
      if (output < 0 || !e.paramIndex().isEmpty()) {
        extras.add(e.text());
        continue;
      }
      Shape want = entry.get(paramId).shape();
      Shape got = entry.get(output).shape();
      if (!want.equals(got)) {
        throw c.errorAt(e.at(), "output " + e.outputIndex() + " to have the shape of parameter "
            + e.param() + ", " + want.toHlo(), got.toHlo());
      }
      out.add(new AliasPair(paramId, output));
      kinds.put(e.param(), e.kind());
    } while (c.accept(','));
    c.expect('}');
    return out;
  }

  /** Parameter number -> instruction id; the first parameter of a number wins. */
  private static Map<Integer, Integer> parameterIds(List<Instruction> entry) {
    Map<Integer, Integer> parameters = new HashMap<>();
    for (Instruction ins : entry) {
      if (ins.opcode() == Opcode.PARAMETER) {
        parameters.putIfAbsent(((OpAttrs.Index) ins.attrs()).index(), ins.id());
      }
    }
    return parameters;
  }

  private Entry entry() {
    c.skipSpace();
    int at = c.pos;
    List<Integer> outputIndex = c.intList("an output tuple index");
    c.expect(':');
    c.expect('(');
    c.skipSpace();
    int paramAt = c.pos;
    int param = c.integer("a parameter number");
    c.expect(',');
    List<Integer> paramIndex = c.intList("a parameter tuple index");
    String kind = "";
    if (c.accept(',')) {
      c.skipSpace();
      int kindAt = c.pos;
      kind = c.word();
      if (!kind.equals("may-alias") && !kind.equals("must-alias")) {
        throw c.errorAt(kindAt, "an alias kind (may-alias or must-alias)");
      }
    }
    c.expect(')');
    return new Entry(at, c.text.substring(at, c.pos), outputIndex, param, paramAt, paramIndex,
        kind);
  }

  /**
   * The id of the instruction an output index names: the root for {@code {}}, a tuple root's
   * operand for {@code {i}}.
   *
   * @return the id, or -1 when the root names no such value directly
   */
  private static int output(List<Integer> outputIndex, Instruction root) {
    if (outputIndex.isEmpty()) {
      return root.id();
    } else if (outputIndex.size() == 1 && root.opcode() == Opcode.TUPLE
        && outputIndex.get(0) < root.operands().size()) {
      return root.operand(outputIndex.get(0));
    }
    return -1;
  }
}
