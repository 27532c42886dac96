package io.meshplan.bench;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.LlamaForwardBuilder;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import java.util.Locale;
import java.util.Optional;

/**
 * Benchmark of intra-operator planning (strategy build plus solve) on the LLaMA presets, Alpa's
 * constants (alpha 1,1; beta 1,0.01) and 32 or 80 GiB per device, with parameters resident for the
 * whole step (meshplan's default) or live from their position (Alpa's prototype). Prints a table: best of 5 runs after 3
 * warm-up runs. Run: {@code java -cp target/test-classes:target/meshplan.jar
 * io.meshplan.bench.ShardBench}.
 */
public final class ShardBench {
  private ShardBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    String[][] cases = {
        {"llama2-13b", "50x4", "32", "resident"}, {"llama2-13b", "2x4", "32", "resident"},
        {"llama2-13b", "8x8", "32", "resident"}, {"llama2-70b", "50x4", "32", "resident"},
        {"llama2-13b", "50x4", "80", "resident"}, {"llama2-13b", "8x8", "80", "resident"},
        {"llama2-70b", "50x4", "80", "resident"}, {"llama2-13b", "50x4", "32", "alpa"},
        {"llama2-13b", "2x4", "32", "alpa"}, {"llama2-13b", "8x8", "32", "alpa"},
        {"llama2-70b", "50x4", "32", "alpa"}};
    System.out.printf(Locale.ROOT, "%-11s %-5s %4s %-8s %6s %6s %5s %9s %9s %9s %-9s %12s %12s %9s%n",
        "model", "mesh", "GiB", "params", "instrs", "nodes", "core", "build s", "solve s", "total s", "status", "objective",
        "bound", "heap MiB");
    for (String[] c : cases) {
      ModelSpec spec = Presets.get(c[0]);
      String[] dims = c[1].split("x");
      LogicalMesh mesh = LogicalMesh.of(Integer.parseInt(dims[0]), Integer.parseInt(dims[1]));
      MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, new double[] {1, 1},
          new double[] {1, 0.01}), Double.parseDouble(c[2]) * (1L << 30), Optional.empty());
      AutoSharding planner = new AutoSharding(env, SolverOptions.defaults(),
          c[3].equals("resident"));
      double best = Double.POSITIVE_INFINITY;
      ShardingPlan bestPlan = null;
      long heap = 0;
      for (int run = 0; run < 8; run++) {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        long before = rt.totalMemory() - rt.freeMemory();
        long t0 = System.nanoTime();
        Graph g = LlamaForwardBuilder.build(spec, false);
        ShardingPlan p = planner.plan(g);
        double secs = (System.nanoTime() - t0) / 1e9;
        heap = Math.max(heap, rt.totalMemory() - rt.freeMemory() - before);
        if (run >= 3 && secs < best) {
          best = secs;
          bestPlan = p;
        }
      }
      System.out.printf(Locale.ROOT, "%-11s %-5s %4s %-8s %6d %6d %5d %9.3f %9.3f %9.3f %-9s %12.6g %12.6g %9d%n",
          c[0], c[1], c[2], c[3], bestPlan.graph().size(), bestPlan.costGraph().problem().nodeCount(),
          bestPlan.solution().coreNodes(), bestPlan.strategySeconds(),
          bestPlan.solution().seconds(), best, bestPlan.solution().status(),
          bestPlan.objective(), bestPlan.solution().bound(), heap >> 20);
    }
  }
}
