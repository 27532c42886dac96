package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The exact reductions of PBQP solvers (Scholz and Eckstein, LCTES'02; Hames and Scholz,
 * Euro-Par'06) on a memory-free problem, and their undoing:
 *
 * <ul>
 *   <li>R0: a node without edges takes its cheapest strategy.
 *   <li>R1: a node with one neighbour {@code y} is folded into {@code y}'s costs: {@code c_y[j] +=
 *       min_i (c_x[i] + R_xy[i][j])}.
 *   <li>R2: a node with two neighbours {@code y, z} becomes an edge between them: {@code R_yz[j][k]
 *       += min_i (c_x[i] + R_xy[i][j] + R_xz[i][k])}.
 *   <li>A node with one strategy is folded into all its neighbours.
 * </ul>
 *
 * <p>Each reduction keeps the optimum, and the eliminated nodes are chosen afterwards in reverse
 * order from the recorded arg-min tables ({@link #backSubstitute}). Nodes are reduced in ascending
 * id order and ties take the lowest strategy index, so the result is deterministic. What no
 * reduction applies to is the core ({@link #coreProblem}). The memory bound is ignored.
 */
final class PbqpReductions {
  /** The kinds of recorded step: the node's strategy from a constant, from y, or from y and z. */
  private static final int FIXED = 0;
  private static final int FROM_ONE = 1;
  private static final int FROM_TWO = 2;

  private static final class Edge {
    final int a;
    final int b;
    final int sb;
    final double[] m;

    Edge(int a, int b, int sb, double[] m) {
      this.a = a;
      this.b = b;
      this.sb = sb;
      this.m = m;
    }

    double get(int from, int i, int j) {
      return from == a ? m[i * sb + j] : m[j * sb + i];
    }

    /**
     * The costs seen from node {@code from} laid out with the other node's strategy major:
     * entry {@code j * sFrom + i} is {@code get(from, i, j)}, so a minimum over {@code from}'s
     * strategies reads consecutive entries.
     */
    double[] fromRows(int from, int sFrom, int sOther) {
      double[] t = new double[sFrom * sOther];
      for (int i = 0; i < sFrom; i++) {
        for (int j = 0; j < sOther; j++) {
          t[j * sFrom + i] = get(from, i, j);
        }
      }
      return t;
    }
  }

  private record Step(int kind, int x, int y, int z, int[] table) {}

  private final double[][] cost;
  private final List<Map<Integer, Edge>> adj;
  private final Deque<Step> steps = new ArrayDeque<>();
  private final List<Integer> core = new ArrayList<>();
  private final boolean[] alive;
  private final TreeSet<Integer> queue = new TreeSet<>();
  private long work;

  private PbqpReductions(IlpProblem p) {
    int n = p.nodeCount();
    cost = new double[n][];
    adj = new ArrayList<>(n);
    for (int v = 0; v < n; v++) {
      cost[v] = p.nodeCosts()[v].clone();
      adj.add(new HashMap<>());
    }
    for (IlpEdge e : p.edges()) {
      Edge ed = new Edge(e.u(), e.v(), p.size(e.v()), e.costs());
      adj.get(e.u()).put(e.v(), ed);
      adj.get(e.v()).put(e.u(), ed);
    }
    alive = new boolean[n];
    Arrays.fill(alive, true);
  }

  /**
   * Applies R0, R1, R2 and the folding of single-strategy nodes until none applies, in ascending
   * node order.
   *
   * @param p the problem (its memory bound is ignored)
   * @return the reduced problem, with the steps to undo
   */
  static PbqpReductions reduce(IlpProblem p) {
    PbqpReductions r = new PbqpReductions(p);
    r.run();
    return r;
  }

  private void run() {
    int n = cost.length;
    for (int v = 0; v < n; v++) {
      if (reducible(v)) {
        queue.add(v);
      }
    }
    while (!queue.isEmpty()) {
      int x = queue.pollFirst();
      if (!alive[x] || !reducible(x)) {
        continue;
      }
      Map<Integer, Edge> nb = adj.get(x);
      if (nb.isEmpty()) {
        steps.push(new Step(FIXED, x, -1, -1, new int[] {argmin(cost[x])}));
      } else if (cost[x].length == 1) {
        foldSingleStrategy(x);
      } else if (nb.size() == 1) {
        reduceDegreeOne(x);
      } else {
        reduceDegreeTwo(x);
      }
      alive[x] = false;
    }
    for (int v = 0; v < n; v++) {
      if (alive[v]) {
        core.add(v);
      }
    }
  }

  private boolean reducible(int v) {
    return adj.get(v).size() <= 2 || cost[v].length == 1;
  }

  /** A node with one strategy: its edges become costs of its neighbours. */
  private void foldSingleStrategy(int x) {
    Map<Integer, Edge> nb = adj.get(x);
    for (var en : new TreeMap<>(nb).entrySet()) {
      int y = en.getKey();
      Edge ed = en.getValue();
      for (int j = 0; j < cost[y].length; j++) {
        cost[y][j] += ed.get(x, 0, j);
      }
      work += cost[y].length;
      adj.get(y).remove(x);
      queue.add(y);
    }
    nb.clear();
    steps.push(new Step(FIXED, x, -1, -1, new int[] {0}));
  }

  /** R1: folds x into its one neighbour y. */
  private void reduceDegreeOne(int x) {
    Map<Integer, Edge> nb = adj.get(x);
    int sx = cost[x].length;
    int y = nb.keySet().iterator().next();
    Edge ed = nb.get(y);
    int sy = cost[y].length;
    int[] table = new int[sy];
    double[] cx = cost[x];
    double[] t = ed.fromRows(x, sx, sy);
    for (int j = 0; j < sy; j++) {
      double best = Double.POSITIVE_INFINITY;
      int arg = 0;
      int o = j * sx;
      for (int i = 0; i < sx; i++) {
        double c = cx[i] + t[o + i];
        if (c < best) {
          best = c;
          arg = i;
        }
      }
      table[j] = arg;
      cost[y][j] += best;
    }
    work += (long) sx * sy;
    adj.get(y).remove(x);
    nb.clear();
    steps.push(new Step(FROM_ONE, x, y, -1, table));
    queue.add(y);
  }

  /** R2: turns x, of neighbours y < z, into (an addition to) the edge between y and z. */
  private void reduceDegreeTwo(int x) {
    Map<Integer, Edge> nb = adj.get(x);
    int sx = cost[x].length;
    int[] ys = nb.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
    int y = ys[0];
    int z = ys[1];
    int sy = cost[y].length;
    int sz = cost[z].length;
    Edge eyz = adj.get(y).get(z);
    if (eyz == null) {
      eyz = new Edge(y, z, sz, new double[sy * sz]);
      adj.get(y).put(z, eyz);
      adj.get(z).put(y, eyz);
    }
    int[] table = new int[sy * sz];
    double[] cx = cost[x];
    double[] ty = nb.get(y).fromRows(x, sx, sy);
    double[] tz = nb.get(z).fromRows(x, sx, sz);
    double[] colY = new double[sx];
    boolean yFirst = eyz.a == y;
    for (int j = 0; j < sy; j++) {
      int oy = j * sx;
      for (int i = 0; i < sx; i++) {
        colY[i] = cx[i] + ty[oy + i];
      }
      for (int k = 0; k < sz; k++) {
        double best = Double.POSITIVE_INFINITY;
        int arg = 0;
        int oz = k * sx;
        for (int i = 0; i < sx; i++) {
          double c = colY[i] + tz[oz + i];
          if (c < best) {
            best = c;
            arg = i;
          }
        }
        table[j * sz + k] = arg;
        if (yFirst) {
          eyz.m[j * sz + k] += best;
        } else {
          eyz.m[k * eyz.sb + j] += best;
        }
      }
    }
    work += (long) sx * sy * sz;
    adj.get(y).remove(x);
    adj.get(z).remove(x);
    nb.clear();
    steps.push(new Step(FROM_TWO, x, y, z, table));
    queue.add(y);
    queue.add(z);
  }

  /**
   * The table evaluations the reductions took.
   *
   * @return the count
   */
  long work() {
    return work;
  }

  /**
   * How many nodes no reduction applies to (the nodes of {@link #coreProblem}).
   *
   * @return the count of core nodes; 0 when the reductions solved the problem
   */
  int coreSize() {
    return core.size();
  }

  /**
   * The full choice from the core's choice, undoing the reductions in reverse order.
   *
   * @param coreChoice one strategy per core node, in the order of {@link #coreProblem}
   * @return one strategy per node of the original problem
   */
  int[] backSubstitute(int[] coreChoice) {
    int[] choice = new int[cost.length];
    for (int k = 0; k < core.size(); k++) {
      choice[core.get(k)] = coreChoice[k];
    }
    for (Step s : steps) {
      choice[s.x()] = switch (s.kind()) {
        case FIXED -> s.table()[0];
        case FROM_ONE -> s.table()[choice[s.y()]];
        default -> s.table()[choice[s.y()] * cost[s.z()].length + choice[s.z()]];
      };
    }
    return choice;
  }

  /**
   * The problem over the core nodes (renumbered in ascending id order) with folded costs.
   *
   * @return a memory-free problem
   */
  IlpProblem coreProblem() {
    Map<Integer, Integer> index = new HashMap<>();
    double[][] costs = new double[core.size()][];
    for (int k = 0; k < core.size(); k++) {
      index.put(core.get(k), k);
      costs[k] = cost[core.get(k)];
    }
    List<IlpEdge> edges = new ArrayList<>();
    for (int k = 0; k < core.size(); k++) {
      int v = core.get(k);
      for (var en : new TreeMap<>(adj.get(v)).entrySet()) {
        int w = en.getKey();
        if (w <= v) {
          continue;
        }
        Edge ed = en.getValue();
        int sv = cost[v].length;
        int sw = cost[w].length;
        double[] m = new double[sv * sw];
        for (int i = 0; i < sv; i++) {
          for (int j = 0; j < sw; j++) {
            m[i * sw + j] = ed.get(v, i, j);
          }
        }
        edges.add(new IlpEdge(k, index.get(w), m));
      }
    }
    edges.sort((a, b) -> a.u() != b.u() ? Integer.compare(a.u(), b.u())
        : Integer.compare(a.v(), b.v()));
    return new IlpProblem(costs, edges, null);
  }

  private static int argmin(double[] c) {
    int arg = 0;
    for (int i = 1; i < c.length; i++) {
      if (c[i] < c[arg]) {
        arg = i;
      }
    }
    return arg;
  }
}
