package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import java.util.ArrayList;
import java.util.List;

/**
 * Improves a feasible assignment by single-node moves (1-opt): repeatedly, in node order, moves a
 * node to the strategy that lowers the objective most while every checked step stays within the
 * memory bound, until no move helps or the deadline passes. Memory per step is kept in a segment
 * tree with range add and range maximum, so a move is checked in {@code O(items * log steps)}. The
 * result is never worse than the start and always feasible.
 */
final class LocalSearch {
  private final IlpProblem p;
  private final List<List<int[]>> adj = new ArrayList<>();
  private final List<List<Integer>> itemsOf = new ArrayList<>();
  private final int[] lo;
  private final int[] hi;
  private final double[] tree;
  private final double[] lazy;
  private final int size;

  LocalSearch(IlpProblem p) {
    this.p = p;
    int n = p.nodeCount();
    for (int v = 0; v < n; v++) {
      adj.add(new ArrayList<>());
      itemsOf.add(new ArrayList<>());
    }
    for (int k = 0; k < p.edges().size(); k++) {
      IlpEdge e = p.edges().get(k);
      adj.get(e.u()).add(new int[] {k, e.v(), 1});
      adj.get(e.v()).add(new int[] {k, e.u(), 0});
    }
    MemoryConstraint m = p.memory();
    int items = m == null ? 0 : m.itemCount();
    lo = new int[items];
    hi = new int[items];
    size = m == null ? 1 : Math.max(1, m.steps().length);
    tree = new double[4 * size];
    lazy = new double[4 * size];
    for (int it = 0; it < items; it++) {
      lo[it] = m.stepsFrom(it);
      hi[it] = m.stepsEnd(it);
      if (lo[it] < hi[it]) {
        itemsOf.get(m.itemNode()[it]).add(it);
      }
    }
  }

  /**
   * Makes an assignment that breaks the memory bound feasible, then improves it: while some step
   * is over budget, takes the single-node move that frees memory at the fullest step for the least
   * objective increase per byte and does not raise the peak, then runs {@link #improve}.
   *
   * @param start an assignment, feasible or not
   * @param deadlineNanos when to stop
   * @return a feasible assignment, or null when no move frees memory at the fullest step
   */
  int[] repair(int[] start, long deadlineNanos) {
    MemoryConstraint m = p.memory();
    if (m == null) {
      return improve(start, deadlineNanos);
    }
    int[] x = start.clone();
    load(x);
    while (tree[1] > m.budget()) {
      if (System.nanoTime() > deadlineNanos) {
        return null;
      }
      int worst = argmaxStep();
      double peak = tree[1];
      double bestRatio = Double.POSITIVE_INFINITY;
      int bestV = -1;
      int bestI = -1;
      for (int v = 0; v < p.nodeCount(); v++) {
        int cur = x[v];
        for (int i = 0; i < p.size(v); i++) {
          if (i == cur) {
            continue;
          }
          double freed = 0;
          for (int it : itemsOf.get(v)) {
            if (lo[it] <= worst && worst < hi[it]) {
              freed += m.itemBytes()[it][cur] - m.itemBytes()[it][i];
            }
          }
          if (freed <= 0) {
            continue;
          }
          double ratio = delta(v, cur, i, x) / freed;
          if (ratio < bestRatio) {
            move(v, cur, i, m);
            boolean noHigher = tree[1] <= peak;
            move(v, i, cur, m);
            if (noHigher) {
              bestRatio = ratio;
              bestV = v;
              bestI = i;
            }
          }
        }
      }
      if (bestV < 0) {
        return null;
      }
      move(bestV, x[bestV], bestI, m);
      x[bestV] = bestI;
    }
    clear();
    return improve(x, deadlineNanos);
  }

  private int argmaxStep() {
    int node = 1;
    int l = 0;
    int r = size - 1;
    while (l < r) {
      int mid = (l + r) >>> 1;
      if (tree[2 * node] >= tree[2 * node + 1]) {
        node = 2 * node;
        r = mid;
      } else {
        node = 2 * node + 1;
        l = mid + 1;
      }
    }
    return l;
  }

  private double delta(int v, int cur, int i, int[] x) {
    double d = p.nodeCosts()[v][i] - p.nodeCosts()[v][cur];
    for (int[] a : adj.get(v)) {
      IlpEdge e = p.edges().get(a[0]);
      int w = a[1];
      if (a[2] == 1) {
        d += e.cost(i, x[w], p.size(w)) - e.cost(cur, x[w], p.size(w));
      } else {
        d += e.cost(x[w], i, p.size(v)) - e.cost(x[w], cur, p.size(v));
      }
    }
    return d;
  }

