package io.meshplan.intraop.solve;

import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The exact solutions of memory-free cores already solved, by the cores' content: a plan search
 * prices many layer settings whose graphs reduce to the same core (the same strategies, costs and
 * resharding matrices, in the same order), and the exact core solvers are deterministic, so a core
 * solved once is answered again without the work. Shared by every solver of the process and
 * bounded by the doubles its keys hold ({@link #MAX_DOUBLES}), the least recently used dropped
 * first; safe for the executor's threads.
 */
final class CoreSolutions {
  /** The most cost entries all keys hold together: 16 MiB of doubles. */
  static final long MAX_DOUBLES = 1L << 21;

  /** The solutions of this process. */
  static final CoreSolutions SHARED = new CoreSolutions(MAX_DOUBLES);

  private final long maxDoubles;
  private long doubles;
  private final LinkedHashMap<Key, int[]> byCore = new LinkedHashMap<>(64, 0.75f, true);

  CoreSolutions(long maxDoubles) {
    this.maxDoubles = maxDoubles;
  }

  /**
   * A core with what decides its exact solvers' answer: the costs and edges in order and the
   * solvers' work limits (they decide which exact solver answers, and so which of tied optima).
   */
  private static final class Key {
    final double[][] nodeCosts;
    final int[] ends;
    final double[][] edgeCosts;
    final long eliminationWork;
    final long conditioningWork;
    final int hash;
    final long size;

    Key(IlpProblem p, long eliminationWork, long conditioningWork) {
      int n = p.nodeCount();
      nodeCosts = new double[n][];
      long s = 0;
      for (int v = 0; v < n; v++) {
        nodeCosts[v] = p.nodeCosts()[v].clone();
        s += nodeCosts[v].length;
      }
      int m = p.edges().size();
      ends = new int[2 * m];
      edgeCosts = new double[m][];
      for (int k = 0; k < m; k++) {
        IlpEdge e = p.edges().get(k);
        ends[2 * k] = e.u();
        ends[2 * k + 1] = e.v();
        edgeCosts[k] = e.costs();
        s += edgeCosts[k].length;
      }
      this.eliminationWork = eliminationWork;
      this.conditioningWork = conditioningWork;
      this.size = s;
      int h = Arrays.deepHashCode(nodeCosts);
      h = 31 * h + Arrays.hashCode(ends);
      h = 31 * h + Arrays.deepHashCode(edgeCosts);
      h = 31 * h + Long.hashCode(eliminationWork);
      this.hash = 31 * h + Long.hashCode(conditioningWork);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && hash == k.hash && eliminationWork == k.eliminationWork
          && conditioningWork == k.conditioningWork && Arrays.equals(ends, k.ends)
          && Arrays.deepEquals(nodeCosts, k.nodeCosts) && Arrays.deepEquals(edgeCosts,
              k.edgeCosts);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }

  /**
   * The exact solution of a core: the one solved before for an equal core under the same limits,
   * else {@code solve}'s, kept when it found one.
   *
   * @param core the memory-free core
   * @param eliminationWork the variable elimination's work limit
   * @param conditioningWork the conditioning's work limit
   * @param solve the exact solvers; null when both would exceed their limits
   * @return a choice per core node (a copy), or null
   */
  int[] solve(IlpProblem core, long eliminationWork, long conditioningWork,
      Function<IlpProblem, int[]> solve) {
    Key key = new Key(core, eliminationWork, conditioningWork);
    int[] known;
    synchronized (this) {
      known = byCore.get(key);
    }
    if (known != null) {
      return known.clone();
    }
    int[] found = solve.apply(core);
    if (found == null || key.size > maxDoubles) {
      return found;
    }
    synchronized (this) {
      if (byCore.put(key, found.clone()) == null) {
        doubles += key.size;
      }
      var it = byCore.entrySet().iterator();
      while (doubles > maxDoubles && it.hasNext()) {
        Map.Entry<Key, int[]> eldest = it.next();
        doubles -= eldest.getKey().size;
        it.remove();
      }
    }
    return found;
  }

  /**
   * The cores held.
   *
   * @return the count
   */
  synchronized int size() {
    return byCore.size();
  }
}
