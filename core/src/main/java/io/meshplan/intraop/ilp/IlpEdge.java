package io.meshplan.intraop.ilp;

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
    Require.that(u < v, () -> "edge nodes must be ordered, got " + u + "," + v);
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

  /**
   * The number of entries.
   *
   * @return {@code |S_u| * |S_v|}
   */
  public int entries() {
    return costs.length;
  }

  /**
   * The cheapest entry.
   *
   * @return the smallest cost of any pair
   */
  public double minCost() {
    return java.util.Arrays.stream(costs).min().orElse(0);
  }

  /** The costs without copying, for the readers in this package. */
  double[] raw() {
    return costs;
  }
}