  private void load(int[] x) {
    clear();
    MemoryConstraint m = p.memory();
    for (int it = 0; it < m.itemCount(); it++) {
      if (lo[it] < hi[it]) {
        add(1, 0, size - 1, lo[it], hi[it] - 1, m.itemBytes()[it][x[m.itemNode()[it]]]);
      }
    }
  }

  private void clear() {
    java.util.Arrays.fill(tree, 0);
    java.util.Arrays.fill(lazy, 0);
  }

  /**
   * Iterated conditional modes (Besag, JRSS B 1986) on a memory-free problem: every node starts
   * at its cheapest strategy, then, sweep after sweep in node order, takes the strategy that is
   * cheapest given its neighbours' current ones (lowest index on ties), until a sweep changes
   * nothing or after 100 sweeps. A starting point for a search, not an optimum.
   *
   * @param q the problem (its memory bound is ignored)
   * @return one strategy per node
   */
  static int[] conditionalModes(IlpProblem q) {
    return modes(q, incident(q), cheapest(q), -1);
  }

  /** Each node's cheapest strategy on its own (the lowest index on ties). */
  private static int[] cheapest(IlpProblem q) {
    int[] x = new int[q.nodeCount()];
    for (int v = 0; v < x.length; v++) {
      double[] c = q.nodeCosts()[v];
      for (int i = 1; i < c.length; i++) {
        if (c[i] < c[x[v]]) {
          x[v] = i;
        }
      }
    }
    return x;
  }

  /**
   * Iterated conditional modes restarted from every strategy of the {@code nodes} most connected
   * nodes (most edges first, lowest id on ties): each restart holds that node at that strategy,
   * starts the others from the best plan so far, and sweeps to a fixed point; then the node is
   * freed and a last sweep runs. The best plan of all is kept (the first on ties), then improved
   * by moves of two linked nodes at once. The answer never costs more than {@link
   * #conditionalModes} and does not depend on the machine.
   *
   * @param q the problem (its memory bound is ignored)
   * @param nodes how many of the most connected nodes restart the search
   * @return one strategy per node
   */
  static int[] restartedModes(IlpProblem q, int nodes) {
    List<List<IlpEdge>> at = incident(q);
    int[] best = modes(q, at, cheapest(q), -1);
    double bestObj = SolutionEvaluator.evaluate(q, best).objective();
    Integer[] order = new Integer[q.nodeCount()];
    for (int v = 0; v < order.length; v++) {
      order[v] = v;
    }
    java.util.Arrays.sort(order, (a, b) -> at.get(a).size() != at.get(b).size()
        ? Integer.compare(at.get(b).size(), at.get(a).size()) : Integer.compare(a, b));
    for (int k = 0; k < Math.min(nodes, order.length); k++) {
      int r = order[k];
      for (int s = 0; s < q.size(r); s++) {
        if (s == best[r] || q.nodeCosts()[r][s] == Double.POSITIVE_INFINITY) {
          continue;
        }
        int[] x = best.clone();
        x[r] = s;
        x = modes(q, at, modes(q, at, x, r), -1);
        double obj = SolutionEvaluator.evaluate(q, x).objective();
        if (obj < bestObj) {
          bestObj = obj;
          best = x;
        }
      }
    }
    return pairMoves(q, at, best);
  }

  /**
   * Moves two linked nodes at once while that lowers the cost: for each edge, the best pair of
   * strategies given every other node (a move single-node sweeps cannot make when the edge's
   * resharding punishes changing either end alone), then single-node sweeps again, until a pass
   * over all edges improves nothing (at most 100 passes).
   */
  private static int[] pairMoves(IlpProblem q, List<List<IlpEdge>> at, int[] start) {
    int[] x = start.clone();
    for (int pass = 0; pass < 100; pass++) {
      boolean improved = false;
      for (IlpEdge e : q.edges()) {
        int u = e.u();
        int v = e.v();
        double[] cu = new double[q.size(u)];
        double[] cv = new double[q.size(v)];
        for (int i = 0; i < cu.length; i++) {
          cu[i] = q.nodeCosts()[u][i] + others(q, at.get(u), u, i, v, x);
        }
        for (int j = 0; j < cv.length; j++) {
          cv[j] = q.nodeCosts()[v][j] + others(q, at.get(v), v, j, u, x);
        }
        double current = cu[x[u]] + cv[x[v]] + linked(q, at.get(u), u, v, x[u], x[v]);
        int bi = x[u];
        int bj = x[v];
        double best = current;
        for (int i = 0; i < cu.length; i++) {
          if (cu[i] >= best) {
            continue;
          }
          for (int j = 0; j < cv.length; j++) {
            double c = cu[i] + cv[j] + linked(q, at.get(u), u, v, i, j);
            if (c < best - 1e-12 * Math.abs(best)) {
              best = c;
              bi = i;
              bj = j;
            }
          }
        }
        if (bi != x[u] || bj != x[v]) {
          x[u] = bi;
          x[v] = bj;
          improved = true;
        }
      }
      if (!improved) {
        break;
      }
      x = modes(q, at, x, -1);
    }
    return x;
  }

