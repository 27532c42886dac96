package io.meshplan.interop.dp;

import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.util.Require;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Alpa's inter-operator stage DP (Zheng et al., OSDI'22, section 5.2): slices L layers into
 * pipeline stages and gives each stage a submesh of an N x M cluster, minimizing the pipeline
 * latency {@code T* = sum_i t_i + (B - 1) * max_i t_i} (equation 2) for B microbatches.
 *
 * <p>Rules:
 *
 * <ul>
 *   <li>The stages, in order, cover layers 0..L-1 with consecutive ranges and use submeshes whose
 *       device counts sum to exactly N * M.
 *   <li>For a fixed {@code t_max}, {@code F(s, k, d) = min over i >= k and submesh j with size
 *       n_j*m_j <= d of t(k..i, j) + F(s - 1, i + 1, d - n_j*m_j)}, over options with {@code t <=
 *       t_max} (equation 3); F(0, L, 0) = 0.
 *   <li>1F1B memory: a stage followed by s - 1 later stages holds min(s, B) microbatches, so an
 *       option is allowed only if {@code staticBytes + min(s, B) * activationBytes <= capacity}.
 *       Since only min(s, B) matters, the DP keeps s capped at min(B, L), and further at one past
 *       the largest in-flight count at which some candidate's fastest fitting option changes
 *       (beyond it every candidate behaves the same): exact, and smaller.
 *   <li>{@code t_max} ranges over the distinct option latencies from the smallest for which any
 *       plan exists (found by binary search with a reachability version of the same recursion on
 *       bit sets, which also tells infeasibility). For a {@code t_max}, the plan with the least
 *       {@code sum t_i} under it is scored by its true T*. Alpa enumerates them in ascending order
 *       and stops once {@code B * t_max >= best} (every plan not yet seen has {@code max t_i >=
 *       t_max}); this DP searches the same sequence by branch and bound over intervals of
 *       latencies ({@link TmaxSearch}), which skips an interval when a lower bound on the T* of
 *       its new plans exceeds the best, and returns the plan of Alpa's ascending scan ({@link
 *       #solveByScan}, the tests' reference). With B = 1, T* is the plain sum and one DP with no
 *       bound on {@code t_max} is exact.
 * </ul>
 *
 * <p>Tie-breaks, so the same table gives the same plan: among plans of equal T*, the one found at
 * the smaller {@code t_max} is kept (so the smaller slowest stage wins). Within one DP, the plan is
 * the lexicographically smallest sequence of (last layer, submesh index) among those with the least
 * sum: at each state the first stage is the first candidate in loop order that attains the optimum
 * (smaller last layer, then smaller submesh index); inside a cell the option with the smaller
 * latency, then the smaller index in the cell's list, is used; among final states, the smaller
 * capped stage count comes first.
 *
 * <p>Cost: devices are counted in units of g, the greatest common divisor of N * M and the submesh
 * sizes. One DP pass takes O(L^2 * S * min(B, L) * (N*M/g)) time for S shapes and O(L * min(B, L) *
 * N*M/g) memory; the search makes one pass per {@code t_max} tried, plus log2 of the number of
 * latencies bit-set passes (64 device counts per machine word) to find the smallest feasible {@code
 * t_max}. For very large clusters choose shapes with a large g (for example whole-node shapes
 * only).
 *
 * <p>When no plan fits in memory, the result says the smallest capacity that would let one fit (a
 * min-max DP over memory, ignoring time).
 */
public final class StageDp {
  private static final int SUM = 0;
  private static final int MEMORY = 1;

  private final StageDpProblem problem;
  private final int layers;
  private final int shapes;
  private final int fullCap;
  private final int timeCap;
  private final int unitsTotal;
  private final int[] units;
  private final List<List<StageOption>> cellOptions = new ArrayList<>();
  // Per cell, "steps": options in ascending latency that each fit more in-flight microbatches than
  // every faster one. stepFrom[c]..stepFrom[c+1]-1 index stepT/stepS/stepO.
  private final int[] stepFrom;
  private final double[] stepT;
  private final int[] stepS;
  private final int[] stepO;
  private final double[][] rows;
  private final int[] lo;
  private final int[] hi;

