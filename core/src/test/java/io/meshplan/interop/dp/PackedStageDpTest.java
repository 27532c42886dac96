package io.meshplan.interop.dp;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.interop.space.SubmeshPlacement;
import io.meshplan.interop.space.SubmeshShape;
import java.util.List;
import java.util.OptionalDouble;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link PackedStageDp}: the stage DP returns only partitions whose submeshes fit the nodes. */
class PackedStageDpTest {

  /**
   * Three layers on 2 x 6 GPUs (shapes 1x1, 1x2, 1x4, 1x6, 2x6), B = 1. Only the 4-GPU submesh
   * runs a layer fast (1 s; 10 s elsewhere), so the plain DP takes three 4-GPU stages: 12 GPUs,
   * the cluster's, in 3 s, but two 6-GPU nodes hold only two of them. The packed DP plans again
   * over the shapes that tile a node (1x1, 1x2, 1x6, 2x6), where every layer takes 10 s, and
   * returns a 30 s plan that fits. (The best placeable plan, one 4-GPU stage beside a 2-GPU stage
   * in one node and a 6-GPU stage, takes 1 + 10 + 10 = 21 s: the fallback does not look for it,
   * as the class comment says; brute force finds it.)
   */
  @Test
  void threeFourGpuStagesOnTwoSixGpuNodesAreNotReturned() {
    List<SubmeshShape> shapes = SubmeshShape.alpaShapes(2, 6);
    ArrayStageCostTable.Builder b = ArrayStageCostTable.builder(3, shapes.size());
    int tag = 0;
    for (int k = 0; k < 3; k++) {
      for (int i = k; i < 3; i++) {
        for (int j = 0; j < shapes.size(); j++) {
          double t = (i - k + 1) * (shapes.get(j).m() == 4 ? 1.0 : 10.0);
          b.add(k, i, j, new StageOption(t, 0, 0, tag++));
        }
      }
    }
    StageDpProblem p = new StageDpProblem(shapes, 2, 6, b.build(), 100, 1);
    StagePartition plain = ((StageDpResult.Feasible) new StageDp(p).solve()).plan();
    assertThat(PackedStageDp.submeshes(plain)).containsOnly(new SubmeshShape(1, 4));
    assertThat(plain.objectiveSeconds()).isEqualTo(3.0);
    assertThat(PackedStageDp.placeable(p, plain)).isFalse();
    StagePartition packed = ((StageDpResult.Feasible) PackedStageDp.solve(p)).plan();
    assertThat(PackedStageDp.placeable(p, packed)).isTrue();
    assertThat(packed.objectiveSeconds()).isEqualTo(30.0);
    assertThat(new BruteForceStageDp(p, true).objective()).hasValue(21.0);
    for (Stage s : packed.stages()) {
      assertThat(SubmeshPlacement.tilesNode(s.submesh(), 6)).isTrue();
      // Indices refer to the problem's own shape list.
      assertThat(shapes.get(s.submeshIndex())).isEqualTo(s.submesh());
    }
  }

  /**
   * 500 seeded random tables on 1 to 3 nodes of 3 to 12 GPUs (mostly not powers of two): the
   * packed DP's plan can always be placed; it is the plain DP's plan when that can be placed,
   * which is then the best placeable plan by brute force; otherwise it is the best plan of the
   * node-tiling shapes, never better than the brute-force best placeable plan.
   */
  @Test
  void returnsOnlyPlaceablePlansOnSeededRandomTables() {
    int[] perNode = {3, 5, 6, 7, 10, 12, 4, 8};
    int fallbacks = 0;
    int same = 0;
    for (int seed = 0; seed < 500; seed++) {
      Random rnd = new Random(seed);
      int nodes = 1 + rnd.nextInt(3);
      int m = perNode[rnd.nextInt(perNode.length)];
      int layers = 1 + rnd.nextInt(4);
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(nodes, m);
      StageCostTable table = StageDpTest.randomTable(rnd, layers, shapes.size());
      StageDpProblem p = new StageDpProblem(shapes, nodes, m, table, 10 + rnd.nextInt(25),
          1 + rnd.nextInt(4));
      String where = "seed " + seed + " on " + nodes + "x" + m;
      StageDpResult plain = new StageDp(p).solve();
      StageDpResult packed = PackedStageDp.solve(p);
      OptionalDouble best = new BruteForceStageDp(p, true).objective();
      if (!(packed instanceof StageDpResult.Feasible f)) {
        continue;
      }
      StagePartition plan = f.plan();
      assertThat(PackedStageDp.placeable(p, plan)).as(where).isTrue();
      assertThat(best).as(where).isPresent();
      assertThat(plan.objectiveSeconds()).as(where)
          .isGreaterThanOrEqualTo(best.getAsDouble());
      StagePartition first = ((StageDpResult.Feasible) plain).plan();
      if (PackedStageDp.placeable(p, first)) {
        same++;
        assertThat(plan).as(where).isEqualTo(first);
        assertThat(plan.objectiveSeconds()).as(where).isEqualTo(best.getAsDouble());
      } else {
        fallbacks++;
        for (Stage s : plan.stages()) {
          assertThat(SubmeshPlacement.tilesNode(s.submesh(), m)).as(where).isTrue();
        }
      }
    }
    assertThat(same).isGreaterThan(200);
    assertThat(fallbacks).isGreaterThan(5);
  }
}
