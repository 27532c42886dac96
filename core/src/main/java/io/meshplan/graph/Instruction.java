package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.List;
import java.util.Map;

/**
 * One instruction of a computation. Instructions are stored in a topological order and identified
 * by their index in it; operands always refer to earlier instructions.
 *
 * @param id the index of this instruction in its graph
 * @param name a unique name, e.g. {@code dot.3}
 * @param opcode the operation
 * @param shape the result shape
 * @param operands ids of the operands, in order
 * @param attrs the typed attributes the planner needs
 * @param opName the framework scope from HLO {@code metadata={op_name=...}}, or empty; layer
 *     clustering reads it
 * @param rawAttributes other attributes as written in HLO text ({@code name -> value}), kept in
 *     order so that a module prints back as it came; empty for built graphs
 */
public record Instruction(
    int id,
    String name,
    Opcode opcode,
    Shape shape,
    List<Integer> operands,
    OpAttrs attrs,
    String opName,
    Map<String, String> rawAttributes) {
  /** Validates the fields. */
  public Instruction {
    Require.that(id >= 0, "instruction id must be >= 0");
    Require.nonNull(name, "name");
    Require.nonNull(opcode, "opcode");
    Require.nonNull(shape, "shape");
    operands = List.copyOf(operands);
    for (int op : operands) {
      Require.that(op >= 0 && op < id, () -> name + ": operand " + op
          + " is not an earlier instruction");
    }
    Require.nonNull(attrs, "attrs");
    opName = opName == null ? "" : opName;
    rawAttributes = rawAttributes == null ? Map.of() : java.util.Collections.unmodifiableMap(
        new java.util.LinkedHashMap<>(rawAttributes));
  }

  /**
   * The result as a tensor shape.
   *
   * @return the shape
   * @throws IllegalStateException when the result is a tuple
   */
  public TensorShape tensorShape() {
    if (shape instanceof TensorShape t) {
      return t;
    }
    throw new IllegalStateException(name + " has a tuple shape " + shape.toHlo());
  }

  /**
   * The operand at a position.
   *
   * @param i the position
   * @return the operand's id
   */
  public int operand(int i) {
    return operands.get(i);
  }
}
