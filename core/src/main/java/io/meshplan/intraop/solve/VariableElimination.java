package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Exact min-sum variable elimination (bucket elimination; Dechter, Artificial Intelligence 1999)
 * for the core that the degree-0/1/2 reductions leave. Variables are eliminated greedily by the
 * smallest new table (ties: lowest id); eliminating {@code x} replaces all tables that mention it
 * by one table over their other variables holding {@code min_x} of their sum, and records the
 * arg-min for back-substitution. The elimination is planned on sizes first and refused when some
 * step would need more than {@code maxWork} table evaluations, so it never runs away on dense
 * cores; the caller then uses CP-SAT.
 */
final class VariableElimination {
  private final long maxWork;
  private final long maxTotalWork;
  private long plannedWork;

  VariableElimination(long maxWork) {
    this(maxWork, Long.MAX_VALUE);
  }

  /**
   * Creates the solver with a limit on the whole elimination as well.
   *
   * @param maxWork the most table evaluations of one step
   * @param maxTotalWork the most table evaluations of all steps together
   */
  VariableElimination(long maxWork, long maxTotalWork) {
    this.maxWork = maxWork;
    this.maxTotalWork = maxTotalWork;
  }

  /**
   * The table evaluations the last successful {@link #solve} planned.
   *
   * @return the sum over the elimination steps
   */
  long plannedWork() {
    return plannedWork;
  }

  private static final class Factor {
    final int[] scope;
    final double[] table;

    Factor(int[] scope, double[] table) {
      this.scope = scope;
      this.table = table;
    }
  }

  private record Elimination(int x, int[] scope, int[] argmin) {}

  /**
   * Solves a problem without memory bound exactly, or returns null when it would be too costly.
   *
   * @param p the problem (its memory bound is ignored)
   * @return the optimal choice per node, ties broken by lowest strategy index, or null
   */
  int[] solve(IlpProblem p) {
    int n = p.nodeCount();
    int[] size = new int[n];
    for (int v = 0; v < n; v++) {
      size[v] = p.size(v);
    }
    int[] order = order(p, size);
    if (order == null) {
      return null;
    }
    List<List<Factor>> byVar = factors(p);
    List<Elimination> done = new ArrayList<>(n);
    for (int x : order) {
      done.add(eliminate(x, byVar, size));
    }
    int[] choice = new int[n];
    for (int k = done.size() - 1; k >= 0; k--) {
      Elimination e = done.get(k);
      int idx = 0;
      for (int v : e.scope()) {
        idx = idx * size[v] + choice[v];
      }
      choice[e.x()] = e.argmin()[idx];
    }
    return choice;
  }

  /**
   * Plans the elimination order on the interaction graph: each step takes the variable whose new
   * table is smallest (ties: lowest id), and sets {@link #plannedWork}.
   *
   * @return the order, or null when a step or the whole would exceed its work limit
   */
  private int[] order(IlpProblem p, int[] size) {
    int n = size.length;
    List<TreeSet<Integer>> nb = new ArrayList<>(n);
    for (int v = 0; v < n; v++) {
      nb.add(new TreeSet<>());
    }
    for (IlpEdge e : p.edges()) {
      nb.get(e.u()).add(e.v());
      nb.get(e.v()).add(e.u());
    }
    boolean[] gone = new boolean[n];
    int[] order = new int[n];
    double total = 0;
    for (int k = 0; k < n; k++) {
      int best = -1;
      double bestWork = Double.POSITIVE_INFINITY;
      for (int v = 0; v < n; v++) {
        if (gone[v]) {
          continue;
        }
        double work = size[v];
        for (int w : nb.get(v)) {
          work *= size[w];
        }
        if (work < bestWork) {
          bestWork = work;
          best = v;
        }
      }
      total += bestWork;
      if (bestWork > maxWork || total > maxTotalWork) {
        return null;
      }
      order[k] = best;
      gone[best] = true;
      connectNeighbours(nb, best);
    }
    plannedWork = (long) total;
    return order;
  }

  /** Removes a variable from the interaction graph, linking its neighbours to each other. */
  private static void connectNeighbours(List<TreeSet<Integer>> nb, int x) {
    for (int a : nb.get(x)) {
      nb.get(a).remove(x);
      for (int b : nb.get(x)) {
        if (a != b) {
          nb.get(a).add(b);
        }
      }
    }
    nb.get(x).clear();
  }

