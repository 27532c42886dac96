package io.meshplan.intraop.solve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import io.meshplan.model.LlamaForwardBuilder;
import io.meshplan.model.Presets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The memory-bound path of {@link ReducingIlpSolver} (Lagrangian search, threshold mixing of the
 * bracketing plans, local search): on seeded random problems small enough for {@link
 * ExhaustiveIlpSolver}, the plan fits, the reported bound is never above the true optimum, and the
 * optimum lies within the reported gap; plus the LLaMA2-13B 8x8 regression against CBC.
 */
class MemoryBoundSolverTest {

  /**
   * A chain of {@code blocks} identical blocks of two nodes (a "weight" node whose strategies trade
   * bytes for cost, and an "activation" node), each block's weight resident at every step, and a
   * short-lived activation item per block. Node costs and bytes are shared by all blocks, so at
   * one multiplier every block makes the same choice: the case threshold mixing is for.
   */
  private static IlpProblem repeatedBlocks(Random rnd, int blocks) {
    int sw = 2 + rnd.nextInt(2);
    int sa = 2 + rnd.nextInt(2);
    double[] cw = new double[sw];
    double[] bw = new double[sw];
    for (int i = 0; i < sw; i++) {
      cw[i] = rnd.nextInt(20);
      bw[i] = 1 + rnd.nextInt(10);
    }
    double[] ca = new double[sa];
    double[] ba = new double[sa];
    for (int i = 0; i < sa; i++) {
      ca[i] = rnd.nextInt(20);
      ba[i] = 1 + rnd.nextInt(4);
    }
    double[] inner = new double[sw * sa];
    for (int k = 0; k < inner.length; k++) {
      inner[k] = rnd.nextInt(15);
    }
    double[] link = new double[sa * sw];
    for (int k = 0; k < link.length; k++) {
      link[k] = rnd.nextInt(15);
    }
    int n = 2 * blocks;
    double[][] costs = new double[n][];
    List<IlpEdge> edges = new ArrayList<>();
    for (int b = 0; b < blocks; b++) {
      costs[2 * b] = cw.clone();
      costs[2 * b + 1] = ca.clone();
      edges.add(new IlpEdge(2 * b, 2 * b + 1, inner));
      if (b + 1 < blocks) {
        edges.add(new IlpEdge(2 * b + 1, 2 * b + 2, link));
      }
    }
    int[] node = new int[n];
    int[] start = new int[n];
    int[] end = new int[n];
    double[][] bytes = new double[n][];
    for (int b = 0; b < blocks; b++) {
      node[2 * b] = 2 * b;
      start[2 * b] = 0;
      end[2 * b] = blocks - 1;
      bytes[2 * b] = bw;
      node[2 * b + 1] = 2 * b + 1;
      start[2 * b + 1] = b;
      end[2 * b + 1] = b;
      bytes[2 * b + 1] = ba;
    }
    int[] steps = new int[blocks];
    for (int t = 0; t < blocks; t++) {
      steps[t] = t;
    }
    double minBytes = blocks * java.util.Arrays.stream(bw).min().orElseThrow() + 4;
    double maxBytes = blocks * java.util.Arrays.stream(bw).max().orElseThrow() + 4;
    double budget = minBytes + rnd.nextDouble() * (maxBytes - minBytes);
    return new IlpProblem(costs, edges,
        new MemoryConstraint(budget, steps, node, start, end, bytes));
  }

