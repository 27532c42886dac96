package io.meshplan.graph;

/**
 * Floating-point operations and memory traffic of one instruction on one device holding the whole
 * tensors. A dot of result size R contracting K elements performs 2*R*K FLOPs (one multiply and one
 * add each); elementwise and reduce ops perform one FLOP per input element; data movement ops none.
 */
public final class OpCost {
  private OpCost() {}

  /**
   * FLOPs of an instruction.
   *
   * @param graph the graph
   * @param ins the instruction
   * @return floating-point operations
   */
  public static double flops(Graph graph, Instruction ins) {
    return switch (ins.opcode().kind()) {
      case DOT -> {
        OpAttrs.Dot a = (OpAttrs.Dot) ins.attrs();
        TensorShape lhs = graph.get(ins.operand(0)).tensorShape();
        double k = 1;
        for (int d : a.lhsContracting()) {
          k *= lhs.dim(d);
        }
        yield 2.0 * ins.tensorShape().elementCount() * k;
      }
      case ELEMENTWISE -> ins.shape() instanceof TensorShape t ? t.elementCount() : 0;
      case REDUCE -> graph.get(ins.operand(0)).shape() instanceof TensorShape t
          ? t.elementCount() : 0;
      default -> 0;
    };
  }

  /**
   * Bytes read and written by an instruction: its operands and its result.
   *
   * @param graph the graph
   * @param ins the instruction
   * @return bytes of memory traffic
   */
  public static double bytesAccessed(Graph graph, Instruction ins) {
    double b = ins.shape().byteSize();
    for (int op : ins.operands()) {
      b += graph.get(op).shape().byteSize();
    }
    return b;
  }

  /**
   * Total FLOPs of a graph.
   *
   * @param graph the graph
   * @return the sum over instructions
   */
  public static double totalFlops(Graph graph) {
    double f = 0;
    for (Instruction ins : graph.instructions()) {
      f += flops(graph, ins);
    }
    return f;
  }
}
