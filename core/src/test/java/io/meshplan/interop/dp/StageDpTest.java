package io.meshplan.interop.dp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.interop.space.SubmeshShape;
import java.util.List;
import java.util.OptionalDouble;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StageDpTest {
  private static final List<SubmeshShape> SHAPES_1X2 = SubmeshShape.alpaShapes(1, 2);

  @Test
  void alpaShapesArePowersOfTwoInOneNodeThenWholeNodes() {
    assertThat(SubmeshShape.alpaShapes(3, 8)).containsExactly(new SubmeshShape(1, 1),
        new SubmeshShape(1, 2), new SubmeshShape(1, 4), new SubmeshShape(1, 8),
        new SubmeshShape(2, 8), new SubmeshShape(3, 8));
    // M = 6 is not a power of two: (1,1),(1,2),(1,4) then (1,6) itself.
    assertThat(SubmeshShape.alpaShapes(1, 6)).containsExactly(new SubmeshShape(1, 1),
        new SubmeshShape(1, 2), new SubmeshShape(1, 4), new SubmeshShape(1, 6));
    assertThat(SubmeshShape.alpaShapes(2, 1)).containsExactly(new SubmeshShape(1, 1),
        new SubmeshShape(2, 1));
  }

  @Test
  void dpEqualsBruteForceOnSeededRandomTables() {
    int[][] clusters = {{1, 2}, {2, 2}, {1, 4}, {2, 4}, {1, 1}, {3, 2}};
    int[] microbatches = {1, 2, 4, 8};
    int feasible = 0;
    int infeasible = 0;
    for (int seed = 0; seed < 400; seed++) {
      Random rnd = new Random(seed);
      int[] cluster = clusters[seed % clusters.length];
      int layers = 1 + rnd.nextInt(6);
      int b = microbatches[rnd.nextInt(microbatches.length)];
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(cluster[0], cluster[1]);
      if (seed % 3 == 2) {
        // A subset of the shapes, so that device counts may go in units larger than 1 (e.g. only
        // 1x2 and 2x2 on 2 x 2: units of 2 devices).
        List<SubmeshShape> subset = new java.util.ArrayList<>();
        for (SubmeshShape s : shapes) {
          if (rnd.nextBoolean()) {
            subset.add(s);
          }
        }
        shapes = subset.isEmpty() ? List.of(shapes.get(shapes.size() - 1)) : List.copyOf(subset);
      }
      StageCostTable table = randomTable(rnd, layers, shapes.size());
      double capacity = 10 + rnd.nextInt(25);
      StageDpProblem problem = new StageDpProblem(shapes, cluster[0], cluster[1], table,
          capacity, b);
      BruteForceStageDp brute = new BruteForceStageDp(problem);
      OptionalDouble expected = brute.objective();
      StageDpResult result = new StageDp(problem).solve();
      String where = "seed " + seed;
      if (expected.isPresent()) {
        feasible++;
        assertThat(result).as(where).isInstanceOf(StageDpResult.Feasible.class);
        StagePartition plan = ((StageDpResult.Feasible) result).plan();
        assertThat(plan.objectiveSeconds()).as(where).isEqualTo(expected.getAsDouble());
        assertValid(problem, plan, where);
      } else {
        infeasible++;
        assertThat(result).as(where).isInstanceOf(StageDpResult.Infeasible.class);
        assertThat(((StageDpResult.Infeasible) result).minimumMemoryBytes()).as(where)
            .isEqualTo(brute.leastMemory());
      }
    }
    // The seeds exercise both outcomes.
    assertThat(feasible).isGreaterThan(100);
    assertThat(infeasible).isGreaterThan(10);
  }

  /**
   * The t_max branch and bound of {@link StageDp#solve} returns the very plan of the ascending scan
   * with Alpa's early stop (same stages, same options), and never evaluates more latencies than the
   * scan plus the one at the top: 600 seeded random tables with up to 7 layers, 1 to 16
   * microbatches, on clusters up to 4 x 4, many with ties (latencies of 1 to 20 whole seconds).
   */
  @Test
  void branchAndBoundOverTmaxReturnsTheScansPlan() {
    int[][] clusters = {{1, 2}, {2, 2}, {1, 4}, {2, 4}, {4, 4}, {3, 2}};
    int compared = 0;
    for (int seed = 0; seed < 600; seed++) {
      Random rnd = new Random(5000 + seed);
      int[] cluster = clusters[seed % clusters.length];
      int layers = 1 + rnd.nextInt(7);
      int b = 2 + rnd.nextInt(15);
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(cluster[0], cluster[1]);
      StageDpProblem problem = new StageDpProblem(shapes, cluster[0], cluster[1],
          randomTable(rnd, layers, shapes.size()), 10 + rnd.nextInt(25), b);
      StageDpResult fast = new StageDp(problem).solve();
      StageDpResult scan = new StageDp(problem).solveByScan();
      String where = "seed " + seed;
      assertThat(fast.getClass()).as(where).isEqualTo(scan.getClass());
      if (fast instanceof StageDpResult.Feasible f) {
        StageDpResult.Feasible s = (StageDpResult.Feasible) scan;
        assertThat(f.plan()).as(where).isEqualTo(s.plan());
        compared++;
      }
    }
    assertThat(compared).isGreaterThan(300);
  }

  /**
   * Clusters of more than 64 devices, so that device-count sets span several machine words
   * (20 x 4 = 80 and 17 x 8 = 136 devices).
   */
  @Test
  void dpEqualsBruteForceOnLargerClusters() {
    assertMatchesBruteForce(new int[][] {{20, 4}, {17, 8}}, 1000);
  }

  /**
   * Forty seeded random tables of 1 to 3 layers on the given clusters in turn: the DP's objective
   * equals brute force's, its plan is valid, and an infeasible table reports brute force's least
   * memory; more than ten of them are feasible.
   */
  private static void assertMatchesBruteForce(int[][] clusters, long seedBase) {
    int feasible = 0;
    for (int seed = 0; seed < 40; seed++) {
      Random rnd = new Random(seedBase + seed);
      int[] cluster = clusters[seed % clusters.length];
      int layers = 1 + rnd.nextInt(3);
      int b = 1 << rnd.nextInt(4);
      List<SubmeshShape> shapes = SubmeshShape.alpaShapes(cluster[0], cluster[1]);
      StageDpProblem problem = new StageDpProblem(shapes, cluster[0], cluster[1],
          randomTable(rnd, layers, shapes.size()), 10 + rnd.nextInt(25), b);
      BruteForceStageDp brute = new BruteForceStageDp(problem);
      OptionalDouble expected = brute.objective();
      StageDpResult result = new StageDp(problem).solve();
      if (expected.isPresent()) {
        feasible++;
        StagePartition plan = ((StageDpResult.Feasible) result).plan();
        assertThat(plan.objectiveSeconds()).as("seed " + seed)
            .isEqualTo(expected.getAsDouble());
        assertValid(problem, plan, "seed " + seed);
      } else {
        assertThat(((StageDpResult.Infeasible) result).minimumMemoryBytes()).as("seed " + seed)
            .isEqualTo(brute.leastMemory());
      }
    }
    assertThat(feasible).isGreaterThan(10);
  }

  static StageCostTable randomTable(Random rnd, int layers, int shapes) {
    ArrayStageCostTable.Builder b = ArrayStageCostTable.builder(layers, shapes);
    int tag = 0;
    for (int k = 0; k < layers; k++) {
      for (int i = k; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          if (rnd.nextInt(5) == 0) {
            continue;
          }
          int n = 1 + rnd.nextInt(2);
          for (int x = 0; x < n; x++) {
            b.add(k, i, j, new StageOption(1 + rnd.nextInt(20), rnd.nextInt(12), rnd.nextInt(6),
                tag++));
          }
        }
      }
    }
    return b.build();
  }

  private static void assertValid(StageDpProblem problem, StagePartition plan, String where) {
    assertThat(plan.devices()).as(where).isEqualTo(problem.devices());
    assertThat(plan.stages().get(plan.stages().size() - 1).lastLayer()).as(where)
        .isEqualTo(problem.layers() - 1);
    for (int i = 0; i < plan.stages().size(); i++) {
      Stage s = plan.stages().get(i);
      assertThat(problem.table().options(s.firstLayer(), s.lastLayer(), s.submeshIndex()))
          .as(where).contains(s.option());
      assertThat(plan.memoryBytes(i)).as(where).isLessThanOrEqualTo(problem.memoryCapacityBytes());
    }
    assertThat(plan.objectiveSeconds()).isEqualTo(StagePartition.objective(plan.stages(),
        problem.microbatches()));
  }

  /**
   * Two layers on a 1 x 2 cluster (shapes 1x1 and 1x2), B = 4, capacity 10 bytes. One stage of
   * both layers on 1x2: latency 2, static 12 bytes, so even one microbatch needs 12 + 1*2 = 14 >
   * 10. Two stages on 1x1: latency 3 each, static 5, activations 2; the first holds min(2, 4) = 2
   * microbatches: 5 + 2*2 = 9 <= 10, the second holds 1: 5 + 2 = 7. Objective 3 + 3 + 3*3 = 15.
   */
  @Test
  void onlyTheDeeperPipelineFitsInMemory() {
    StageCostTable table = ArrayStageCostTable.builder(2, 2)
        .add(0, 1, 1, new StageOption(2, 12, 2, 7))
        .add(0, 0, 0, new StageOption(3, 5, 2, 1))
        .add(1, 1, 0, new StageOption(3, 5, 2, 2))
        .build();
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 10, 4)).solve();
    StagePartition plan = ((StageDpResult.Feasible) r).plan();
    assertThat(plan.stages()).extracting(Stage::tag).containsExactly(1, 2);
    assertThat(plan.objectiveSeconds()).isEqualTo(15.0);
    assertThat(plan.memoryBytes(0)).isEqualTo(9.0);
    assertThat(plan.memoryBytes(1)).isEqualTo(7.0);
    // With 14 bytes the single stage fits: 2 + 3*2 = 8 < 15.
    StageDpResult roomy = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 14, 4))
        .solve();
    assertThat(((StageDpResult.Feasible) roomy).plan().stages()).extracting(Stage::tag)
        .containsExactly(7);
    assertThat(((StageDpResult.Feasible) roomy).plan().objectiveSeconds()).isEqualTo(8.0);
  }

  /**
   * The first stage of a two-stage pipeline holds 2 microbatches, so with B = 2 the layout
   * matters: on 1x1 + 1x1 the heavy-activation layer first needs 1 + 2*4 = 9 > 8; put second it
   * needs 1 + 1*4 = 5 while the light one first needs 1 + 2*1 = 3. Only layer ranges [0,0],[1,1]
   * exist, so the heavy layer 0 makes every plan infeasible at capacity 8, and the least capacity
   * is 9.
   */
  @Test
  void inFlightMicrobatchesOfEarlierStagesCount() {
    StageCostTable table = ArrayStageCostTable.builder(2, 2)
        .add(0, 0, 0, new StageOption(1, 1, 4, 0))
        .add(1, 1, 0, new StageOption(1, 1, 1, 1))
        .build();
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 8, 2)).solve();
    assertThat(((StageDpResult.Infeasible) r).minimumMemoryBytes()).hasValue(9.0);
    // With B = 1 every stage holds one microbatch: 1 + 4 = 5 fits.
    StageDpResult one = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 8, 1)).solve();
    assertThat(one).isInstanceOf(StageDpResult.Feasible.class);
  }

  /**
   * Two layers on 1 x 2. One stage on 1x2: latency 10. Two stages on 1x1: latencies 4 and 7.
   * B = 1: one stage costs 10, two cost 4 + 7 = 11, so one stage wins. B = 8: one stage costs
   * 10 + 7*10 = 80, two cost 11 + 7*7 = 60, so the pipeline wins.
   */
  @Test
  void fewAndManyMicrobatchesPickDifferentPartitions() {
    StageCostTable table = ArrayStageCostTable.builder(2, 2)
        .add(0, 1, 1, new StageOption(10, 0, 0, 0))
        .add(0, 0, 0, new StageOption(4, 0, 0, 1))
        .add(1, 1, 0, new StageOption(7, 0, 0, 2))
        .build();
    StagePartition one = plan(table, 1);
    assertThat(one.stages()).extracting(Stage::tag).containsExactly(0);
    assertThat(one.objectiveSeconds()).isEqualTo(10.0);
    StagePartition many = plan(table, 8);
    assertThat(many.stages()).extracting(Stage::tag).containsExactly(1, 2);
    assertThat(many.objectiveSeconds()).isEqualTo(60.0);
  }

  /**
   * The least-sum plan is not the best, so the t_max loop must score by T*. Two layers on 1 x 2,
   * B = 3. X: one stage on 1x2 with latency 5: sum 5, T* = 5 + 2*5 = 15 (the least sum). Y: two
   * stages on 1x1 with latency 3 each: sum 6, T* = 6 + 2*3 = 12. The smallest feasible t_max is 3,
   * where the DP finds Y; at t_max = 5 it stops since 3*5 = 15 >= 12, after one t_max.
   */
  @Test
  void scoresEachTmaxByTheTrueObjective() {
    StageCostTable table = ArrayStageCostTable.builder(2, 2)
        .add(0, 1, 1, new StageOption(5, 0, 0, 9))
        .add(0, 0, 0, new StageOption(3, 0, 0, 1))
        .add(1, 1, 0, new StageOption(3, 0, 0, 2))
        .build();
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 100, 3)).solve();
    StageDpResult.Feasible f = (StageDpResult.Feasible) r;
    assertThat(f.plan().stages()).extracting(Stage::tag).containsExactly(1, 2);
    assertThat(f.plan().objectiveSeconds()).isEqualTo(12.0);
    assertThat(f.latenciesTried()).isEqualTo(1);
  }

  /**
   * The feasibility recursion keeps a cluster of up to 63 device units in one word per row and
   * larger ones in several: 21 x 3 GPUs (63 units, with 1-GPU submeshes the unit is one GPU) is
   * the last of the first kind, 16 x 4 (64) the first of the second; both match brute force.
   */
  @Test
  void dpEqualsBruteForceOnEitherSideOfOneWord() {
    assertMatchesBruteForce(new int[][] {{21, 3}, {16, 4}}, 7000);
  }

  /**
   * The same trap on a 20 x 4 cluster, where device counts span two machine words: X is one stage
   * on 20x4 (80 devices) with latency 5, T* = 5 + 2*5 = 15 for B = 3; Y is two stages on 10x4 (40
   * devices each) with latency 3, T* = 6 + 2*3 = 12. Finding that Y exists at t_max = 3 needs 40 +
   * 40 = 80 to carry across the 64-bit word boundary.
   */
  @Test
  void smallestFeasibleTmaxIsFoundAcrossWordBoundaries() {
    List<SubmeshShape> shapes = SubmeshShape.alpaShapes(20, 4);
    int half = shapes.indexOf(new SubmeshShape(10, 4));
    int whole = shapes.indexOf(new SubmeshShape(20, 4));
    StageCostTable table = ArrayStageCostTable.builder(2, shapes.size())
        .add(0, 1, whole, new StageOption(5, 0, 0, 9))
        .add(0, 0, half, new StageOption(3, 0, 0, 1))
        .add(1, 1, half, new StageOption(3, 0, 0, 2))
        .build();
    StageDpResult r = new StageDp(new StageDpProblem(shapes, 20, 4, table, 100, 3)).solve();
    StagePartition plan = ((StageDpResult.Feasible) r).plan();
    assertThat(plan.stages()).extracting(Stage::tag).containsExactly(1, 2);
    assertThat(plan.objectiveSeconds()).isEqualTo(12.0);
  }

  /**
   * Equal objectives: layer 0 on 1x2 has two options of latency 3; the DP keeps the option with the
   * smaller latency and then the smaller list index, so tag 10 wins over tag 11.
   */
  @Test
  void equalOptionsKeepTheFirstInTheCell() {
    StageCostTable table = ArrayStageCostTable.builder(1, 2)
        .add(0, 0, 1, new StageOption(3, 0, 0, 10))
        .add(0, 0, 1, new StageOption(3, 0, 0, 11))
        .build();
    assertThat(plan(table, 4).stages()).extracting(Stage::tag).containsExactly(10);
  }

  /**
   * Nothing fits: a single stage needs 5 + 2 * 1 = 7 bytes (B = 2, one stage holds 1 microbatch:
   * 5 + 1 = 6); two stages on 1x1 need max(4 + 2*2, 4 + 1*2) = 8. Capacity 5: the least capacity
   * that lets a plan fit is 6.
   */
  @Test
  void infeasibleSaysTheMemoryNeeded() {
    StageCostTable table = ArrayStageCostTable.builder(2, 2)
        .add(0, 1, 1, new StageOption(1, 5, 1, 0))
        .add(0, 0, 0, new StageOption(1, 4, 2, 1))
        .add(1, 1, 0, new StageOption(1, 4, 2, 2))
        .build();
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 5, 2)).solve();
    assertThat(r).isInstanceOf(StageDpResult.Infeasible.class);
    assertThat(((StageDpResult.Infeasible) r).minimumMemoryBytes()).hasValue(6.0);
  }

  @Test
  void noCoverAtAnyMemoryIsReportedWithoutAValue() {
    // One layer on 1 x 2, but only the 1x1 submesh has an option: 1 device of 2 stays unused.
    StageCostTable table = ArrayStageCostTable.builder(1, 2)
        .add(0, 0, 0, new StageOption(1, 0, 0, 0)).build();
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 100, 1)).solve();
    assertThat(((StageDpResult.Infeasible) r).minimumMemoryBytes()).isEmpty();
  }

  @Test
  void rejectsTablesThatDoNotMatchTheShapes() {
    StageCostTable table = ArrayStageCostTable.builder(1, 3).build();
    assertThatThrownBy(() -> new StageDpProblem(SHAPES_1X2, 1, 2, table, 1, 1))
        .hasMessageContaining("3 submeshes but 2 shapes");
    assertThatThrownBy(() -> new StageDpProblem(List.of(new SubmeshShape(2, 2)), 1, 2,
        ArrayStageCostTable.builder(1, 1).build(), 1, 1)).hasMessageContaining("does not fit");
  }

  private static StagePartition plan(StageCostTable table, int b) {
    StageDpResult r = new StageDp(new StageDpProblem(SHAPES_1X2, 1, 2, table, 100, b)).solve();
    return ((StageDpResult.Feasible) r).plan();
  }
}
