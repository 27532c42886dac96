package io.meshplan.graph;

import java.util.Map;

/**
 * One instruction as {@link HloReader} read it, before operand names are resolved and ids
 * assigned. The {@code ...At} fields are offsets into the text, kept for error messages.
 */
final class PendingInstruction {
  String name;
  int nameAt;
  /** Where {@code ROOT} stands, or -1 when the instruction is not marked as the root. */
  int rootAt = -1;
  Shape shape;
  /** The shape as written, shared among equal shapes of one module. */
  String shapeText;
  Opcode opcode;
  int opcodeAt;
  String[] operandNames;
  int[] operandAts;
  OpAttrs attrs = OpAttrs.NONE;
  String opName = "";
  /** The attributes kept as text, in the order read. */
  Map<String, String> raw;
}
