package io.meshplan.graph;

import java.util.ArrayList;
import java.util.List;

/**
 * Memory traffic per instruction when memory-bound ops are fused into loop fusions, as XLA's
 * fusion pass and Megatron-LM's hand-fused kernels (bias-GeLU, scaled masked softmax, dropout-add,
 * LayerNorm) do. Elementwise ops, broadcasts, reshapes, transposes, slices, concatenations and
 * constants are fusible; a reduction can absorb its producers but its result is written; dots,
 * parameters and opaque ops are not fusible.
 *
 * <p>The rules, applied to every instruction:
 * <ul>
 *   <li>A fusible op reads an operand from memory only when the operand was written there (by a
 *       non-fusible op, a reduction, or a fusible op whose result is written, by the next rule);
 *       any other fusible producer's value streams through registers.
 *   <li>A fusible op writes its result only when something that cannot be fused must read it from
 *       memory: a non-fusible consumer (a dot) or the end of the graph. A value shared by several
 *       fusible consumers is recomputed inside each of them, as XLA duplicates cheap producers
 *       into every consumer fusion; broadcasts, constants and iotas are regenerated the same way.
 *   <li>A reduction writes its (small) result; any other op reads and writes all its operands and
 *       its result, as {@link OpCost#bytesAccessed} says.
 * </ul>
 */
public final class FusedTraffic {
  private FusedTraffic() {}

  /**
   * The bytes each instruction moves to and from device memory, for the whole (unsharded)
   * tensors.
   *
   * @param graph the graph
   * @return bytes per instruction, by id
   */
  public static double[] bytes(Graph graph) {
    int n = graph.size();
    List<List<Integer>> users = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      users.add(new ArrayList<>());
    }
    for (Instruction ins : graph.instructions()) {
      for (int op : ins.operands()) {
        users.get(op).add(ins.id());
      }
    }
    boolean[] inMemory = new boolean[n];
    for (Instruction ins : graph.instructions()) {
      inMemory[ins.id()] = !fusible(ins) || writes(graph, ins, users.get(ins.id()));
    }
    double[] out = new double[n];
    for (Instruction ins : graph.instructions()) {
      if (!fusible(ins) && ins.opcode().kind() != OpKind.REDUCE) {
        out[ins.id()] = OpCost.bytesAccessed(graph, ins);
        continue;
      }
      double b = 0;
      for (int op : ins.operands()) {
        if (inMemory[op]) {
          b += graph.get(op).shape().byteSize();
        }
      }
      if (inMemory[ins.id()]) {
        b += ins.shape().byteSize();
      }
      out[ins.id()] = b;
    }
    return out;
  }

  private static boolean writes(Graph graph, Instruction ins, List<Integer> users) {
    OpKind k = ins.opcode().kind();
    if (k == OpKind.BROADCAST || k == OpKind.SOURCE) {
      return false;
    }
    if (users.isEmpty()) {
      return true;
    }
    for (int u : users) {
      if (!fusible(graph.get(u))) {
        return true;
      }
    }
    return false;
  }

  /** Whether an op can sit inside a loop fusion with its producers and consumers. */
  static boolean fusible(Instruction ins) {
    return switch (ins.opcode().kind()) {
      case ELEMENTWISE, BROADCAST, RESHAPE, TRANSPOSE, SOURCE, SLICE, CONCATENATE -> true;
      default -> false;
    };
  }
}