  /**
   * Prepares the DP.
   *
   * @param problem the cost table, cluster, memory capacity and microbatches
   */
  public StageDp(StageDpProblem problem) {
    this.problem = Require.nonNull(problem, "problem");
    this.layers = problem.layers();
    this.shapes = problem.shapes().size();
    this.fullCap = Math.min(problem.microbatches(), layers);
    int g = problem.devices();
    for (SubmeshShape s : problem.shapes()) {
      g = gcd(g, s.devices());
    }
    this.unitsTotal = problem.devices() / g;
    this.units = new int[shapes];
    for (int j = 0; j < shapes; j++) {
      units[j] = problem.shapes().get(j).devices() / g;
    }
    int cells = Math.multiplyExact(Math.multiplyExact(layers, layers), shapes);
    this.stepFrom = new int[cells + 1];
    List<double[]> steps = new ArrayList<>();
    for (int k = 0; k < layers; k++) {
      for (int i = 0; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          int c = cell(k, i, j);
          List<StageOption> opts = i >= k ? problem.table().options(k, i, j) : List.of();
          cellOptions.add(opts);
          stepFrom[c] = steps.size();
          addSteps(opts, steps);
        }
      }
    }
    stepFrom[cells] = steps.size();
    stepT = new double[steps.size()];
    stepS = new int[steps.size()];
    stepO = new int[steps.size()];
    for (int x = 0; x < steps.size(); x++) {
      stepT[x] = steps.get(x)[0];
      stepS[x] = (int) steps.get(x)[1];
      stepO[x] = (int) steps.get(x)[2];
    }
    int lastChange = 0;
    for (int x = 0; x < stepS.length; x++) {
      if (stepS[x] < fullCap) {
        lastChange = Math.max(lastChange, stepS[x]);
      }
    }
    this.timeCap = lastChange + 1;
    int nrows = Math.multiplyExact(layers + 1, fullCap + 1);
    this.rows = new double[nrows][];
    this.lo = new int[nrows];
    this.hi = new int[nrows];
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  private int cell(int k, int i, int j) {
    return (k * layers + i) * shapes + j;
  }

  private int row(int k, int s) {
    return k * (fullCap + 1) + s;
  }

  /** The largest in-flight count (up to cap) for which the option fits, 0 if none. */
  private int fits(StageOption o) {
    double capacity = problem.memoryCapacityBytes();
    int s = 0;
    if (o.activationBytes() == 0) {
      s = o.memoryBytes(1) <= capacity ? fullCap : 0;
    } else {
      double guess = Math.floor((capacity - o.staticBytes()) / o.activationBytes());
      s = (int) Math.max(0, Math.min(fullCap, guess));
      while (s < fullCap && o.memoryBytes(s + 1) <= capacity) {
        s++;
      }
      while (s > 0 && o.memoryBytes(s) > capacity) {
        s--;
      }
    }
    return s;
  }

  private void addSteps(List<StageOption> opts, List<double[]> steps) {
    Integer[] order = new Integer[opts.size()];
    for (int x = 0; x < order.length; x++) {
      order[x] = x;
    }
    Arrays.sort(order, (a, b) -> {
      int byT = Double.compare(opts.get(a).latencySeconds(), opts.get(b).latencySeconds());
      return byT != 0 ? byT : Integer.compare(a, b);
    });
    int covered = 0;
    for (int x : order) {
      int f = fits(opts.get(x));
      if (f > covered) {
        steps.add(new double[] {opts.get(x).latencySeconds(), f, x});
        covered = f;
      }
    }
  }

  /** The step of the fastest option of a cell that fits s in flight, or -1. */
  private int step(int c, int s) {
    int x = stepFitting(stepFrom[c], stepFrom[c + 1], s);
    return x == stepFrom[c + 1] ? -1 : x;
  }

  private boolean unusable(int c, int mode) {
    return mode == MEMORY ? cellOptions.get(c).isEmpty() : stepFrom[c] == stepFrom[c + 1];
  }

  /** The value a cell adds in a pass, or NaN when it cannot be used. */
  private double value(int c, int s, double tmax, int mode) {
    if (mode == MEMORY) {
      double best = Double.NaN;
      for (StageOption o : cellOptions.get(c)) {
        double m = o.memoryBytes(s);
        if (!(m >= best)) {
          best = m;
        }
      }
      return best;
    }
    int x = step(c, s);
    return x < 0 || stepT[x] > tmax ? Double.NaN : stepT[x];
  }

  /**
   * Runs the DP.
   *
   * @return the optimal plan, or the infeasibility with the memory that would be needed
   */
  public StageDpResult solve() {
    StageDpResult pre = prepare();
    if (pre != null) {
      return pre;
    }
    double[] latencies = distinctLatencies();
    return new TmaxSearch(latencies, smallestFeasible(latencies), problem.microbatches()).run();
  }

