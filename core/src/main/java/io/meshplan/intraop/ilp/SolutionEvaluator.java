package io.meshplan.intraop.ilp;

import java.util.ArrayList;
import java.util.List;

/**
 * Recomputes the objective of any assignment and lists the constraints it violates, independently
 * of how the assignment was found (as XLA's auto-sharding {@code Evaluate} does).
 */
public final class SolutionEvaluator {
  private SolutionEvaluator() {}

  /**
   * Evaluates an assignment.
   *
   * @param p the problem
   * @param choice one strategy index per node
   * @return the objective, peak memory and violations
   */
  public static Evaluation evaluate(IlpProblem p, int[] choice) {
    List<String> violations = new ArrayList<>();
    if (choice.length != p.nodeCount()) {
      violations.add("assignment has " + choice.length + " entries for " + p.nodeCount()
          + " nodes");
      return new Evaluation(Double.POSITIVE_INFINITY, 0, 0, 0, -1, violations);
    }
    double node = 0;
    for (int v = 0; v < p.nodeCount(); v++) {
      if (choice[v] < 0 || choice[v] >= p.size(v)) {
        violations.add("node " + v + ": strategy " + choice[v] + " out of range");
        return new Evaluation(Double.POSITIVE_INFINITY, 0, 0, 0, -1, violations);
      }
      double c = p.nodeCosts()[v][choice[v]];
      if (c == Double.POSITIVE_INFINITY) {
        violations.add("node " + v + ": strategy " + choice[v] + " is forbidden");
      }
      node += c;
    }
    double edge = 0;
    for (IlpEdge e : p.edges()) {
      double c = e.cost(choice[e.u()], choice[e.v()], p.size(e.v()));
      if (c == Double.POSITIVE_INFINITY) {
        violations.add("edge " + e.u() + "-" + e.v() + ": pair (" + choice[e.u()] + ","
            + choice[e.v()] + ") is forbidden (alias or fixed layout)");
      }
      edge += c;
    }
    double peak = 0;
    int peakStep = -1;
    MemoryConstraint m = p.memory();
    if (m != null) {
      double[] at = memoryAtSteps(m, choice);
      for (int k = 0; k < m.steps().length; k++) {
        if (at[k] > peak || peakStep < 0) {
          peak = at[k];
          peakStep = m.steps()[k];
        }
        if (at[k] > m.budget()) {
          violations.add("step " + m.steps()[k] + ": " + (long) at[k] + " bytes exceed the budget of "
              + (long) m.budget());
        }
      }
    }
    return new Evaluation(node + edge, node, edge, peak, peakStep, violations);
  }

  /**
   * The memory in use at each checked step.
   *
   * @param m the memory constraint
   * @param choice one strategy per node
   * @return bytes per entry of {@code m.steps()}
   */
  public static double[] memoryAtSteps(MemoryConstraint m, int[] choice) {
    return memoryAtSteps(m, it -> m.itemBytes()[it][choice[m.itemNode()[it]]]);
  }

  /**
   * The memory in use at each checked step when each item takes given bytes.
   *
   * @param m the memory constraint
   * @param itemBytes the bytes of each item
   * @return bytes per entry of {@code m.steps()}
   */
  public static double[] memoryAtSteps(MemoryConstraint m,
      java.util.function.IntToDoubleFunction itemBytes) {
    int n = m.steps().length;
    double[] delta = new double[n + 1];
    for (int i = 0; i < m.itemCount(); i++) {
      int lo = m.stepsFrom(i);
      int hi = m.stepsEnd(i);
      if (lo < hi) {
        double b = itemBytes.applyAsDouble(i);
        delta[lo] += b;
        delta[hi] -= b;
      }
    }
    double[] at = new double[n];
    double run = 0;
    for (int k = 0; k < n; k++) {
      run += delta[k];
      at[k] = run;
    }
    return at;
  }
}
