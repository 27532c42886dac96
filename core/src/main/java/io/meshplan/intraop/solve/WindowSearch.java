package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Large-neighbourhood search (Shaw, CP'98) over windows of consecutive nodes, each solved exactly by
 * {@link MemoryBranchAndBound}: every node outside the window keeps its strategy in the current
 * plan, the window becomes a small problem of its own (edges to fixed nodes folded into the
 * window's node costs, the fixed nodes' live bytes kept as constants on one extra node), and its
 * plan replaces the window's part when the whole plan stays feasible and gets cheaper. Node ids
 * follow the graph's order, so a window is a stretch of consecutive layers: it can give the layers
 * around a large table a layout mix that no single Lagrangian multiplier or threshold produces.
 * The windows are centred on the nodes that move the most memory; each window's search is capped
 * by a count of solves, so the result does not depend on the machine's speed, and a deadline is
 * the safety net.
 */
final class WindowSearch {
  /** How many of the largest memory movers get a window. */
  static final int MOVERS = 4;

  private final IlpProblem p;
  private final int window;
  private final long solvesPerWindow;
  private final Function<IlpProblem, IlpSolution> relaxed;
  private final double[][] penalty;
  private final double penaltyOffset;

  /**
   * Creates the search.
   *
   * @param p the problem, with its memory rows
   * @param window nodes freed at a time
   * @param solvesPerWindow the most memory-free solves each window's branch and bound may spend
   * @param relaxed an exact solver for memory-free problems
   * @param penalty a Lagrangian penalty per node and strategy ({@code mu} times the node's bytes
   *     over some checked steps), or null
   * @param penaltyOffset {@code mu} times the budget times the number of those steps
   */
  WindowSearch(IlpProblem p, int window, long solvesPerWindow,
      Function<IlpProblem, IlpSolution> relaxed, double[][] penalty, double penaltyOffset) {
    this.p = p;
    this.window = Math.max(2, window);
    this.solvesPerWindow = solvesPerWindow;
    this.relaxed = relaxed;
    this.penalty = penalty;
    this.penaltyOffset = penaltyOffset;
  }

  /**
   * Improves a feasible plan.
   *
   * @param start a feasible assignment
   * @param deadlineNanos when to stop ({@link System#nanoTime()})
   * @return a feasible assignment no worse than {@code start}
   */
  int[] improve(int[] start, long deadlineNanos) {
    int n = p.nodeCount();
    int[] best = start.clone();
    double bestObj = SolutionEvaluator.evaluate(p, best).objective();
    for (int from : windowStarts()) {
      if (System.nanoTime() > deadlineNanos) {
        break;
      }
      int to = Math.min(n, from + window);
      int[] x = solveWindow(best, from, to, deadlineNanos);
      if (x != null) {
        Evaluation e = SolutionEvaluator.evaluate(p, x);
        if (e.feasible() && e.objective() < bestObj) {
          best = x;
          bestObj = e.objective();
        }
      }
    }
    return best;
  }

  /**
   * The windows to search, ascending: centred on the {@value #MOVERS} nodes whose layouts move the
   * most bytes over their live steps (the embedding and LM-head tables in a transformer), merged
   * when they overlap.
   */
  private List<Integer> windowStarts() {
    int n = p.nodeCount();
    int[] movers = MemoryBranchAndBound.memoryMovers(p);
    java.util.TreeSet<Integer> starts = new java.util.TreeSet<>();
    for (int q = 0; q < Math.min(MOVERS, movers.length); q++) {
      starts.add(Math.max(0, Math.min(n - window, movers[q] - window / 2)));
    }
    List<Integer> out = new ArrayList<>();
    for (int s : starts) {
      if (out.isEmpty() || s >= out.get(out.size() - 1) + window) {
        out.add(s);
      }
    }
    return out;
  }

  /**
   * The memory rows a window can move: only the checked steps where some window item is live
   * (elsewhere memory does not change and the plan fits), the window's items, and at each of those
   * steps one constant item with the fixed nodes' bytes, on the extra node.
   */
  private MemoryConstraint windowMemory(int[] x, int from, int to) {
    MemoryConstraint m = p.memory();
    int w = to - from;
    int[] steps = m.steps();
    boolean[] touched = new boolean[steps.length];
    for (int it = 0; it < m.itemCount(); it++) {
      int v = m.itemNode()[it];
      if (v >= from && v < to) {
        for (int k = m.stepsFrom(it); k < m.stepsEnd(it); k++) {
          touched[k] = true;
        }
      }
    }
    double[] fixedAt = SolutionEvaluator.memoryAtSteps(m, it -> {
      int v = m.itemNode()[it];
      return v >= from && v < to ? 0 : m.itemBytes()[it][x[v]];
    });
    List<Integer> kept = new ArrayList<>();
    for (int k = 0; k < steps.length; k++) {
      if (touched[k]) {
        kept.add(k);
      }
    }
    int[] subSteps = new int[kept.size()];
    List<int[]> meta = new ArrayList<>();
    List<double[]> bytes = new ArrayList<>();
    for (int q = 0; q < subSteps.length; q++) {
      int step = steps[kept.get(q)];
      subSteps[q] = step;
      meta.add(new int[] {w, step, step});
      bytes.add(new double[] {fixedAt[kept.get(q)]});
    }
    for (int it = 0; it < m.itemCount(); it++) {
      int v = m.itemNode()[it];
      if (v >= from && v < to) {
        meta.add(new int[] {v - from, m.itemStart()[it], m.itemEnd()[it]});
        bytes.add(m.itemBytes()[it]);
      }
    }
    int items = meta.size();
    int[] node = new int[items];
    int[] start = new int[items];
    int[] end = new int[items];
    for (int i = 0; i < items; i++) {
      node[i] = meta.get(i)[0];
      start[i] = meta.get(i)[1];
      end[i] = meta.get(i)[2];
    }
    return new MemoryConstraint(m.budget(), subSteps, node, start, end,
        bytes.toArray(new double[0][]));
  }

  /** The penalty of the window's nodes, and 0 on the extra node. */
  private double[][] windowPenalty(int[] x, int from, int to) {
    int w = to - from;
    double[][] pen = new double[w + 1][];
    for (int v = from; v < to; v++) {
      pen[v - from] = penalty[v];
    }
    pen[w] = new double[] {0};
    return pen;
  }

  /** The penalty of the fixed nodes is a constant: it lowers the window's offset. */
  private double windowPenaltyOffset(int[] x, int from, int to) {
    double offset = penaltyOffset;
    for (int v = 0; v < p.nodeCount(); v++) {
      if (v < from || v >= to) {
        offset -= penalty[v][x[v]];
      }
    }
    return offset;
  }

  /** The plan with nodes from..to-1 re-solved, or null when nothing changed. */
  private int[] solveWindow(int[] x, int from, int to, long deadlineNanos) {
    int w = to - from;
    // Window node k is problem node from + k; node w holds the fixed nodes' constants.
    double[][] c = new double[w + 1][];
    for (int k = 0; k < w; k++) {
      c[k] = p.nodeCosts()[from + k].clone();
    }
    c[w] = new double[] {0};
    List<IlpEdge> edges = new ArrayList<>();
    for (IlpEdge e : p.edges()) {
      int u = e.u();
      int v = e.v();
      boolean fu = u >= from && u < to;
      boolean fv = v >= from && v < to;
      int sv = p.size(v);
      if (fu && fv) {
        edges.add(new IlpEdge(u - from, v - from, e.costs()));
      } else if (fu) {
        for (int i = 0; i < c[u - from].length; i++) {
          c[u - from][i] += e.cost(i, x[v], sv);
        }
      } else if (fv) {
        for (int j = 0; j < c[v - from].length; j++) {
          c[v - from][j] += e.cost(x[u], j, sv);
        }
      }
    }
    IlpProblem sub = new IlpProblem(c, edges, windowMemory(x, from, to));
    int[] hint = new int[w + 1];
    System.arraycopy(x, from, hint, 0, w);
    double[][] pen = penalty == null ? null : windowPenalty(x, from, to);
    double offset = penalty == null ? 0 : windowPenaltyOffset(x, from, to);
    MemoryBranchAndBound.Result r = new MemoryBranchAndBound(sub, relaxed, solvesPerWindow, pen,
        offset).solve(hint, deadlineNanos);
    boolean changed = false;
    int[] out = x.clone();
    for (int k = 0; k < w; k++) {
      if (r.choice()[k] != x[from + k]) {
        out[from + k] = r.choice()[k];
        changed = true;
      }
    }
    return changed ? out : null;
  }
}
