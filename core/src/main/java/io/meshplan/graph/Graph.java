package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.List;

/**
 * A computation: instructions in topological order, the root (the last instruction), and alias
 * pairs. Immutable.
 *
 * @param name the computation name
 * @param instructions the instructions, where instruction {@code i} has id {@code i}
 * @param aliases parameter/output pairs that share a buffer
 */
public record Graph(String name, List<Instruction> instructions, List<AliasPair> aliases) {
  /** Validates ids, operand order and aliases. */
  public Graph {
    Require.nonNull(name, "name");
    instructions = List.copyOf(instructions);
    aliases = List.copyOf(aliases);
    Require.that(!instructions.isEmpty(), "a graph needs at least one instruction");
    for (int i = 0; i < instructions.size(); i++) {
      int id = instructions.get(i).id();
      int at = i;
      Require.that(id == at, () -> "instruction " + at + " has id " + id);
    }
    for (AliasPair a : aliases) {
      Require.that(a.parameter() >= 0 && a.parameter() < instructions.size()
          && a.output() >= 0 && a.output() < instructions.size(), () -> "alias out of range: "
          + a);
      Require.that(instructions.get(a.parameter()).shape().equals(
          instructions.get(a.output()).shape()), () -> "alias " + a + " joins different shapes");
    }
  }

  /**
   * The number of instructions.
   *
   * @return the size
   */
  public int size() {
    return instructions.size();
  }

  /**
   * An instruction by id.
   *
   * @param id the id
   * @return the instruction
   */
  public Instruction get(int id) {
    return instructions.get(id);
  }

  /**
   * The root: the last instruction, whose value the computation returns.
   *
   * @return the root
   */
  public Instruction root() {
    return instructions.get(instructions.size() - 1);
  }
}
