package io.meshplan.interop.space;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link SubmeshPlacement}: every submesh inside one node or on whole nodes, and a placement
 * exactly when a brute-force packer finds one.
 */
class SubmeshPlacementTest {
  private static SubmeshShape s(int n, int m) {
    return new SubmeshShape(n, m);
  }

  /**
   * The issue's plan of llama3-70b on 4 x 8: stages of 8, 8, 4, 8, 4 GPUs. In pipeline order the
   * fourth would take devices 20-27, half of node 2 and half of node 3; largest first puts the
   * three whole nodes on nodes 0-2 (stages 0, 1, 3) and the two halves in node 3 (stage 2 on
   * 24-27, stage 4 on 28-31).
   */
  @Test
  void theIssuesPlanIsPlacedLargestFirst() {
    List<SubmeshShape> stages = List.of(s(1, 8), s(1, 8), s(1, 4), s(1, 8), s(1, 4));
    assertThat(SubmeshPlacement.inNodes(20, s(1, 8), 8)).isFalse();
    assertThat(SubmeshPlacement.place(stages, 4, 8)).hasValueSatisfying(
        first -> assertThat(first).containsExactly(0, 8, 24, 16, 28));
  }

  /** Stages in pipeline order stay there when none crosses a node. */
  @Test
  void pipelineOrderIsKeptWhenItCrossesNoNode() {
    List<SubmeshShape> stages = List.of(s(1, 4), s(1, 2), s(1, 2), s(2, 8), s(1, 8));
    assertThat(SubmeshPlacement.place(stages, 4, 8)).hasValueSatisfying(
        first -> assertThat(first).containsExactly(0, 4, 6, 8, 24));
  }

  /**
   * Six GPUs per node: three 4-GPU stages sum to the 12 GPUs of two nodes, but each node holds
   * only one of them (4 + 4 > 6). Stages of 4, 1, 4, 2, 1 cross in pipeline order (the second 4
   * on devices 5-8); largest first gives node 0 the first 4 (0-3) and the 2 (4-5), node 1 the
   * second 4 (6-9) and both 1s (10, 11).
   */
  @Test
  void fourGpuStagesOnSixGpuNodesDoNotAlwaysPack() {
    assertThat(SubmeshPlacement.place(List.of(s(1, 4), s(1, 4), s(1, 4)), 2, 6)).isEmpty();
    assertThat(SubmeshPlacement.place(List.of(s(1, 4), s(1, 1), s(1, 4), s(1, 2), s(1, 1)), 2,
        6)).hasValueSatisfying(first -> assertThat(first).containsExactly(0, 10, 6, 4, 11));
    // A submesh of part of several nodes is not contiguous in device order.
    assertThat(SubmeshPlacement.place(List.of(s(2, 4)), 2, 8)).isEmpty();
    assertThat(SubmeshPlacement.tilesNode(s(1, 4), 6)).isFalse();
    assertThat(SubmeshPlacement.tilesNode(s(1, 2), 6)).isTrue();
    assertThat(SubmeshPlacement.tilesNode(s(2, 6), 6)).isTrue();
    assertThat(SubmeshPlacement.tilingIndices(SubmeshShape.alpaShapes(2, 6), 6))
        .containsExactly(0, 1, 3, 4);
  }

  /**
   * 3,000 seeded random clusters (1 to 8 nodes of 1 to 16 GPUs) and multisets of Alpa's shapes:
   * a placement exists exactly when the brute-force packer finds one, and the placement keeps
   * every submesh inside one node or on whole nodes, on the cluster, without overlap.
   */
  @Test
  void placementAgreesWithBruteForcePacking() {
    int packed = 0;
    int refused = 0;
    for (int seed = 0; seed < 3000; seed++) {
      Random rnd = new Random(seed);
      int nodes = 1 + rnd.nextInt(8);
      int m = 1 + rnd.nextInt(16);
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(nodes, m);
      List<SubmeshShape> partial = shapes.stream().filter(x -> x.m() < m).toList();
      List<SubmeshShape> set = new ArrayList<>();
      int total = nodes * m;
      // Mostly sets that sum to the cluster, as the DP gives; some that leave GPUs free.
      int target = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(total) : total;
      int used = 0;
      while (used < target && set.size() < 10) {
        // Smaller-than-node shapes more often: they are the ones that may not pack.
        List<SubmeshShape> from = partial.isEmpty() || rnd.nextInt(4) == 0 ? shapes : partial;
        SubmeshShape pick = from.get(rnd.nextInt(from.size()));
        if (used + pick.devices() <= target) {
          set.add(pick);
          used += pick.devices();
        } else if (rnd.nextInt(3) == 0) {
          break;
        }
      }
      String where = "seed " + seed + ": " + set + " on " + nodes + "x" + m;
      boolean brute = bruteForcePacks(set, nodes, m);
      Optional<int[]> placed = SubmeshPlacement.place(set, nodes, m);
      assertThat(placed.isPresent()).as(where).isEqualTo(brute);
      if (placed.isPresent()) {
        packed++;
        assertValid(set, placed.get(), nodes, m, where);
      } else {
        refused++;
      }
    }
    assertThat(packed).isGreaterThan(1500);
    assertThat(refused).isGreaterThan(50);
  }

  private static void assertValid(List<SubmeshShape> set, int[] first, int nodes, int m,
      String where) {
    boolean[] taken = new boolean[nodes * m];
    for (int i = 0; i < set.size(); i++) {
      SubmeshShape s = set.get(i);
      assertThat(SubmeshPlacement.inNodes(first[i], s, m)).as(where + " stage " + i).isTrue();
      assertThat(first[i] + s.devices()).as(where).isLessThanOrEqualTo(nodes * m);
      for (int d = first[i]; d < first[i] + s.devices(); d++) {
        assertThat(taken[d]).as(where + " device " + d).isFalse();
        taken[d] = true;
      }
    }
  }

  /**
   * Whether the submeshes can be placed: whole-node ones on whole nodes, each smaller one in some
   * node with room (any subset of a node's GPUs can be made contiguous by renumbering them), by
   * trying every assignment of the smaller ones to the free nodes.
   */
  private static boolean bruteForcePacks(List<SubmeshShape> set, int nodes, int m) {
    int whole = 0;
    List<Integer> parts = new ArrayList<>();
    for (SubmeshShape s : set) {
      if (s.m() == m) {
        whole += s.n();
      } else if (s.n() == 1 && s.m() < m) {
        parts.add(s.m());
      } else {
        return false;
      }
    }
    if (whole > nodes) {
      return false;
    }
    int[] room = new int[nodes - whole];
    Arrays.fill(room, m);
    return assign(parts, 0, room);
  }

  private static boolean assign(List<Integer> parts, int i, int[] room) {
    if (i == parts.size()) {
      return true;
    }
    for (int b = 0; b < room.length; b++) {
      if (room[b] >= parts.get(i)) {
        room[b] -= parts.get(i);
        boolean ok = assign(parts, i + 1, room);
        room[b] += parts.get(i);
        if (ok) {
          return true;
        }
      }
    }
    return false;
  }
}
