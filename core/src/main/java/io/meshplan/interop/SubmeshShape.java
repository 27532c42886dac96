package io.meshplan.interop;

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

  @Override
  public String toString() {
    return n + "x" + m;
  }
}