  /**
   * The answers that need no t_max search: no plan fits (with the memory that would be needed), or
   * B = 1, where T* is the plain sum and one pass with no bound on t_max is exact.
   *
   * @return the result, or null when the search must run
   */
  private StageDpResult prepare() {
    double top = stepT.length == 0 ? Double.NaN
        : Arrays.stream(stepT).max().getAsDouble();
    if (stepT.length == 0 || !feasible(top)) {
      double need = pass(Double.POSITIVE_INFINITY, MEMORY);
      if (Double.isInfinite(need)) {
        return new StageDpResult.Infeasible(OptionalDouble.empty(), "no partition of the "
            + layers + " layers into stages has submeshes whose sizes sum to "
            + problem.devices() + " devices");
      }
      return new StageDpResult.Infeasible(OptionalDouble.of(need), "no pipeline plan fits in "
          + Units.formatBytes(problem.memoryCapacityBytes())
          + " per GPU; the plan that needs the least memory needs " + Units.formatBytes(need));
    }
    if (problem.microbatches() == 1) {
      pass(Double.POSITIVE_INFINITY, SUM);
      return new StageDpResult.Feasible(reconstruct(Double.POSITIVE_INFINITY, SUM), 1);
    }
    return null;
  }

  /** The options' latencies, ascending, each once: the values t_max can take. */
  private double[] distinctLatencies() {
    return Arrays.stream(stepT).sorted().distinct().toArray();
  }

  /** The index of the smallest feasible latency (feasibility only grows with t_max). */
  private int smallestFeasible(double[] latencies) {
    int low = 0;
    int high = latencies.length - 1;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (feasible(latencies[mid])) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return low;
  }

  /**
   * The reference for the t_max search: every latency from the smallest feasible one upwards, with
   * Alpa's early stop ({@code B * t_max >= best}) and the same tie rule (a later plan replaces the
   * best only when strictly better). {@link #solve} returns the same plan.
   *
   * @return the plan, or the infeasibility, as {@link #solve}
   */
  StageDpResult solveByScan() {
    StageDpResult pre = prepare();
    if (pre != null) {
      return pre;
    }
    int b = problem.microbatches();
    double[] latencies = distinctLatencies();
    StagePartition best = null;
    int tried = 0;
    for (int x = smallestFeasible(latencies); x < latencies.length; x++) {
      double tmax = latencies[x];
      if (best != null && b * tmax >= best.objectiveSeconds()) {
        break;
      }
      tried++;
      if (Double.isInfinite(pass(tmax, SUM))) {
        continue;
      }
      StagePartition plan = reconstruct(tmax, SUM);
      if (best == null || plan.objectiveSeconds() < best.objectiveSeconds()) {
        best = plan;
      }
    }
    return new StageDpResult.Feasible(best, tried);
  }

  /**
   * Branch and bound over the ascending latencies {@code t_0 < t_1 < ...} for B > 1, giving the
   * plan of the ascending scan with fewer DP passes. Let S(t) be the least sum of stage latencies
   * under t_max = t (non-increasing in t) and plan(t) the plan the DP reconstructs. For an interval
   * of latencies strictly between two evaluated ones t_a < t_c:
   *
   * <ul>
   *   <li>a plan(t) that differs from plan(t_a) uses an option slower than t_a (a plan using only
   *       options up to t_a with the least sum would have been reconstructed at t_a, by the same
   *       loop order), so its T* is at least {@code max(S(t_c), t_{a+1}) + (B - 1) * t_{a+1}}; the
   *       interval is skipped when that is above the best T* found;
   *   <li>when S(t_a) = S(t_c), every plan(t) inside either is plan(t_a) or is slower than it in
   *       its slowest stage at the same sum, so the interval is skipped.
   * </ul>
   *
   * Otherwise the middle latency is evaluated and both halves are searched, the lower first. Among
   * plans of equal T* the one at the smaller t_max is kept, as the scan does.
   */
  private final class TmaxSearch {
    private final double[] latencies;
    private final int low;
    private final int b;
    private final double[] sums;
    private StagePartition best;
    private int bestIndex = Integer.MAX_VALUE;
    private int tried;

    TmaxSearch(double[] latencies, int low, int b) {
      this.latencies = latencies;
      this.low = low;
      this.b = b;
      this.sums = new double[latencies.length];
    }