  private static IlpProblem randomMemory(Random rnd) {
    int n = 3 + rnd.nextInt(5);
    double[][] costs = new double[n][];
    for (int v = 0; v < n; v++) {
      costs[v] = new double[2 + rnd.nextInt(2)];
      for (int i = 0; i < costs[v].length; i++) {
        costs[v][i] = rnd.nextInt(20);
      }
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int u = 0; u < n; u++) {
      for (int v = u + 1; v < n; v++) {
        if (rnd.nextDouble() < 0.5) {
          double[] m = new double[costs[u].length * costs[v].length];
          for (int k = 0; k < m.length; k++) {
            m[k] = rnd.nextInt(30);
          }
          edges.add(new IlpEdge(u, v, m));
        }
      }
    }
    int[] node = new int[n];
    int[] start = new int[n];
    int[] end = new int[n];
    double[][] bytes = new double[n][];
    for (int v = 0; v < n; v++) {
      node[v] = v;
      start[v] = rnd.nextInt(n);
      end[v] = start[v] + rnd.nextInt(n - start[v]);
      bytes[v] = new double[costs[v].length];
      for (int i = 0; i < bytes[v].length; i++) {
        bytes[v][i] = 1 + rnd.nextInt(10);
      }
    }
    int[] steps = new int[n];
    for (int t = 0; t < n; t++) {
      steps[t] = t;
    }
    return new IlpProblem(costs, edges,
        new MemoryConstraint(8 + rnd.nextInt(15), steps, node, start, end, bytes));
  }

  /**
   * Checks one solve of the Lagrangian path alone (no CP-SAT gap closing) against the exhaustive
   * optimum; returns whether the solver reported a gap.
   */
  private static boolean checkAgainstExhaustive(IlpProblem p, String label) {
    IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
    IlpSolution lag = new ReducingIlpSolver(10, 1, 0).solve(p);
    if (!ref.hasSolution()) {
      assertThat(lag.hasSolution()).as(label).isFalse();
      return false;
    }
    assertThat(lag.hasSolution()).as(label).isTrue();
    assertThat(SolutionEvaluator.evaluate(p, lag.choice()).feasible()).as(label).isTrue();
    assertThat(lag.objective()).as(label).isGreaterThanOrEqualTo(ref.objective() - 1e-9);
    assertThat(lag.bound()).as(label).isNotNaN();
    // The bound is proven: never above the true optimum, so the optimum is within the gap.
    assertThat(lag.bound()).as(label).isLessThanOrEqualTo(ref.objective() + 1e-6);
    if (lag.status() == SolveStatus.OPTIMAL) {
      assertThat(lag.objective()).as(label).isLessThanOrEqualTo(ref.objective() + 1e-6);
    }
    return lag.status() == SolveStatus.FEASIBLE;
  }

  @Test
  void lagrangianPlansFitAndBoundsNeverExceedTheOptimum() {
    Random rnd = new Random(2026);
    int gaps = 0;
    int solved = 0;
    for (int k = 0; k < 60; k++) {
      IlpProblem p = randomMemory(rnd);
      solved++;
      if (checkAgainstExhaustive(p, "random " + k)) {
        gaps++;
      }
    }
    for (int k = 0; k < 60; k++) {
      IlpProblem p = repeatedBlocks(rnd, 2 + rnd.nextInt(5));
      solved++;
      if (checkAgainstExhaustive(p, "blocks " + k)) {
        gaps++;
      }
    }
    assertThat(solved).isEqualTo(120);
    // The memory rows must bind often enough that the bound/gap path is really exercised.
    assertThat(gaps).isGreaterThan(5);
  }

