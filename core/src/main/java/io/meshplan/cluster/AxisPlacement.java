package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * Where the device groups of one mesh axis land on a cluster. Mesh devices are numbered row-major
 * (see {@link LogicalMesh}) and device {@code d} sits on node {@code d / gpusPerNode}.
 *
 * <p>When groups differ (an axis whose stride does not divide the node size), the group that spans
 * the most nodes is described, ties broken by the lowest first device; the cost model then prices
 * the slowest group, which is the one every collective waits for.
 *
 * @param groupSize ranks in one group (the axis size)
 * @param nodesSpanned distinct nodes the group touches
 * @param gpusPerNodeInGroup the most members of the group on one node
 * @param groupsPerNode the most groups of this axis that have members on one node; they share its
 *     NICs when they run at once
 */
public record AxisPlacement(int groupSize, int nodesSpanned, int gpusPerNodeInGroup,
    int groupsPerNode) {

  /** Validates the counts. */
  public AxisPlacement {
    Require.positive(groupSize, "group size");
    Require.positive(nodesSpanned, "nodes spanned");
    Require.positive(gpusPerNodeInGroup, "GPUs per node in the group");
    Require.positive(groupsPerNode, "groups per node");
  }

  /**
   * The level of the axis.
   *
   * @return intra-node if the group stays on one node
   */
  public LinkLevel level() {
    return LinkLevel.ofNodes(nodesSpanned);
  }

  /**
   * Computes the placement of one axis.
   *
   * @param cluster the cluster
   * @param mesh the logical mesh, at most as many devices as the cluster has GPUs
   * @param axis the axis
   * @return the placement
   * @throws InputException if the mesh does not fit on the cluster
   */
  public static AxisPlacement of(ClusterSpec cluster, LogicalMesh mesh, int axis) {
    Require.that(axis >= 0 && axis < mesh.rank(), "axis " + axis + " out of range for mesh " + mesh);
    if (mesh.deviceCount() > cluster.gpuCount()) {
      throw new InputException("mesh " + mesh + " needs " + mesh.deviceCount() + " GPUs but cluster "
          + cluster.toShortString() + " has " + cluster.gpuCount());
    }
    int[] shape = mesh.shape();
    int stride = 1;
    for (int a = axis + 1; a < shape.length; a++) {
      stride *= shape[a];
    }
    int n = shape[axis];
    int bestNodes = 0;
    int bestPerNode = 0;
    // A group's members d + i * stride rise with i, and so do their nodes: its nodes are runs.
    int[] groupsOnNode = new int[cluster.nodeOf(mesh.deviceCount() - 1) + 1];
    for (int d = 0; d < mesh.deviceCount(); d++) {
      if ((d / stride) % n != 0) {
        continue; // d is not the first member of its group
      }
      int nodes = 0;
      int maxPer = 0;
      int run = 0;
      int node = -1;
      for (int i = 0; i < n; i++) {
        int at = cluster.nodeOf(d + i * stride);
        if (at != node) {
          node = at;
          nodes++;
          run = 0;
          groupsOnNode[at]++;
        }
        run++;
        maxPer = Math.max(maxPer, run);
      }
      if (nodes > bestNodes || (nodes == bestNodes && maxPer > bestPerNode)) {
        bestNodes = nodes;
        bestPerNode = maxPer;
      }
    }
    int groups = 1;
    for (int g : groupsOnNode) {
      groups = Math.max(groups, g);
    }
    return new AxisPlacement(n, bestNodes, bestPerNode, groups);
  }
}