    StageDpResult run() {
      int n = latencies.length;
      evaluate(low);
      // Intervals (a, c): a evaluated, c evaluated or n (nothing known above a).
      java.util.ArrayDeque<int[]> stack = new java.util.ArrayDeque<>();
      stack.push(new int[] {low, n});
      while (!stack.isEmpty()) {
        int[] iv = stack.pop();
        int a = iv[0];
        int c = iv[1];
        if (c - a < 2 && c < n || a + 1 >= n) {
          continue;
        }
        double next = latencies[a + 1];
        double sumBelow = c < n ? sums[c] : 0;
        if (c < n && sums[a] == sums[c] && !Double.isInfinite(sums[a])) {
          continue;
        }
        double bound = Math.max(sumBelow, next) + (b - 1) * next;
        if (best != null && bound > best.objectiveSeconds() * (1 + 1e-12)) {
          continue;
        }
        int mid = c == n ? n - 1 : (a + c) >>> 1;
        evaluate(mid);
        if (c < n) {
          stack.push(new int[] {mid, c});
        }
        stack.push(new int[] {a, mid});
      }
      return new StageDpResult.Feasible(best, tried);
    }

    private void evaluate(int x) {
      tried++;
      double tmax = latencies[x];
      sums[x] = pass(tmax, SUM);
      if (Double.isInfinite(sums[x])) {
        return;
      }
      StagePartition plan = reconstruct(tmax, SUM);
      if (best == null || plan.objectiveSeconds() < best.objectiveSeconds()
          || plan.objectiveSeconds() == best.objectiveSeconds() && x < bestIndex) {
        best = plan;
        bestIndex = x;
      }
    }
  }