  /**
   * The branch and bound alone, started from the Lagrangian plan, against the exhaustive optimum on
   * 160 seeded random memory-bound problems: a search it finishes is exact, one it cuts short (a
   * budget of 3 solves on every fifth case) still returns a feasible plan no worse than its start.
   * Half the cases add a Lagrangian penalty (one random checked step, multiplier 0.5 to 4), whose
   * bound holds for any step and multiplier.
   */
  @Test
  void branchAndBoundIsExactOrSaysItStopped() {
    Random rnd = new Random(77);
    int proven = 0;
    int cut = 0;
    for (int k = 0; k < 160; k++) {
      IlpProblem p = k % 2 == 0 ? randomMemory(rnd) : repeatedBlocks(rnd, 2 + rnd.nextInt(4));
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution lag = new ReducingIlpSolver(10, 1, 0).solve(p);
      if (!ref.hasSolution() || !lag.hasSolution()) {
        continue;
      }
      Penalty pn = k % 4 >= 2 ? randomPenalty(rnd, p) : null;
      long budget = k % 5 == 4 ? 3 : 100_000;
      MemoryBranchAndBound.Result r = branchAndBound(p, pn, budget, lag);
      String where = "case " + k;
      assertThat(SolutionEvaluator.evaluate(p, r.choice()).feasible()).as(where).isTrue();
      assertThat(r.objective()).as(where)
          .isEqualTo(SolutionEvaluator.evaluate(p, r.choice()).objective())
          .isLessThanOrEqualTo(lag.objective())
          .isGreaterThanOrEqualTo(ref.objective() - 1e-9);
      if (r.proven()) {
        proven++;
        assertThat(r.objective()).as(where).isEqualTo(ref.objective(), within(1e-6));
      } else {
        cut++;
      }
    }
    assertThat(proven).isGreaterThan(80);
    assertThat(cut).isGreaterThan(3);
  }

  /**
   * Nodes of 3 to 5 strategies whose bytes repeat (a weight's layouts keep 1, 2 or 4 units, as
   * replicated and sharded layouts do), each node with two items live over different steps: the
   * search branches on groups of strategies alike on both items, so a group taken on one item
   * alone would leave the memory of a fully branched plan undecided. 150 seeded cases, half with a
   * Lagrangian penalty: every search that finishes equals the exhaustive optimum, and most cases
   * have groups of more than one strategy.
   */
  @Test
  void branchAndBoundOverGroupsOfEqualBytesIsExact() {
    Random rnd = new Random(313);
    int proven = 0;
    int grouped = 0;
    for (int k = 0; k < 150; k++) {
      IlpProblem p = repeatedBytes(rnd);
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution lag = new ReducingIlpSolver(10, 1, 0).solve(p);
      if (!ref.hasSolution() || !lag.hasSolution()) {
        continue;
      }
      Penalty pn = k % 2 == 0 ? null : randomPenalty(rnd, p);
      MemoryBranchAndBound.Result r = branchAndBound(p, pn, 100_000, lag);
      String where = "case " + k;
      assertThat(SolutionEvaluator.evaluate(p, r.choice()).feasible()).as(where).isTrue();
      assertThat(r.proven()).as(where).isTrue();
      assertThat(r.objective()).as(where).isEqualTo(ref.objective(), within(1e-6));
      proven++;
      if (hasEqualBytes(p)) {
        grouped++;
      }
    }
    assertThat(proven).isGreaterThan(100);
    assertThat(grouped).isGreaterThan(80);
  }

  /**
   * The branch and bound with the exact memory-free solver, started from the Lagrangian plan.
   *
   * @param pn a Lagrangian penalty, or null
   * @param budget the most memory-free solves
   */
  private static MemoryBranchAndBound.Result branchAndBound(IlpProblem p, Penalty pn,
      long budget, IlpSolution lag) {
    return new MemoryBranchAndBound(p, q -> new ReducingIlpSolver(10, 1, 0).solve(q), budget,
        pn == null ? null : pn.perNode(), pn == null ? 0 : pn.offset())
        .solve(lag.choice(), Long.MAX_VALUE);
  }

