package io.meshplan.bench;

import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Parse speed and memory of {@link HloParser} on generated transformer training steps with
 * metadata, as a dump of a 40-layer model looks. Prints one table row per size; the largest is
 * 50,000 instructions. Run after {@code mvn -o -q test-compile}:
 *
 * <pre>
 * java -Xmx2g -cp core/target/test-classes:core/target/meshplan.jar io.meshplan.bench.HloParseBench
 * </pre>
 *
 * Columns: instructions, file bytes, parse seconds (best of 5 after 3 warm-up parses), heap bytes
 * held by the parsed module (after GC), heap bytes per file byte, print seconds, and the seconds
 * and status of planning the entry computation on a 2 x 4 mesh (alpha 1,1; beta 1,0.01; 80 GiB)
 * on the second run.
 */
public final class HloParseBench {
  private HloParseBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args optional: the largest instruction count (default 50000)
   */
  public static void main(String[] args) {
    int largest = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
    System.out.printf(Locale.ROOT, "%12s %12s %10s %14s %10s %10s %10s %9s%n", "instructions",
        "file bytes", "parse s", "heap bytes", "heap/file", "print s", "plan s", "status");
    for (int n : new int[] {largest / 8, largest / 4, largest / 2, largest}) {
      row(n);
    }
  }

  private static void row(int target) {
    int layers = 40;
    String text = TransformerHlo.generate(layers, target);
    long bytes = text.getBytes(StandardCharsets.UTF_8).length;
    HloParser parser = new HloParser();
    for (int i = 0; i < 3; i++) {
      parser.parse(text, "bench.hlo");
    }
    double best = Double.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      long t0 = System.nanoTime();
      parser.parse(text, "bench.hlo");
      best = Math.min(best, (System.nanoTime() - t0) / 1e9);
    }
    long before = usedAfterGc();
    HloModule module = parser.parse(text, "bench.hlo");
    long heap = usedAfterGc() - before;
    long t0 = System.nanoTime();
    String printed = new HloPrinter().print(module);
    double print = (System.nanoTime() - t0) / 1e9;
    int instructions = 0;
    for (var c : module.computations()) {
      instructions += c.graph().size();
    }
    // Plan the entry computation on a 2x4 mesh with Alpa's constants (second run, JIT warm).
    io.meshplan.intraop.MeshEnv env = new io.meshplan.intraop.MeshEnv(
        new io.meshplan.cluster.AlphaBetaCommModel(io.meshplan.cluster.LogicalMesh.of(2, 4),
            new double[] {1, 1}, new double[] {1, 0.01}), 80.0 * (1L << 30),
        java.util.Optional.empty());
    io.meshplan.intraop.AutoSharding planner = new io.meshplan.intraop.AutoSharding(env,
        io.meshplan.intraop.SolverOptions.defaults());
    planner.plan(module.entry());
    long p0 = System.nanoTime();
    io.meshplan.intraop.ShardingPlan plan = planner.plan(module.entry());
    double planSecs = (System.nanoTime() - p0) / 1e9;
    System.out.printf(Locale.ROOT, "%12d %12d %10.3f %14d %10.2f %10.3f %10.3f %9s%n",
        instructions, bytes, best, heap, (double) heap / bytes, print, planSecs,
        plan.solution().status());
    if (printed.isEmpty()) {
      throw new IllegalStateException("nothing printed");
    }
  }

  private static long usedAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 4; i++) {
      System.gc();
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return rt.totalMemory() - rt.freeMemory();
  }
}