  /**
   * Whether any plan has every stage latency at most {@code tmax}: the same recursion over sets of
   * device counts, as bit sets (bit d of row (k, s) is set when a suffix can use d units).
   */
  private boolean feasible(double tmax) {
    int cap = timeCap;
    int words = (unitsTotal >>> 6) + 1;
    // A cluster of at most 63 device units keeps each row in one long (an unreached row is 0);
    // a larger one each reached row in an array of words.
    long[] word = words == 1 ? new long[rows.length] : null;
    long[][] bits = words == 1 ? null : new long[rows.length][];
    if (word != null) {
      word[row(layers, 0)] = 1L;
    } else {
      bits[row(layers, 0)] = new long[words];
      bits[row(layers, 0)][0] = 1L;
    }
    for (int k = layers - 1; k >= 0; k--) {
      int smax = Math.min(cap, layers - k);
      for (int i = k; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          int c = cell(k, i, j);
          int x = stepFrom[c];
          int end = stepFrom[c + 1];
          for (int s = 1; s <= smax; s++) {
            x = stepFitting(x, end, s);
            if (x == end || stepT[x] > tmax) {
              break;
            }
            orShifted(word, bits, row(k, s), row(i + 1, s - 1), units[j], words);
            if (s == cap) {
              orShifted(word, bits, row(k, s), row(i + 1, s), units[j], words);
            }
          }
        }
      }
    }
    for (int s = 1; s <= cap; s++) {
      int r = row(0, s);
      boolean all = word != null ? (word[r] >>> unitsTotal & 1L) != 0
          : bits[r] != null && (bits[r][unitsTotal >>> 6] & (1L << (unitsTotal & 63))) != 0;
      if (all) {
        return true;
      }
    }
    return false;
  }

  /**
   * The first step at or after {@code x}, and before {@code end}, that fits {@code s} in-flight
   * microbatches ({@code end} when none does). A cell's steps ascend in latency and in-flight count,
   * so for rising {@code s} the walk only moves forward.
   */
  private int stepFitting(int x, int end, int s) {
    int y = x;
    while (y < end && stepS[y] < s) {
      y++;
    }
    return y;
  }

  /**
   * dst |= src shifted up by z bits, in one-word rows ({@code word}) or rows of {@code words}
   * words; bits beyond the cluster only ever move further up.
   */
  private static void orShifted(long[] word, long[][] bits, int dst, int src, int z, int words) {
    if (word != null) {
      word[dst] |= word[src] << z;
      return;
    }
    long[] from = bits[src];
    if (from == null) {
      return;
    }
    if (bits[dst] == null) {
      bits[dst] = new long[words];
    }
    long[] to = bits[dst];
    int q = z >>> 6;
    int r = z & 63;
    for (int w = words - 1; w >= q; w--) {
      long v = from[w - q] << r;
      if (r != 0 && w - q - 1 >= 0) {
        v |= from[w - q - 1] >>> (64 - r);
      }
      to[w] |= v;
    }
  }

  /** Fills the rows for one t_max and returns the best value at (k = 0, d = all devices). */
  private double pass(double tmax, int mode) {
    int cap = mode == MEMORY ? fullCap : timeCap;
    for (int r = 0; r < rows.length; r++) {
      if (rows[r] != null && hi[r] >= lo[r]) {
        Arrays.fill(rows[r], lo[r], hi[r] + 1, Double.POSITIVE_INFINITY);
      }
      lo[r] = Integer.MAX_VALUE;
      hi[r] = -1;
    }
    int end = row(layers, 0);
    ensure(end);
    rows[end][0] = 0.0;
    lo[end] = 0;
    hi[end] = 0;
    for (int k = layers - 1; k >= 0; k--) {
      int smax = Math.min(cap, layers - k);
      for (int i = k; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          int c = cell(k, i, j);
          if (unusable(c, mode)) {
            continue;
          }
          if (mode == SUM) {
            int x = stepFrom[c];
            int stop = stepFrom[c + 1];
            for (int s = 1; s <= smax; s++) {
              x = stepFitting(x, stop, s);
              if (x == stop || stepT[x] > tmax) {
                break;
              }
              relax(row(k, s), row(i + 1, s - 1), units[j], stepT[x], mode);
              if (s == cap) {
                relax(row(k, s), row(i + 1, s), units[j], stepT[x], mode);
              }
            }
            continue;
          }
          for (int s = 1; s <= smax; s++) {
            double v = value(c, s, tmax, mode);
            if (Double.isNaN(v)) {
              continue;
            }
            relax(row(k, s), row(i + 1, s - 1), units[j], v, mode);
            if (s == cap) {
              relax(row(k, s), row(i + 1, s), units[j], v, mode);
            }
          }
        }
      }
    }
    double best = Double.POSITIVE_INFINITY;
    for (int s = 1; s <= cap; s++) {
      double[] r = rows[row(0, s)];
      if (r != null && r[unitsTotal] < best) {
        best = r[unitsTotal];
      }
    }
    return best;
  }

  private void ensure(int r) {
    if (rows[r] == null) {
      rows[r] = new double[unitsTotal + 1];
      Arrays.fill(rows[r], Double.POSITIVE_INFINITY);
    }
  }

  private void relax(int dst, int src, int z, double v, int mode) {
    double[] from = rows[src];
    if (from == null || hi[src] < 0) {
      return;
    }
    int last = Math.min(hi[src], unitsTotal - z);
    int first = lo[src];
    if (first > last) {
      return;
    }
    ensure(dst);
    double[] to = rows[dst];
    // Branch-free so that the JIT can vectorize it; an infinite source stays infinite.
    if (mode == SUM) {
      for (int d = first; d <= last; d++) {
        to[d + z] = Math.min(to[d + z], v + from[d]);
      }
    } else {
      for (int d = first; d <= last; d++) {
        to[d + z] = Math.min(to[d + z], Math.max(v, from[d]));
      }
    }
    lo[dst] = Math.min(lo[dst], first + z);
    hi[dst] = Math.max(hi[dst], last + z);
  }

  /** Walks the filled rows from (0, all devices), repeating the fill's loop order. */
  private StagePartition reconstruct(double tmax, int mode) {
    int cap = timeCap;
    int s = -1;
    double target = Double.POSITIVE_INFINITY;
    for (int x = 1; x <= cap; x++) {
      double[] r = rows[row(0, x)];
      if (r != null && r[unitsTotal] < target) {
        target = r[unitsTotal];
        s = x;
      }
    }
    List<Stage> stages = new ArrayList<>();
    int k = 0;
    int d = unitsTotal;
    while (k < layers) {
      boolean found = false;
      for (int i = k; i < layers && !found; i++) {
        for (int j = 0; j < shapes && !found; j++) {
          int c = cell(k, i, j);
          if (units[j] > d || unusable(c, mode)) {
            continue;
          }
          double v = value(c, s, tmax, mode);
          if (Double.isNaN(v)) {
            continue;
          }
          int[] prevs = s == cap ? new int[] {s - 1, s} : new int[] {s - 1};
          for (int p : prevs) {
            double[] from = rows[row(i + 1, p)];
            if (from == null) {
              continue;
            }
            double rest = from[d - units[j]];
            double total = mode == SUM ? v + rest : Math.max(v, rest);
            if (total == target && !Double.isInfinite(rest)) {
              int x = step(c, s);
              StageOption o = cellOptions.get(c).get(stepO[x]);
              stages.add(new Stage(k, i, j, problem.shapes().get(j), o));
              k = i + 1;
              d -= units[j];
              s = p;
              target = rest;
              found = true;
              break;
            }
          }
        }
      }
      if (!found) {
        throw new IllegalStateException("stage DP table is inconsistent at layer " + k);
      }
    }
    return StagePartition.of(stages, problem.microbatches());
  }
}
