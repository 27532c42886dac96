package io.meshplan.intraop.solve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The three solvers agree on seeded random problems: the exhaustive reference, CP-SAT, and the
 * reducing solver (reductions, variable elimination, Lagrangian memory handling, CP-SAT).
 */
class SolverDifferentialTest {

  private static IlpProblem random(Random rnd, boolean memory, boolean forbid) {
    int n = 2 + rnd.nextInt(5);
    double[][] costs = new double[n][];
    for (int v = 0; v < n; v++) {
      costs[v] = new double[1 + rnd.nextInt(3)];
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
            m[k] = forbid && rnd.nextDouble() < 0.1 ? Double.POSITIVE_INFINITY : rnd.nextInt(30);
          }
          edges.add(new IlpEdge(u, v, m));
        }
      }
    }
    MemoryConstraint mem = null;
    if (memory) {
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
      mem = new MemoryConstraint(10 + rnd.nextInt(15), steps, node, start, end, bytes);
    }
    return new IlpProblem(costs, edges, mem);
  }

  @Test
  void reducingAndCpSatMatchExhaustiveWithoutMemory() {
    Random rnd = new Random(42);
    for (int k = 0; k < 200; k++) {
      IlpProblem p = random(rnd, false, k % 2 == 0);
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution red = new ReducingIlpSolver(10, 1).solve(p);
      assertThat(red.status()).as("case %d", k).isEqualTo(ref.status());
      if (ref.hasSolution()) {
        assertThat(red.objective()).as("case %d", k).isCloseTo(ref.objective(), within(1e-9));
        assertThat(SolutionEvaluator.evaluate(p, red.choice()).feasible()).isTrue();
      }
    }
    for (int k = 0; k < 40; k++) {
      IlpProblem p = random(rnd, false, true);
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution cp = new CpSatIlpSolver(10, 1, null).solve(p);
      assertThat(cp.status()).as("cp case %d", k).isEqualTo(ref.status());
      if (ref.hasSolution()) {
        assertThat(cp.objective()).isCloseTo(ref.objective(), within(1e-6));
      }
    }
  }

  @Test
  void memoryBoundIsExactAgainstExhaustive() {
    Random rnd = new Random(7);
    int checked = 0;
    for (int k = 0; k < 60; k++) {
      IlpProblem p = random(rnd, true, false);
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      IlpSolution cp = new CpSatIlpSolver(10, 1, null).solve(p);
      IlpSolution red = new ReducingIlpSolver(10, 1).solve(p);
      assertThat(cp.status()).as("case %d", k).isEqualTo(ref.status());
      if (ref.hasSolution()) {
        checked++;
        assertThat(cp.objective()).as("case %d", k).isCloseTo(ref.objective(), within(1e-6));
        // Small problems close the Lagrangian gap with CP-SAT, so the reducing solver is exact.
        assertThat(red.objective()).as("case %d", k).isCloseTo(ref.objective(), within(1e-6));
        assertThat(SolutionEvaluator.evaluate(p, red.choice()).feasible()).isTrue();
      }
    }
    assertThat(checked).isGreaterThan(20);
  }

  @Test
  void evaluatorReportsEachViolation() {
    // Two nodes, one forbidden pair (0,0), memory 5 bytes with both items live at step 0.
    IlpProblem p = new IlpProblem(new double[][] {{1, 2}, {3, 4}},
        List.of(new IlpEdge(0, 1, new double[] {Double.POSITIVE_INFINITY, 1, 1, 1})),
        new MemoryConstraint(5, new int[] {0}, new int[] {0, 1}, new int[] {0, 0},
            new int[] {0, 0}, new double[][] {{3, 1}, {3, 1}}));
    Evaluation bad = SolutionEvaluator.evaluate(p, new int[] {0, 0});
    assertThat(bad.violations()).hasSize(2);
    Evaluation good = SolutionEvaluator.evaluate(p, new int[] {1, 1});
    // 2 + 4 node costs + 1 edge cost = 7; memory 1 + 1 = 2 bytes.
    assertThat(good.objective()).isEqualTo(7.0);
    assertThat(good.peakMemoryBytes()).isEqualTo(2.0);
    assertThat(good.feasible()).isTrue();
  }

  @Test
  void localSearchKeepsFeasibilityAndNeverWorsens() {
    Random rnd = new Random(99);
    int repaired = 0;
    for (int k = 0; k < 150; k++) {
      IlpProblem p = random(rnd, true, false);
      IlpSolution ref = new ExhaustiveIlpSolver(1_000_000).solve(p);
      int[] start = new int[p.nodeCount()];
      for (int v = 0; v < start.length; v++) {
        start[v] = rnd.nextInt(p.size(v));
      }
      LocalSearch ls = new LocalSearch(p);
      int[] fixedUp = ls.repair(start, Long.MAX_VALUE);
      if (fixedUp != null) {
        repaired++;
        Evaluation e = SolutionEvaluator.evaluate(p, fixedUp);
        assertThat(e.feasible()).as("case %d", k).isTrue();
        assertThat(ref.hasSolution()).isTrue();
        assertThat(e.objective()).isGreaterThanOrEqualTo(ref.objective() - 1e-9);
      }
      if (SolutionEvaluator.evaluate(p, start).feasible()) {
        int[] better = ls.improve(start, Long.MAX_VALUE);
        Evaluation before = SolutionEvaluator.evaluate(p, start);
        Evaluation after = SolutionEvaluator.evaluate(p, better);
        assertThat(after.feasible()).isTrue();
        assertThat(after.objective()).isLessThanOrEqualTo(before.objective());
      }
    }
    assertThat(repaired).isGreaterThan(30);
  }

  @Test
  void aTimeLimitStillReturnsAStatusAndABound() {
    // A 60-node dense random problem cannot be proven in 10 ms; whatever comes back must carry
    // a consistent status: a solution with bound <= objective, or no solution at all.
    Random rnd = new Random(3);
    int n = 60;
    double[][] costs = new double[n][];
    for (int v = 0; v < n; v++) {
      costs[v] = new double[6];
      for (int i = 0; i < 6; i++) {
        costs[v][i] = rnd.nextInt(100);
      }
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int u = 0; u < n; u++) {
      for (int v = u + 1; v < n; v++) {
        if (rnd.nextDouble() < 0.2) {
          double[] m = new double[36];
          for (int k = 0; k < 36; k++) {
            m[k] = rnd.nextInt(100);
          }
          edges.add(new IlpEdge(u, v, m));
        }
      }
    }
    IlpSolution s = new CpSatIlpSolver(0.01, 1, null).solve(new IlpProblem(costs, edges, null));
    assertThat(s.status()).isIn(SolveStatus.OPTIMAL, SolveStatus.FEASIBLE, SolveStatus.UNKNOWN);
    if (s.hasSolution()) {
      assertThat(s.bound()).isLessThanOrEqualTo(s.objective() + 1e-6);
      assertThat(s.choice()).hasSize(n);
    } else {
      assertThat(s.choice()).isEmpty();
    }
  }
}