  /** The edges of node {@code v} at strategy {@code i}, except those to {@code skip}. */
  private static double others(IlpProblem q, List<IlpEdge> edges, int v, int i, int skip,
      int[] x) {
    double c = 0;
    for (IlpEdge e : edges) {
      if (e.u() == v && e.v() != skip) {
        c += e.cost(i, x[e.v()], q.size(e.v()));
      } else if (e.v() == v && e.u() != skip) {
        c += e.cost(x[e.u()], i, q.size(v));
      }
    }
    return c;
  }

  /** Every edge between {@code u} and {@code v} (there may be several) at strategies i and j. */
  private static double linked(IlpProblem q, List<IlpEdge> edges, int u, int v, int i, int j) {
    double c = 0;
    for (IlpEdge e : edges) {
      if (e.u() == u && e.v() == v) {
        c += e.cost(i, j, q.size(v));
      } else if (e.u() == v && e.v() == u) {
        c += e.cost(j, i, q.size(u));
      }
    }
    return c;
  }

  private static List<List<IlpEdge>> incident(IlpProblem q) {
    List<List<IlpEdge>> at = new ArrayList<>(q.nodeCount());
    for (int v = 0; v < q.nodeCount(); v++) {
      at.add(new ArrayList<>());
    }
    for (IlpEdge e : q.edges()) {
      at.get(e.u()).add(e);
      at.get(e.v()).add(e);
    }
    return at;
  }

  /** Sweeps to a fixed point (at most 100 sweeps) from {@code x}, holding node {@code held}. */
  private static int[] modes(IlpProblem q, List<List<IlpEdge>> at, int[] x, int held) {
    int n = q.nodeCount();
    for (int sweep = 0; sweep < 100; sweep++) {
      boolean changed = false;
      for (int v = 0; v < n; v++) {
        if (v == held) {
          continue;
        }
        int best = x[v];
        double bestCost = Double.POSITIVE_INFINITY;
        for (int i = 0; i < q.size(v); i++) {
          double c = q.nodeCosts()[v][i];
          for (IlpEdge e : at.get(v)) {
            c += e.u() == v ? e.cost(i, x[e.v()], q.size(e.v()))
                : e.cost(x[e.u()], i, q.size(v));
          }
          if (c < bestCost) {
            bestCost = c;
            best = i;
          }
        }
        changed |= best != x[v];
        x[v] = best;
      }
      if (!changed) {
        break;
      }
    }
    return x;
  }

  int[] improve(int[] start, long deadlineNanos) {
    int[] x = start.clone();
    MemoryConstraint m = p.memory();
    if (m != null) {
      load(x);
    }
    boolean improved = true;
    while (improved && System.nanoTime() < deadlineNanos) {
      improved = false;
      for (int v = 0; v < p.nodeCount(); v++) {
        int cur = x[v];
        double bestDelta = 0;
        int best = -1;
        for (int i = 0; i < p.size(v); i++) {
          if (i == cur) {
            continue;
          }
          double d = delta(v, cur, i, x);
          if (!(d < bestDelta - 1e-12 * Math.abs(bestDelta)) || Double.isNaN(d)) {
            continue;
          }
          if (m == null || fits(v, cur, i, m)) {
            bestDelta = d;
            best = i;
          }
        }
        if (best >= 0) {
          move(v, cur, best, m);
          x[v] = best;
          improved = true;
        }
      }
    }
    return x;
  }

  private boolean fits(int v, int from, int to, MemoryConstraint m) {
    move(v, from, to, m);
    boolean ok = tree[1] <= m.budget();
    move(v, to, from, m);
    return ok;
  }

  private void move(int v, int from, int to, MemoryConstraint m) {
    if (m == null) {
      return;
    }
    for (int it : itemsOf.get(v)) {
      double d = m.itemBytes()[it][to] - m.itemBytes()[it][from];
      if (d != 0) {
        add(1, 0, size - 1, lo[it], hi[it] - 1, d);
      }
    }
  }

  private void add(int node, int l, int r, int ql, int qr, double d) {
    if (qr < l || r < ql) {
      return;
    }
    if (ql <= l && r <= qr) {
      tree[node] += d;
      lazy[node] += d;
      return;
    }
    int mid = (l + r) >>> 1;
    add(2 * node, l, mid, ql, qr, d);
    add(2 * node + 1, mid + 1, r, ql, qr, d);
    tree[node] = Math.max(tree[2 * node], tree[2 * node + 1]) + lazy[node];
  }
}
