package io.meshplan.interop.space;

import java.util.ArrayList;
import java.util.List;

/**
 * A submesh of the cluster: {@code n} nodes with {@code m} GPUs each (Alpa, OSDI'22, section 5.2).
 *
 * @param n nodes, at least 1
 * @param m GPUs per node used by the submesh, at least 1
 */
public record SubmeshShape(int n, int m) {

  /** Checks the sizes. */
  public SubmeshShape {
    if (n < 1 || m < 1) {
      throw new IllegalArgumentException("a submesh needs at least 1 x 1 devices, got " + n + " x "
          + m);
    }
    Math.multiplyExact(n, m);
  }

  /**
   * Devices of the submesh.
   *
   * @return {@code n * m}
   */
  public int devices() {
    return n * m;
  }

  /**
   * Alpa's submesh shapes for an {@code nodes x gpusPerNode} cluster: one-node shapes (1,1), (1,2),
   * (1,4), ... (powers of two below {@code gpusPerNode}) and (1, gpusPerNode), then whole-node
   * shapes (2, M), (3, M), ..., (nodes, M). These can always cover the full cluster (Alpa, section
   * 5.2).
   *
   * @param nodes nodes N, at least 1
   * @param gpusPerNode GPUs per node M, at least 1
   * @return the shapes, one-node shapes by size, then by node count
   */
  public static List<SubmeshShape> alpaShapes(int nodes, int gpusPerNode) {
    if (nodes < 1 || gpusPerNode < 1) {
      throw new IllegalArgumentException("the cluster needs at least 1 x 1 devices, got " + nodes
          + " x " + gpusPerNode);
    }
    List<SubmeshShape> shapes = new ArrayList<>();
    for (int m = 1; m < gpusPerNode; m *= 2) {
      shapes.add(new SubmeshShape(1, m));
    }
    shapes.add(new SubmeshShape(1, gpusPerNode));
    for (int n = 2; n <= nodes; n++) {
      shapes.add(new SubmeshShape(n, gpusPerNode));
    }
    return List.copyOf(shapes);
  }

  /**
   * The most {@code layers^2 x shapes x device units} a stage DP is given, which bounds its work
   * (the DP's time grows with this product times the microbatches in flight; LLaMA2-70B on 128 x 8,
   * 6,400 x 131 x 1,024 = 8.6e8, plans in about 30 s on 2 cores).
   */
  static final double MAX_DP_SIZE = 1e9;

  /**
   * The node granule u of the search: whole-node stages use multiples of u nodes. It is 1 (Alpa's
   * shapes, {@link #alpaShapes}) unless {@code layers^2 x shapes x units} would exceed {@link
   * #MAX_DP_SIZE}; then it is the smallest divisor u of {@code nodes} that brings the product under
   * the limit, with no one-node shapes (the device units become u-node blocks). On 2,048 x 8 with
   * 126 layers, u = 16: 128 shapes of 16, 32, ..., 2,048 nodes and 128 units, so a stage is at
   * least 128 GPUs, which costs nothing once the model needs fewer than 128 stages. When no divisor
   * leaves at least {@code min(layers, 32)} units (a prime node count, say), u stays 1 and the
   * caller groups layers instead ({@link #layerGroup}).
   *
   * @param nodes nodes N, at least 1
   * @param gpusPerNode GPUs per node M, at least 1
   * @param layers layers of the model, at least 1
   * @return the granule u, a divisor of {@code nodes}
   */
  public static int nodeGranule(int nodes, int gpusPerNode, int layers) {
    if (dpSize(layers, alpaShapes(nodes, gpusPerNode).size(), (long) nodes * gpusPerNode)
        <= MAX_DP_SIZE) {
      return 1;
    }
    int minUnits = Math.min(layers, 32);
    for (int u = 2; u <= nodes / minUnits; u++) {
      if (nodes % u == 0 && dpSize(layers, nodes / u, nodes / u) <= MAX_DP_SIZE) {
        return u;
      }
    }
    return 1;
  }

  /**
   * Consecutive layers the search keeps together so that the DP stays within {@link #MAX_DP_SIZE}
   * with the given shapes (Alpa clusters operators into a fixed number of layers for the same
   * reason, OSDI'22 section 5.2): the smallest g with {@code ceil(layers / g)^2 x shapes x units}
   * under the limit, and 1 when the layers fit as they are.
   *
   * @param layers layers of the model
   * @param shapes submesh shapes of the search
   * @param units device units of the DP
   * @return layers per group, at least 1
   */
  public static int layerGroup(int layers, int shapes, long units) {
    int g = 1;
    // ceil(layers / g) in a long: layers + g - 1 passes an int near Integer.MAX_VALUE.
    while (g < layers && dpSize((int) (((long) layers + g - 1) / g), shapes, units)
        > MAX_DP_SIZE) {
      g++;
    }
    return g;
  }

  private static double dpSize(int layers, int shapes, long units) {
    return (double) layers * layers * shapes * units;
  }

  /**
   * The shapes of a search with node granule u: Alpa's shapes when u = 1, else {@code (k u, M)}
   * for k = 1 .. N / u.
   *
   * @param nodes nodes N
   * @param gpusPerNode GPUs per node M
   * @param granule u, a divisor of N (from {@link #nodeGranule})
   * @return the shapes, by size
   */
  public static List<SubmeshShape> shapes(int nodes, int gpusPerNode, int granule) {
    if (granule < 1 || nodes % granule != 0) {
      throw new IllegalArgumentException("the node granule " + granule + " does not divide "
          + nodes + " nodes");
    }
    if (granule == 1) {
      return alpaShapes(nodes, gpusPerNode);
    }
    List<SubmeshShape> shapes = new ArrayList<>();
    for (int n = granule; n <= nodes; n += granule) {
      shapes.add(new SubmeshShape(n, gpusPerNode));
    }
    return List.copyOf(shapes);
  }

  /**
   * Alpa's {@code "power_of_two"} submesh space ({@code get_submesh_choices} in {@code
   * alpa/pipeline_parallel/stage_construction.py}, alpa-projects/alpa at b8078a9): the one-node
   * shapes of {@link #alpaShapes}, then whole-node shapes of 2, 4, 8, ... granules of {@code
   * granule} nodes, so that a large cluster has few shapes (any node count is a sum of them).
   *
   * @param nodes nodes N
   * @param gpusPerNode GPUs per node M
   * @param granule u, a divisor of N (from {@link #nodeGranule})
   * @return the shapes, by size
   */
  public static List<SubmeshShape> powerOfTwoShapes(int nodes, int gpusPerNode, int granule) {
    List<SubmeshShape> all = shapes(nodes, gpusPerNode, granule);
    List<SubmeshShape> out = new ArrayList<>();
    for (SubmeshShape s : all) {
      int k = s.n() / granule;
      if (s.m() < gpusPerNode || (s.n() % granule == 0 && Integer.bitCount(k) == 1)) {
        out.add(s);
      }
    }
    return List.copyOf(out);
  }

  @Override
  public String toString() {
    return n + "x" + m;
  }
}