  /** A random problem as described at {@link #branchAndBoundOverGroupsOfEqualBytesIsExact}. */
  private static IlpProblem repeatedBytes(Random rnd) {
    int n = 3 + rnd.nextInt(4);
    double[][] costs = new double[n][];
    for (int v = 0; v < n; v++) {
      costs[v] = new double[3 + rnd.nextInt(3)];
      for (int i = 0; i < costs[v].length; i++) {
        costs[v][i] = rnd.nextInt(20);
      }
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int v = 1; v < n; v++) {
      int u = rnd.nextInt(v);
      double[] m = new double[costs[u].length * costs[v].length];
      for (int k = 0; k < m.length; k++) {
        m[k] = rnd.nextInt(30);
      }
      edges.add(new IlpEdge(u, v, m));
    }
    double[] levels = {1, 2, 4};
    int items = 2 * n;
    int[] node = new int[items];
    int[] start = new int[items];
    int[] end = new int[items];
    double[][] bytes = new double[items][];
    for (int it = 0; it < items; it++) {
      int v = it / 2;
      node[it] = v;
      start[it] = rnd.nextInt(n);
      end[it] = start[it] + 1 + rnd.nextInt(n - start[it]);
      bytes[it] = new double[costs[v].length];
      for (int i = 0; i < bytes[it].length; i++) {
        bytes[it][i] = levels[rnd.nextInt(levels.length)];
      }
    }
    int[] steps = new int[n];
    for (int t = 0; t < n; t++) {
      steps[t] = t;
    }
    return new IlpProblem(costs, edges,
        new MemoryConstraint(10 + rnd.nextInt(12), steps, node, start, end, bytes));
  }

