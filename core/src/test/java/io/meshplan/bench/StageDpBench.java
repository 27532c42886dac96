package io.meshplan.bench;

import io.meshplan.interop.dp.StageCostTable;
import io.meshplan.interop.dp.StageDp;
import io.meshplan.interop.dp.StageDpProblem;
import io.meshplan.interop.dp.StageDpResult;
import io.meshplan.interop.dp.StageOption;
import io.meshplan.interop.space.SubmeshShape;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Speed of {@link StageDp} on synthetic cost tables shaped like a transformer's: L layers of equal
 * cost, a stage's latency falls with its devices (with a communication penalty), its memory is
 * the layers' weights and activations split over the devices, and latencies are rounded to about
 * 100 distinct values. Prints one row per (L, cluster). Run after {@code mvn -o -q test-compile}:
 *
 * <pre>
 * java -Xmx2g -cp core/target/test-classes:core/target/meshplan.jar io.meshplan.bench.StageDpBench
 * </pre>
 *
 * Columns: layers, cluster, shapes, device units (N*M over the gcd of the sizes), B, distinct
 * latencies, t_max values tried, stages of the plan, its objective, and the CPU and wall seconds
 * to build the DP and solve (best of 3 after one warm-up; a row whose first run takes over 5 s is
 * timed once). CPU seconds of the solving thread are the number to compare on a shared machine.
 */
public final class StageDpBench {
  private StageDpBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args optional: microbatches B (default 16), comma-separated layer counts (default
   *     40,80,126), and whether to run the 2048 x 8 cluster (default true)
   */
  public static void main(String[] args) {
    int b = args.length > 0 ? Integer.parseInt(args[0]) : 16;
    int[] sizes = args.length > 1 ? java.util.Arrays.stream(args[1].split(","))
        .mapToInt(Integer::parseInt).toArray() : new int[] {40, 80, 126};
    boolean large = args.length <= 2 || Boolean.parseBoolean(args[2]);
    System.out.printf(Locale.ROOT, "%6s %9s %7s %7s %4s %10s %6s %7s %12s %9s %9s%n", "layers",
        "cluster", "shapes", "units", "B", "latencies", "tried", "stages", "objective", "cpu s",
        "wall s");
    for (int layers : sizes) {
      row(layers, 50, 4, SubmeshShape.alpaShapes(50, 4), b);
      row(layers, 128, 8, coarseShapes(128, 8), b);
      if (large) {
        row(layers, 2048, 8, coarseShapes(2048, 8), b);
      }
    }
  }

  /** In-node powers of two, then n x M for n = 2, 3, 4, 6, 8, 12, ... up to N. */
  static List<SubmeshShape> coarseShapes(int nodes, int gpus) {
    List<SubmeshShape> shapes = new ArrayList<>();
    for (int m = 1; m < gpus; m *= 2) {
      shapes.add(new SubmeshShape(1, m));
    }
    shapes.add(new SubmeshShape(1, gpus));
    for (int p = 2; p <= nodes; p *= 2) {
      if (p / 2 * 3 <= nodes && p / 2 * 3 > p / 2 * 2 && p >= 4) {
        shapes.add(new SubmeshShape(p / 4 * 3, gpus));
      }
      shapes.add(new SubmeshShape(p, gpus));
    }
    if (shapes.get(shapes.size() - 1).n() != nodes) {
      shapes.add(new SubmeshShape(nodes, gpus));
    }
    return List.copyOf(shapes);
  }

  private static void row(int layers, int nodes, int gpus, List<SubmeshShape> shapes, int b) {
    StageCostTable table = new SyntheticTable(layers, shapes);
    // Every layer: 2 GB of weights and optimizer state, 0.25 GB of activations per microbatch.
    double capacity = 80e9;
    StageDpProblem problem = new StageDpProblem(shapes, nodes, gpus, table, capacity, b);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long w0 = System.nanoTime();
    long c0 = threads.getCurrentThreadCpuTime();
    StageDpResult result = new StageDp(problem).solve();
    double best = (System.nanoTime() - w0) / 1e9;
    double bestCpu = (threads.getCurrentThreadCpuTime() - c0) / 1e9;
    // Slow rows (over 5 s) are timed once: the warm-up is the measurement.
    for (int rep = 0; rep < 3 && best < 5; rep++) {
      long t0 = System.nanoTime();
      long cpu0 = threads.getCurrentThreadCpuTime();
      result = new StageDp(problem).solve();
      best = Math.min(best, (System.nanoTime() - t0) / 1e9);
      bestCpu = Math.min(bestCpu, (threads.getCurrentThreadCpuTime() - cpu0) / 1e9);
    }
    long distinct = distinctLatencies(table, layers, shapes.size());
    int g = nodes * gpus;
    for (SubmeshShape s : shapes) {
      g = gcd(g, s.devices());
    }
    String cluster = nodes + "x" + gpus;
    if (result instanceof StageDpResult.Feasible f) {
      System.out.printf(Locale.ROOT, "%6d %9s %7d %7d %4d %10d %6d %7d %12.4f %9.3f %9.3f%n",
          layers, cluster, shapes.size(), nodes * gpus / g, b, distinct, f.latenciesTried(),
          f.plan().stages().size(), f.plan().objectiveSeconds(), bestCpu, best);
    } else {
      System.out.printf(Locale.ROOT, "%6d %9s %7d %7d %4d %10d %6s %7s %12s %9.3f %9.3f%n",
          layers, cluster, shapes.size(), nodes * gpus / g, b, distinct, "-", "-", "infeasible",
          bestCpu, best);
    }
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  private static long distinctLatencies(StageCostTable t, int layers, int shapes) {
    java.util.TreeSet<Double> set = new java.util.TreeSet<>();
    for (int k = 0; k < layers; k++) {
      for (int i = k; i < layers; i++) {
        for (int j = 0; j < shapes; j++) {
          for (StageOption o : t.options(k, i, j)) {
            set.add(o.latencySeconds());
          }
        }
      }
    }
    return set.size();
  }

  /** Options computed on demand, so large tables need no storage. */
  private static final class SyntheticTable implements StageCostTable {
    private final int layers;
    private final List<SubmeshShape> shapes;

    SyntheticTable(int layers, List<SubmeshShape> shapes) {
      this.layers = layers;
      this.shapes = shapes;
    }

    @Override
    public int layers() {
      return layers;
    }

    @Override
    public int submeshes() {
      return shapes.size();
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      int n = last - first + 1;
      int devices = shapes.get(submesh).devices();
      // 0.1 s of work per layer per microbatch, 90% parallel efficiency per doubling, plus a
      // fixed 2 ms per stage; rounded to one of 100 log-spaced values between 1 ms and 100 s.
      double ideal = 0.1 * n / Math.pow(devices, 0.85) + 0.002;
      double bucket = Math.ceil(Math.log(ideal / 1e-3) / Math.log(1e5) * 100);
      double latency = 1e-3 * Math.pow(1e5, bucket / 100);
      double weights = 2e9 * n / devices;
      double activations = 0.25e9 * n / Math.min(devices, 8);
      return List.of(new StageOption(latency, weights, activations, submesh));
    }
  }
}
