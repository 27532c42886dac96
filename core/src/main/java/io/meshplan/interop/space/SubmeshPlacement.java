package io.meshplan.interop.space;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Where the submeshes of a pipeline sit on an {@code N x M} cluster whose devices are numbered
 * row-major over nodes (device {@code d} on node {@code d / M}). A submesh of fewer than {@code M}
 * GPUs lies inside one node and a submesh of whole nodes starts on a node boundary: that is how
 * Alpa's runtime slices its cluster ({@code get_sliced_virtual_submeshes} in {@code
 * alpa/pipeline_parallel/stage_construction.py}, alpa-projects/alpa at b8078a9, asserts both), and
 * how a stage is priced (a {@code (1, m)} stage over NVLink only, an {@code (n, M)} stage on
 * {@code n} whole nodes), so a placement that crossed a node would run slower than priced.
 *
 * <p>Rule: the stages in pipeline order, one after another, when that places every submesh so
 * (neighbours then share nodes where they can, for the cheapest transfers); otherwise largest
 * first, ties in pipeline order, as Alpa's runtime orders them: each whole-node submesh on the
 * next free nodes, each smaller one in the first node with room for it (first fit decreasing).
 * Alpa's submesh sizes below a node are powers of two, a divisible sequence, and for such sizes
 * first fit decreasing packs whenever any packing exists: placing the sizes from {@code 2^j} up,
 * every node's used GPUs are a multiple of {@code 2^j}, so the room left for them is {@code R *
 * floor(M / 2^j) - (GPUs of larger submeshes) / 2^j} units of {@code 2^j} on the {@code R} nodes
 * the whole-node submeshes leave, whatever the arrangement; a packing exists exactly when that is
 * enough at every {@code j} (Coffman, Garey and Johnson, "Bin packing with divisible item sizes",
 * J. Complexity 3, 1987). When {@code M} is a power of two it always is; with {@code M = 6}, three
 * 4-GPU submeshes on two nodes are a set whose sizes sum to the cluster and that no placement
 * holds.
 */
public final class SubmeshPlacement {
  private SubmeshPlacement() {}

  /**
   * Places submeshes by the rule in the class comment.
   *
   * @param submeshes the stages' submeshes in pipeline order
   * @param nodes nodes N of the cluster
   * @param gpusPerNode GPUs per node M
   * @return the first device of each submesh, or empty when no placement keeps every submesh
   *     inside one node or on whole nodes (their GPUs may sum to fewer than the cluster's)
   */
  public static Optional<int[]> place(List<SubmeshShape> submeshes, int nodes,
      int gpusPerNode) {
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "gpusPerNode");
    long total = 0;
    for (SubmeshShape s : submeshes) {
      if (s.m() > gpusPerNode || (s.n() > 1 && s.m() < gpusPerNode)) {
        return Optional.empty();
      }
      total += s.devices();
    }
    if (total > (long) nodes * gpusPerNode) {
      return Optional.empty();
    }
    int[] inOrder = new int[submeshes.size()];
    int device = 0;
    boolean valid = true;
    for (int i = 0; i < inOrder.length && valid; i++) {
      inOrder[i] = device;
      valid = inNodes(device, submeshes.get(i), gpusPerNode);
      device += submeshes.get(i).devices();
    }
    return valid ? Optional.of(inOrder) : largestFirst(submeshes, nodes, gpusPerNode);
  }

  /** First fit decreasing: whole nodes first, from node 0, then the rest into the first room. */
  private static Optional<int[]> largestFirst(List<SubmeshShape> submeshes, int nodes,
      int gpusPerNode) {
    Integer[] order = new Integer[submeshes.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingInt((Integer i) -> -submeshes.get(i).devices())
        .thenComparingInt(i -> i));
    int[] first = new int[order.length];
    int[] used = new int[nodes];
    int nextWhole = 0;
    for (int i : order) {
      SubmeshShape s = submeshes.get(i);
      if (s.m() == gpusPerNode) {
        // Larger submeshes come first, so every whole-node one precedes the partial ones.
        first[i] = nextWhole * gpusPerNode;
        for (int k = 0; k < s.n(); k++) {
          used[nextWhole + k] = gpusPerNode;
        }
        nextWhole += s.n();
        continue;
      }
      int node = nextWhole;
      while (node < nodes && used[node] + s.m() > gpusPerNode) {
        node++;
      }
      if (node == nodes) {
        return Optional.empty();
      }
      first[i] = node * gpusPerNode + used[node];
      used[node] += s.m();
    }
    return Optional.of(first);
  }

  /**
   * Whether a submesh placed at a device keeps to the rule: fewer than {@code M} GPUs inside one
   * node, whole nodes from a node boundary.
   *
   * @param firstDevice its first device
   * @param s the submesh
   * @param gpusPerNode GPUs per node M
   * @return whether it crosses no node it does not fill
   */
  public static boolean inNodes(long firstDevice, SubmeshShape s, int gpusPerNode) {
    if (s.m() == gpusPerNode) {
      return firstDevice % gpusPerNode == 0;
    }
    return s.n() == 1 && s.m() < gpusPerNode
        && firstDevice / gpusPerNode == (firstDevice + s.m() - 1) / gpusPerNode;
  }

  /**
   * Whether a submesh shape tiles a node: its GPUs are a power of two that divides a node's, or it
   * is whole nodes. Any set of such shapes whose GPUs sum to whole nodes can be placed (their sizes
   * below a node divide each other and the node, so first fit decreasing fills every node).
   *
   * @param s the shape
   * @param gpusPerNode GPUs per node M
   * @return whether it tiles a node
   */
  public static boolean tilesNode(SubmeshShape s, int gpusPerNode) {
    return s.m() == gpusPerNode
        || (s.n() == 1 && Integer.bitCount(s.m()) == 1 && gpusPerNode % s.m() == 0);
  }

  /**
   * The shapes of a list that tile a node ({@link #tilesNode}), by their index in it.
   *
   * @param shapes the shapes
   * @param gpusPerNode GPUs per node M
   * @return the indices, ascending
   */
  public static List<Integer> tilingIndices(List<SubmeshShape> shapes, int gpusPerNode) {
    List<Integer> out = new ArrayList<>();
    for (int j = 0; j < shapes.size(); j++) {
      if (tilesNode(shapes.get(j), gpusPerNode)) {
        out.add(j);
      }
    }
    return out;
  }
}
