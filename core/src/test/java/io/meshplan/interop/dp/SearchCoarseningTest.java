package io.meshplan.interop.dp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.interop.space.SubmeshShape;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The node granule and layer groups that keep the stage DP small on very large clusters. */
class SearchCoarseningTest {

  @Test
  void smallAndMidSizeClustersKeepAlpasShapes() {
    // 13B on 50 x 4: 40^2 x 52 shapes x 200 devices = 1.66e7 <= 1e9.
    assertThat(SubmeshShape.nodeGranule(50, 4, 40)).isEqualTo(1);
    // 70B on 128 x 8: 80^2 x 131 shapes (1x1, 1x2, 1x4, 1x8, 2x8 .. 128x8) x 1,024 = 8.58e8.
    assertThat(SubmeshShape.nodeGranule(128, 8, 80)).isEqualTo(1);
    assertThat(SubmeshShape.shapes(128, 8, 1)).isEqualTo(SubmeshShape.alpaShapes(128, 8));
  }

  @Test
  void theLargestClustersUseWholeNodeBlocks() {
    // 405B (126 layers) on 2,048 x 8: u = 8 gives 126^2 x 256 x 256 = 1.04e9 > 1e9; u = 16 gives
    // 126^2 x 128 x 128 = 2.60e8.
    assertThat(SubmeshShape.nodeGranule(2048, 8, 126)).isEqualTo(16);
    List<SubmeshShape> shapes = SubmeshShape.shapes(2048, 8, 16);
    assertThat(shapes).hasSize(128);
    assertThat(shapes.get(0)).isEqualTo(new SubmeshShape(16, 8));
    assertThat(shapes.get(127)).isEqualTo(new SubmeshShape(2048, 8));
    assertThat(SubmeshShape.layerGroup(126, 128, 128)).isEqualTo(1);
  }

  @Test
  void aPrimeNodeCountGroupsLayersInstead() {
    // 2,039 nodes is prime: no granule divides it, so u = 1 with 2,042 shapes and 16,312 devices.
    // ceil(126 / g)^2 x 2,042 x 16,312 <= 1e9 needs ceil(126 / g) <= 5: g = 25 gives 6, g = 26
    // gives 5.
    assertThat(SubmeshShape.nodeGranule(2039, 8, 126)).isEqualTo(1);
    assertThat(SubmeshShape.layerGroup(126, 2042, 16312)).isEqualTo(26);
    assertThatThrownBy(() -> SubmeshShape.shapes(2039, 8, 16))
        .hasMessageContaining("does not divide");
  }

  @Test
  void groupedTablesPlanOnGroupBoundariesAndNeverBeatTheFullTable() {
    int checked = 0;
    for (int seed = 0; seed < 200; seed++) {
      Random rnd = new Random(seed);
      int layers = 2 + rnd.nextInt(6);
      int group = 2 + rnd.nextInt(2);
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(2, 2);
      StageCostTable table = randomTable(rnd, layers, shapes.size());
      GroupedStageCostTable grouped = new GroupedStageCostTable(table, group);
      assertThat(grouped.layers()).isEqualTo((layers + group - 1) / group);
      int b = 1 << rnd.nextInt(3);
      StageDpResult full = new StageDp(new StageDpProblem(shapes, 2, 2, table, 40, b)).solve();
      StageDpResult coarse = new StageDp(new StageDpProblem(shapes, 2, 2, grouped, 40, b)).solve();
      if (!(coarse instanceof StageDpResult.Feasible f)) {
        continue;
      }
      checked++;
      StagePartition plan = grouped.ungroup(f.plan());
      int next = 0;
      for (Stage s : plan.stages()) {
        assertThat(s.firstLayer()).as("seed %d", seed).isEqualTo(next);
        assertThat(s.firstLayer() % group).as("seed %d", seed).isZero();
        assertThat(table.options(s.firstLayer(), s.lastLayer(), s.submeshIndex()))
            .as("seed %d", seed).contains(s.option());
        next = s.lastLayer() + 1;
      }
      assertThat(next).as("seed %d", seed).isEqualTo(layers);
      assertThat(plan.objectiveSeconds()).isEqualTo(
          StagePartition.objective(plan.stages(), b));
      // A restriction of the search space can only be as good as the full search.
      assertThat(full).isInstanceOf(StageDpResult.Feasible.class);
      assertThat(plan.objectiveSeconds()).as("seed %d", seed).isGreaterThanOrEqualTo(
          ((StageDpResult.Feasible) full).plan().objectiveSeconds());
    }
    assertThat(checked).isGreaterThan(50);
  }

  private static StageCostTable randomTable(Random rnd, int layers, int shapes) {
    ArrayStageCostTable.Builder b = ArrayStageCostTable.builder(layers, shapes);
    int tag = 0;
    for (int k = 0; k < layers; k++) {
      for (int i = k; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          b.add(k, i, j, new StageOption(1 + rnd.nextInt(20), rnd.nextInt(12), rnd.nextInt(6),
              tag++));
        }
      }
    }
    return b.build();
  }
}
