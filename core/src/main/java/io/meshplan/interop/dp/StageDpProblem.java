package io.meshplan.interop.dp;

import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.util.Require;
import java.util.List;

/**
 * The input of the stage DP (Alpa, OSDI'22, section 5.2).
 *
 * @param shapes the submesh shapes; the table's submesh indices refer to this list
 * @param nodes cluster nodes N
 * @param gpusPerNode GPUs per node M
 * @param table the candidate stages
 * @param memoryCapacityBytes device memory available per GPU, bytes
 * @param microbatches B, microbatches per iteration
 */
public record StageDpProblem(List<SubmeshShape> shapes, int nodes, int gpusPerNode,
    StageCostTable table, double memoryCapacityBytes, int microbatches) {

  /** Copies the list and checks that the table and the shapes fit the cluster. */
  public StageDpProblem {
    shapes = List.copyOf(Require.nonNull(shapes, "shapes"));
    Require.nonNull(table, "table");
    Require.positive(table.layers(), "layers");
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "gpusPerNode");
    Math.multiplyExact(nodes, gpusPerNode);
    Require.nonNegative(memoryCapacityBytes, "memoryCapacityBytes");
    Require.positive(microbatches, "microbatches");
    Require.that(!shapes.isEmpty(), "the DP needs at least one submesh shape");
    int given = shapes.size();
    Require.that(table.submeshes() == given, () -> "the table has " + table.submeshes()
        + " submeshes but " + given + " shapes are given");
    for (SubmeshShape s : shapes) {
      Require.that(s.n() <= nodes && s.m() <= gpusPerNode, () -> "submesh " + s
          + " does not fit in a " + nodes + " x " + gpusPerNode + " cluster");
    }
  }

  /**
   * Layers L.
   *
   * @return layers
   */
  public int layers() {
    return table.layers();
  }

  /**
   * Devices of the cluster, N * M.
   *
   * @return devices
   */
  public int devices() {
    return nodes * gpusPerNode;
  }
}
