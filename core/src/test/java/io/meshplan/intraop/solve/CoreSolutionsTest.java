package io.meshplan.intraop.solve;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The exact core solutions kept by content ({@link CoreSolutions}): an equal core is answered
 * without solving and with the same choice, any other core is solved, and the doubles kept stay
 * within the bound.
 */
class CoreSolutionsTest {

  /**
   * A random core of 3 to 7 nodes with 2 to 5 strategies each and about half the pairs linked;
   * costs are small whole numbers so that tied optima are common, and a few are forbidden.
   */
  private static IlpProblem randomCore(Random rnd) {
    int n = 3 + rnd.nextInt(5);
    double[][] costs = new double[n][];
    for (int v = 0; v < n; v++) {
      costs[v] = new double[2 + rnd.nextInt(4)];
      for (int s = 0; s < costs[v].length; s++) {
        costs[v][s] = rnd.nextInt(10) == 0 ? Double.POSITIVE_INFINITY : rnd.nextInt(4);
      }
      costs[v][rnd.nextInt(costs[v].length)] = rnd.nextInt(4);
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int u = 0; u < n; u++) {
      for (int v = u + 1; v < n; v++) {
        if (rnd.nextBoolean()) {
          double[] r = new double[costs[u].length * costs[v].length];
          for (int k = 0; k < r.length; k++) {
            r[k] = rnd.nextInt(3);
          }
          edges.add(new IlpEdge(u, v, r));
        }
      }
    }
    return new IlpProblem(costs, edges, null);
  }

  /** A deep copy: equal content, no shared arrays. */
  private static IlpProblem copy(IlpProblem p) {
    double[][] c = new double[p.nodeCount()][];
    for (int v = 0; v < c.length; v++) {
      c[v] = p.nodeCosts()[v].clone();
    }
    List<IlpEdge> e = new ArrayList<>();
    for (IlpEdge x : p.edges()) {
      e.add(new IlpEdge(x.u(), x.v(), x.costs()));
    }
    return new IlpProblem(c, e, null);
  }

  @Test
  void anEqualCoreIsAnsweredWithTheSameChoiceWithoutSolving() {
    Random rnd = new Random(20261202L);
    for (int trial = 0; trial < 200; trial++) {
      IlpProblem p = randomCore(rnd);
      CoreSolutions kept = new CoreSolutions(CoreSolutions.MAX_DOUBLES);
      AtomicInteger calls = new AtomicInteger();
      Function<IlpProblem, int[]> ve = q -> {
        calls.incrementAndGet();
        return new VariableElimination(Long.MAX_VALUE).solve(q);
      };
      int[] first = kept.solve(p, 7, 9, ve);
      int[] again = kept.solve(copy(p), 7, 9, ve);
      assertThat(calls).hasValue(1);
      assertThat(again).isEqualTo(first)
          .isEqualTo(new VariableElimination(Long.MAX_VALUE).solve(p));
      // The answer is a copy: changing it does not change the next one.
      again[0] = again[0] + 1;
      assertThat(kept.solve(p, 7, 9, ve)).isEqualTo(first);
      assertThat(calls).hasValue(1);
    }
  }

  @Test
  void anyOtherCoreOrLimitIsSolvedAgain() {
    IlpProblem p = randomCore(new Random(7));
    CoreSolutions kept = new CoreSolutions(CoreSolutions.MAX_DOUBLES);
    AtomicInteger calls = new AtomicInteger();
    Function<IlpProblem, int[]> ve = q -> {
      calls.incrementAndGet();
      return new VariableElimination(Long.MAX_VALUE).solve(q);
    };
    kept.solve(p, 7, 9, ve);
    // Other work limits may pick another exact solver, so they are another entry.
    kept.solve(p, 8, 9, ve);
    kept.solve(p, 7, 10, ve);
    assertThat(calls).hasValue(3);
    // One cost one ulp higher is another core.
    double[][] c = p.nodeCosts().clone();
    c[0] = c[0].clone();
    int s = c[0][0] == Double.POSITIVE_INFINITY ? 1 : 0;
    c[0][s] = Math.nextUp(c[0][s]);
    kept.solve(new IlpProblem(c, p.edges(), null), 7, 9, ve);
    assertThat(calls).hasValue(4);
    assertThat(kept.size()).isEqualTo(4);
  }

  @Test
  void aCoreNoExactSolverAnsweredIsNotKept() {
    IlpProblem p = randomCore(new Random(11));
    CoreSolutions kept = new CoreSolutions(CoreSolutions.MAX_DOUBLES);
    AtomicInteger calls = new AtomicInteger();
    assertThat(kept.solve(p, 1, 1, q -> {
      calls.incrementAndGet();
      return null;
    })).isNull();
    assertThat(kept.solve(p, 1, 1, q -> {
      calls.incrementAndGet();
      return null;
    })).isNull();
    assertThat(calls).hasValue(2);
    assertThat(kept.size()).isZero();
  }

  @Test
  void theKeptDoublesStayWithinTheBound() {
    // 3 nodes of 2 strategies and no edges: 6 doubles a core. A bound of 20 keeps 3 cores, the
    // least recently used dropped first; a core of more than 20 doubles is never kept.
    CoreSolutions kept = new CoreSolutions(20);
    Function<IlpProblem, int[]> ve = q -> new VariableElimination(Long.MAX_VALUE).solve(q);
    for (int k = 0; k < 10; k++) {
      double[][] c = {{k, 0}, {0, 1}, {1, 0}};
      kept.solve(new IlpProblem(c, List.of(), null), 1, 1, ve);
      assertThat(kept.size()).isLessThanOrEqualTo(3);
    }
    assertThat(kept.size()).isEqualTo(3);
    AtomicInteger calls = new AtomicInteger();
    Function<IlpProblem, int[]> counted = q -> {
      calls.incrementAndGet();
      return ve.apply(q);
    };
    // The last three are kept (k = 7, 8, 9), the first is not.
    kept.solve(new IlpProblem(new double[][] {{9, 0}, {0, 1}, {1, 0}}, List.of(), null), 1, 1,
        counted);
    assertThat(calls).hasValue(0);
    kept.solve(new IlpProblem(new double[][] {{0, 0}, {0, 1}, {1, 0}}, List.of(), null), 1, 1,
        counted);
    assertThat(calls).hasValue(1);
    double[][] big = new double[11][];
    for (int v = 0; v < big.length; v++) {
      big[v] = new double[] {v, 0};
    }
    kept.solve(new IlpProblem(big, List.of(), null), 1, 1, counted);
    kept.solve(new IlpProblem(big, List.of(), null), 1, 1, counted);
    assertThat(calls).hasValue(3);
    assertThat(kept.size()).isLessThanOrEqualTo(3);
  }

  @Test
  void theSolverAnswersAKeptCoreAsItSolvedIt() {
    // The shared table across solver instances: the same random problems solved twice give the
    // same choices and objectives, equal to variable elimination over the whole problem.
    Random rnd = new Random(42);
    for (int trial = 0; trial < 100; trial++) {
      IlpProblem p = randomCore(rnd);
      IlpSolution a = new ReducingIlpSolver(1, 1).solve(p);
      IlpSolution b = new ReducingIlpSolver(1, 1).solve(copy(p));
      assertThat(b.choice()).isEqualTo(a.choice());
      assertThat(b.objective()).isEqualTo(a.objective());
      int[] ref = new VariableElimination(Long.MAX_VALUE).solve(p);
      assertThat(a.objective()).isEqualTo(
          io.meshplan.intraop.ilp.SolutionEvaluator.evaluate(p, ref).objective());
    }
  }
}