  /** The node and edge tables, listed under each variable they mention. */
  private static List<List<Factor>> factors(IlpProblem p) {
    int n = p.nodeCount();
    List<List<Factor>> byVar = new ArrayList<>(n);
    for (int v = 0; v < n; v++) {
      byVar.add(new ArrayList<>());
      Factor f = new Factor(new int[] {v}, p.nodeCosts()[v].clone());
      byVar.get(v).add(f);
    }
    for (IlpEdge e : p.edges()) {
      Factor f = new Factor(new int[] {e.u(), e.v()}, e.costs());
      byVar.get(e.u()).add(f);
      byVar.get(e.v()).add(f);
    }
    return byVar;
  }

  /**
   * Eliminates {@code x}: replaces the tables that mention it by one table over their other
   * variables (ascending ids) holding the minimum over {@code x} of their sum.
   */
  private static Elimination eliminate(int x, List<List<Factor>> byVar, int[] size) {
    List<Factor> fs = byVar.get(x);
    TreeSet<Integer> sc = new TreeSet<>();
    for (Factor f : fs) {
      for (int v : f.scope) {
        if (v != x) {
          sc.add(v);
        }
      }
    }
    int[] scope = sc.stream().mapToInt(Integer::intValue).toArray();
    int tableSize = 1;
    for (int v : scope) {
      tableSize *= size[v];
    }
    double[] table = new double[tableSize];
    int[] arg = new int[tableSize];
    minimize(fs, x, scope, size, table, arg);
    Factor nf2 = new Factor(scope, table);
    for (Factor f : fs) {
      for (int v : f.scope) {
        if (v != x) {
          byVar.get(v).remove(f);
        }
      }
    }
    fs.clear();
    for (int v : scope) {
      byVar.get(v).add(nf2);
    }
    return new Elimination(x, scope, arg);
  }

  /**
   * Fills {@code table} with the minimum over {@code x} of the sum of the factors at each
   * assignment of the scope (last variable fastest), and {@code arg} with the lowest minimizing
   * strategy. This loop is the solver's hot spot: it reads the factor tables directly.
   */
  private static void minimize(List<Factor> fs, int x, int[] scope, int[] size, double[] table,
      int[] arg) {
    // For each factor: stride of x and of each scope variable in its table.
    int nf = fs.size();
    int[] strideX = new int[nf];
    int[][] strideS = new int[nf][scope.length];
    for (int fi = 0; fi < nf; fi++) {
      Factor f = fs.get(fi);
      int stride = 1;
      for (int k = f.scope.length - 1; k >= 0; k--) {
        int v = f.scope[k];
        if (v == x) {
          strideX[fi] = stride;
        } else {
          strideS[fi][Arrays.binarySearch(scope, v)] = stride;
        }
        stride *= size[v];
      }
    }
    int[] a = new int[scope.length];
    int[] base = new int[nf];
    int sx = size[x];
    double[][] tabs = new double[nf][];
    for (int fi = 0; fi < nf; fi++) {
      tabs[fi] = fs.get(fi).table;
    }
    // The sums over x are built one factor at a time, in the factors' order, so each sum adds
    // its terms in the same order as a sum per x would (the same doubles, the same ties). The
    // first factor is x's own costs when it mentions x alone: a sum starts from a copy of it.
    double[] acc = new double[sx];
    int from = fs.get(0).scope.length == 1 ? 1 : 0;
    for (int t = 0; t < table.length; t++) {
      if (from == 1) {
        System.arraycopy(tabs[0], 0, acc, 0, sx);
      } else {
        Arrays.fill(acc, 0.0);
      }
      for (int fi = from; fi < nf; fi++) {
        double[] tab = tabs[fi];
        int b = base[fi];
        int st = strideX[fi];
        for (int xi = 0; xi < sx; xi++) {
          acc[xi] += tab[b + xi * st];
        }
      }
      double best = Double.POSITIVE_INFINITY;
      int bi = 0;
      for (int xi = 0; xi < sx; xi++) {
        if (acc[xi] < best) {
          best = acc[xi];
          bi = xi;
        }
      }
      table[t] = best;
      arg[t] = bi;
      // Advance the odometer over the scope (last variable fastest) and the factor bases.
      for (int k = scope.length - 1; k >= 0; k--) {
        a[k]++;
        for (int fi = 0; fi < nf; fi++) {
          base[fi] += strideS[fi][k];
        }
        if (a[k] < size[scope[k]]) {
          break;
        }
        for (int fi = 0; fi < nf; fi++) {
          base[fi] -= strideS[fi][k] * size[scope[k]];
        }
        a[k] = 0;
      }
    }
  }
}
