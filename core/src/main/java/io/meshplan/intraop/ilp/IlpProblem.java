package io.meshplan.intraop.ilp;

import io.meshplan.util.Require;
import java.util.List;

/**
 * The intra-operator ILP as plain data (Alpa, OSDI'22, equation 1): choose one strategy per node to
 * minimize {@code sum_v c_v[s_v] + sum_(u,v) R_uv[s_u][s_v]} subject to the memory bound. Node
 * costs already include compute, communication and the resharding of merged followers. It can be
 * dumped and replayed, and every solver takes exactly this.
 *
 * @param nodeCosts per node, the cost of each strategy ({@code +Infinity} forbids it)
 * @param edges the resharding matrices, at most one per node pair
 * @param memory the memory bound, or null when unbounded
 */
public record IlpProblem(double[][] nodeCosts, List<IlpEdge> edges, MemoryConstraint memory) {
  /** Validates edge shapes. */
  public IlpProblem {
    edges = List.copyOf(edges);
    for (double[] c : nodeCosts) {
      Require.that(c.length > 0, "every node needs a strategy");
    }
    for (IlpEdge e : edges) {
      Require.that(e.v() < nodeCosts.length, () -> "edge " + e.u() + "," + e.v() + " out of range");
      Require.that(e.raw().length == nodeCosts[e.u()].length * nodeCosts[e.v()].length,
          () -> "edge " + e.u() + "," + e.v() + " has the wrong size");
    }
  }

  /**
   * The number of nodes.
   *
   * @return the node count
   */
  public int nodeCount() {
    return nodeCosts.length;
  }

  /**
   * The strategy count of a node.
   *
   * @param v the node
   * @return its number of strategies
   */
  public int size(int v) {
    return nodeCosts[v].length;
  }

  /**
   * The largest finite cost coefficient, in absolute value.
   *
   * @return the maximum over node costs and edge entries, ignoring {@code +Infinity}; 0 if none
   */
  public double maxFiniteCost() {
    double max = 0;
    for (double[] c : nodeCosts) {
      for (double x : c) {
        if (x != Double.POSITIVE_INFINITY) {
          max = Math.max(max, Math.abs(x));
        }
      }
    }
    for (IlpEdge e : edges) {
      for (double x : e.raw()) {
        if (x != Double.POSITIVE_INFINITY) {
          max = Math.max(max, Math.abs(x));
        }
      }
    }
    return max;
  }

  /**
   * The same problem without the memory bound.
   *
   * @return the relaxation
   */
  public IlpProblem withoutMemory() {
    return new IlpProblem(nodeCosts, edges, null);
  }
}
