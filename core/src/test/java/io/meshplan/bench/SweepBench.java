package io.meshplan.bench;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointStatus;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.Sweep;
import io.meshplan.sweep.SweepGrid;
import io.meshplan.sweep.SweepGridReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Times a sweep on the local executor and prints one table row per grid: points, how they ended,
 * wall seconds and seconds per point. Run with the grid files as arguments, e.g.
 * {@code java -cp core/target/meshplan.jar:core/target/test-classes:core/target/lib/'*'
 * io.meshplan.bench.SweepBench examples/sweep.yaml}; {@code -Dthreads=N} sets the threads.
 */
public final class SweepBench {
  private SweepBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args grid files
   */
  public static void main(String[] args) {
    int threads = Integer.getInteger("threads", Runtime.getRuntime().availableProcessors());
    System.out.printf(Locale.ROOT, "| grid | points | ok | infeasible | other | threads | wall s |"
        + " s/point |%n|---|---|---|---|---|---|---|---|%n");
    for (String a : args) {
      SweepGrid grid = SweepGridReader.read(Path.of(a));
      long t0 = System.nanoTime();
      List<PointResult> r;
      try (LocalExecutor ex = new LocalExecutor(threads)) {
        r = new Sweep(ex, new PointTask(false, 0)).run(grid, n -> { });
      }
      double s = (System.nanoTime() - t0) / 1e9;
      long ok = r.stream().filter(x -> x.status() == PointStatus.OK).count();
      long inf = r.stream().filter(x -> x.status() == PointStatus.INFEASIBLE).count();
      System.out.printf(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %.1f | %.2f |%n", a,
          r.size(), ok, inf, r.size() - ok - inf, threads, s, s / r.size());
    }
  }
}
