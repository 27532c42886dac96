package io.meshplan.graph;

/**
 * The depth of every instruction: 0 for instructions without operands, else one more than the
 * deepest operand. Follower merging uses it to pick the operand an elementwise op follows.
 */
public final class Depth {
  private Depth() {}

  /**
   * Computes depths.
   *
   * @param graph the graph
   * @return the depth per instruction id
   */
  public static int[] of(Graph graph) {
    int[] depth = new int[graph.size()];
    for (Instruction ins : graph.instructions()) {
      int d = 0;
      for (int op : ins.operands()) {
        d = Math.max(d, depth[op] + 1);
      }
      depth[ins.id()] = d;
    }
    return depth;
  }
}