  /** Whether two strategies of some node keep the same bytes on all of the node's items. */
  private static boolean hasEqualBytes(IlpProblem p) {
    MemoryConstraint m = p.memory();
    for (int v = 0; v < p.nodeCount(); v++) {
      for (int i = 0; i < p.size(v); i++) {
        for (int j = i + 1; j < p.size(v); j++) {
          boolean same = true;
          for (int it = 0; it < m.itemCount(); it++) {
            if (m.itemNode()[it] == v && m.itemBytes()[it][i] != m.itemBytes()[it][j]) {
              same = false;
            }
          }
          if (same) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * The window search on 120 seeded random memory-bound problems (about 100 of them feasible),
   * from the most expensive feasible plan: a window as large as the problem is the whole problem,
   * solved exactly (the exhaustive optimum); windows of 2 or 3 nodes around the largest memory
   * movers keep the plan feasible, never make it worse, never go below the optimum, and improve it
   * on many cases; half the cases add a Lagrangian penalty, whose bound holds for any step and
   * multiplier.
   */
  @Test
  void windowSearchKeepsPlansFeasibleAndIsExactOnTheWholeProblem() {
    Random rnd = new Random(91);
    int improved = 0;
    int compared = 0;
    for (int k = 0; k < 120; k++) {
      IlpProblem p = k % 2 == 0 ? randomMemory(rnd) : repeatedBlocks(rnd, 2 + rnd.nextInt(4));
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      int[] worst = worstFeasible(p);
      if (!ref.hasSolution() || worst == null) {
        continue;
      }
      compared++;
      String where = "case " + k;
      double startObj = SolutionEvaluator.evaluate(p, worst).objective();
      java.util.function.Function<IlpProblem, IlpSolution> exact =
          q -> new ReducingIlpSolver(10, 1, 0).solve(q);
      // Half the cases add a Lagrangian penalty (one random checked step, multiplier 0.5 to 4).
      double[][] pen = null;
      double offset = 0;
      if (k % 4 >= 2) {
        Penalty pn = randomPenalty(rnd, p);
        pen = pn.perNode();
        offset = pn.offset();
      }
      int[] whole = new WindowSearch(p, p.nodeCount(), 1_000_000, exact, pen, offset)
          .improve(worst, Long.MAX_VALUE);
      assertThat(SolutionEvaluator.evaluate(p, whole).objective()).as(where)
          .isEqualTo(ref.objective(), within(1e-6));
      int[] small = new WindowSearch(p, 2 + k % 2, 1_000_000, exact, pen, offset)
          .improve(worst, Long.MAX_VALUE);
      Evaluation e = SolutionEvaluator.evaluate(p, small);
      assertThat(e.feasible()).as(where).isTrue();
      assertThat(e.objective()).as(where).isLessThanOrEqualTo(startObj)
          .isGreaterThanOrEqualTo(ref.objective() - 1e-9);
      if (e.objective() < startObj) {
        improved++;
      }
    }
    assertThat(compared).isGreaterThanOrEqualTo(90);
    assertThat(improved).isGreaterThan(20);
  }

  /** A Lagrangian penalty: per node and strategy, and the constant it is measured against. */
  private record Penalty(double[][] perNode, double offset) {}

  /**
   * The penalty of one random checked step at a random multiplier mu in [0.5, 4): mu times each
   * strategy's bytes live at that step, against mu times the budget. Its bound holds for any step
   * and multiplier.
   */
  private static Penalty randomPenalty(Random rnd, IlpProblem p) {
    MemoryConstraint m = p.memory();
    int row = rnd.nextInt(m.steps().length);
    double mu = 0.5 + 3.5 * rnd.nextDouble();
    double[][] pen = new double[p.nodeCount()][];
    for (int v = 0; v < pen.length; v++) {
      pen[v] = new double[p.size(v)];
    }
    for (int it = 0; it < m.itemCount(); it++) {
      if (m.stepsFrom(it) <= row && row < m.stepsEnd(it)) {
        for (int i = 0; i < m.itemBytes()[it].length; i++) {
          pen[m.itemNode()[it]][i] += mu * m.itemBytes()[it][i];
        }
      }
    }
    return new Penalty(pen, mu * m.budget());
  }

  /** The feasible plan with the largest objective, by enumeration (small problems), or null. */
  private static int[] worstFeasible(IlpProblem p) {
    int n = p.nodeCount();
    int[] x = new int[n];
    int[] worst = null;
    double worstObj = Double.NEGATIVE_INFINITY;
    while (true) {
      Evaluation e = SolutionEvaluator.evaluate(p, x);
      if (e.feasible() && e.objective() > worstObj && e.objective() < Double.POSITIVE_INFINITY) {
        worstObj = e.objective();
        worst = x.clone();
      }
      int v = 0;
      while (v < n && ++x[v] == p.size(v)) {
        x[v] = 0;
        v++;
      }
      if (v == n) {
        return worst;
      }
    }
  }

  @Test
  void defaultSolverIsExactOnRepeatedBlocks() {
    // With CP-SAT closing the gap of small problems, the default solver is exact.
    Random rnd = new Random(11);
    for (int k = 0; k < 40; k++) {
      IlpProblem p = repeatedBlocks(rnd, 2 + rnd.nextInt(5));
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution red = new ReducingIlpSolver(10, 1).solve(p);
      assertThat(red.hasSolution()).as("case %d", k).isEqualTo(ref.hasSolution());
      if (ref.hasSolution()) {
        assertThat(red.objective()).as("case %d", k).isEqualTo(ref.objective());
      }
    }
  }

  @Test
  void mixingFindsTheBlockwiseOptimumOfManyIdenticalBlocks() {
    // 40 blocks; weight strategies (cost, bytes): (0, 10) and (5, 4); one activation strategy of
    // 0 cost and 1 byte; no edge costs. Budget 40 * 4 + 1 + 6 * 13 = 239 bytes: 13 weights can
    // take the cheap 10-byte layout (13 * 6 = 78 <= 78), so the optimum is 27 * 5 = 135, while
    // the one-multiplier plans are all-cheap (401 bytes, too big) or all-light (cost 200).
    int blocks = 40;
    int n = 2 * blocks;
    double[][] costs = new double[n][];
    List<IlpEdge> edges = new ArrayList<>();
    int[] node = new int[n];
    int[] start = new int[n];
    int[] end = new int[n];
    double[][] bytes = new double[n][];
    for (int b = 0; b < blocks; b++) {
      costs[2 * b] = new double[] {0, 5};
      costs[2 * b + 1] = new double[] {0};
      edges.add(new IlpEdge(2 * b, 2 * b + 1, new double[] {0, 0}));
      if (b + 1 < blocks) {
        edges.add(new IlpEdge(2 * b + 1, 2 * b + 2, new double[] {0, 0}));
      }
      node[2 * b] = 2 * b;
      end[2 * b] = blocks - 1;
      bytes[2 * b] = new double[] {10, 4};
      node[2 * b + 1] = 2 * b + 1;
      start[2 * b + 1] = b;
      end[2 * b + 1] = b;
      bytes[2 * b + 1] = new double[] {1};
    }
    int[] steps = new int[blocks];
    for (int t = 0; t < blocks; t++) {
      steps[t] = t;
    }
    IlpProblem p = new IlpProblem(costs, edges,
        new MemoryConstraint(239, steps, node, start, end, bytes));
    IlpSolution s = new ReducingIlpSolver(10, 1, 0).solve(p);
    assertThat(SolutionEvaluator.evaluate(p, s.choice()).feasible()).isTrue();
    assertThat(s.objective()).isEqualTo(135.0);
    // Lagrangian (LP) bound: 6 bytes saved per 5 of cost; 401 - 239 = 162 bytes to save cost
    // at least 162 * 5 / 6 = 135, which this instance meets exactly.
    assertThat(s.bound()).isCloseTo(135.0, org.assertj.core.api.Assertions.within(1e-6));
  }

  @Test
  void sameProblemSamePlan() {
    Random rnd = new Random(5);
    IlpProblem p = repeatedBlocks(rnd, 60);
    IlpSolution a = new ReducingIlpSolver(60, 1).solve(p);
    IlpSolution b = new ReducingIlpSolver(60, 1).solve(p);
    assertThat(a.choice()).isEqualTo(b.choice());
    assertThat(a.bound()).isEqualTo(b.bound());
  }

  @Test
  void llama13bOn8x8AtMostCbcsSixHundredSecondPlan() {
    // `meshplan shard --model llama2-13b --mesh 8x8 --alpha 1,1 --beta 1,0.01 --memory 32GiB`,
    // resident parameters. CBC (Alpa's formulation, 600 s, 2 threads) reported 11,021,168 with
    // its root LP 10,788,754 as bound; meshplan before threshold mixing returned 13,642,273.
    // Mixing switches 12 of the 40 blocks to the memory-light layout: 8,075,551 + 12 * 245,471.2
    // = 11,021,205 (the all-cheap plan needs 39.84 GB, each switched block frees 0.495 GB, and
    // 11 switched blocks still need 34.39 GB > 34.36 GB), 37 units above CBC. The window search
    // then re-solves the 64 nodes around the largest memory movers exactly (branch and bound with
    // the Lagrangian penalty) and finds a layout mix for the embedding and the first block that no
    // threshold gives: 10,906,482.04, below CBC's 11,021,168, and (10,906,482 - 10,788,754) /
    // 10,906,482 = 1.08% above the LP bound (the issue asks for at most 2%).
    LogicalMesh mesh = LogicalMesh.of(8, 8);
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, new double[] {1, 1},
        new double[] {1, 0.01}), 32.0 * (1L << 30), Optional.empty());
    ShardingPlan plan = new AutoSharding(env, SolverOptions.defaults())
        .plan(LlamaForwardBuilder.build(Presets.get("llama2-13b"), false));
    assertThat(plan.evaluation().feasible()).isTrue();
    assertThat(plan.objective()).isLessThanOrEqualTo(11_021_168.0);
    assertThat(plan.objective()).isCloseTo(10_906_482.04, within(0.01));
    assertThat(plan.solution().bound()).isBetween(10_788_754.0 - 1.0, plan.objective());
    assertThat((plan.objective() - plan.solution().bound()) / plan.objective())
        .isLessThanOrEqualTo(0.02);
  }
}
