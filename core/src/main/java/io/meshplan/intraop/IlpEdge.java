package io.meshplan.intraop;

import io.meshplan.util.Require;

/**
 * The resharding cost matrix between two decision nodes (Alpa's {@code R_uv}).
 *
 * @param u the first node, lower id
 * @param v the second node, higher id
 * @param costs row-major {@code |S_u| x |S_v|} costs; {@code +Infinity} forbids a pair
 */
public record IlpEdge(int u, int v, double[] costs) {
  /** Validates the node order. */
  public IlpEdge {
    Require.that(u < v, "edge nodes must be ordered, got " + u + "," + v);
    costs = costs.clone();
  }

  @Override
  public double[] costs() {
    return costs.clone();
  }

  /**
   * One entry, without copying.
   *
   * @param i the strategy of u
   * @param j the strategy of v
   * @param sizeV the strategy count of v
   * @return the cost
   */
  public double cost(int i, int j, int sizeV) {
    return costs[i * sizeV + j];
  }

  double[] raw() {
    return costs;
  }
}
