package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link AxisPlacement#of}, which walks each group's members once, against a reference that
 * collects every group's members per node in maps, on seeded random meshes of 1 to 3 axes on
 * clusters of 1 to 16 nodes of 1, 2, 4 or 8 GPUs.
 */
class AxisPlacementReferenceTest {
  /** The placement by the definition: every group's members counted per node. */
  private static AxisPlacement reference(ClusterSpec cluster, LogicalMesh mesh, int axis) {
    int[] shape = mesh.shape();
    int stride = 1;
    for (int a = axis + 1; a < shape.length; a++) {
      stride *= shape[a];
    }
    int n = shape[axis];
    int bestNodes = 0;
    int bestPerNode = 0;
    Map<Integer, Set<Integer>> groupsOnNode = new HashMap<>();
    for (int d = 0; d < mesh.deviceCount(); d++) {
      if ((d / stride) % n != 0) {
        continue;
      }
      Map<Integer, Integer> perNode = new HashMap<>();
      for (int i = 0; i < n; i++) {
        int node = cluster.nodeOf(d + i * stride);
        perNode.merge(node, 1, Integer::sum);
        groupsOnNode.computeIfAbsent(node, k -> new HashSet<>()).add(d);
      }
      int maxPer = perNode.values().stream().mapToInt(Integer::intValue).max().orElse(1);
      if (perNode.size() > bestNodes || perNode.size() == bestNodes && maxPer > bestPerNode) {
        bestNodes = perNode.size();
        bestPerNode = maxPer;
      }
    }
    int groups = groupsOnNode.values().stream().mapToInt(Set::size).max().orElse(1);
    return new AxisPlacement(n, bestNodes, bestPerNode, groups);
  }

  @Test
  void matchesTheReferenceOnRandomMeshes() {
    Random rnd = new Random(20261127);
    int checked = 0;
    for (int trial = 0; trial < 400; trial++) {
      int perNode = 1 << rnd.nextInt(4);
      int nodes = 1 + rnd.nextInt(16);
      ClusterSpec cluster = ClusterSpec.parse(nodes + "x" + perNode + ":h100-80gb");
      int rank = 1 + rnd.nextInt(3);
      List<Integer> shape = new ArrayList<>();
      int devices = 1;
      for (int a = 0; a < rank; a++) {
        int s = 1 + rnd.nextInt(6);
        if (devices * s > cluster.gpuCount()) {
          s = 1;
        }
        shape.add(s);
        devices *= s;
      }
      LogicalMesh mesh = LogicalMesh.of(shape.stream().mapToInt(Integer::intValue).toArray());
      for (int axis = 0; axis < rank; axis++) {
        assertThat(AxisPlacement.of(cluster, mesh, axis)).as("%s on %s, axis %d", mesh,
            cluster, axis).isEqualTo(reference(cluster, mesh, axis));
        checked++;
      }
    }
    assertThat(checked).isGreaterThan(700);
  }
}
