package io.meshplan.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Whole-process time of {@code meshplan replan --lost-nodes 1}, from plan files with fallbacks:
 * the README's main job (LLaMA2-13B on 50 x 4 V100, 2 fallbacks) and Llama 3.1 405B on 2,048 x 8
 * H100 (16 fallbacks, since no cluster of 2,033 to 2,047 nodes tiles its 16-node stages). Each
 * plan file is written first by {@code plan --fallbacks} (not timed); replan then starts a JVM,
 * reads the file and picks its fallback, five times; the table gives the fastest, median and
 * slowest run against the goal.
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && mvn -q -B test-compile && java -cp
 * "core/target/test-classes:core/target/meshplan.jar:core/target/lib/*"
 * io.meshplan.bench.ReplanBench}.
 */
public final class ReplanBench {
  private ReplanBench() {}

  /**
   * Prints the table.
   *
   * @param args unused
   * @throws IOException when a process cannot start
   * @throws InterruptedException when interrupted
   */
  public static void main(String[] args) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("replan-bench");
    String[][] cases = {
      {"llama2-13b 50x4:v100-32gb", "2", "2", "--model", "llama2-13b", "--cluster",
        "50x4:v100-32gb"},
      // 2,047 to 2,033 nodes tile no stage of 16 nodes: the first fallback that plans is 2,032.
      {"llama3.1-405b 2048x8:h100", "10", "16", "--model", "llama3.1-405b", "--cluster",
        "2048x8:h100-80gb:ib-ndr400", "--global-batch", "2048"},
    };
    System.out.printf(Locale.ROOT, "%-28s %9s %8s %8s %8s %8s %8s %6s%n", "plan", "fallbacks",
        "file KiB", "plan s", "min s", "median s", "max s", "goal s");
    for (String[] c : cases) {
      Path plan = dir.resolve(c[0].replaceAll("[^a-z0-9.]", "_") + ".json");
      List<String> planArgs = new ArrayList<>(List.of("plan"));
      planArgs.addAll(Arrays.asList(c).subList(3, c.length));
      planArgs.addAll(List.of("--fallbacks", c[2], "--quiet", "--out", plan.toString()));
      double planSeconds = run(planArgs);
      double[] t = new double[5];
      for (int i = 0; i < t.length; i++) {
        t[i] = run(List.of("replan", "--plan", plan.toString(), "--lost-nodes", "1"));
      }
      Arrays.sort(t);
      System.out.printf(Locale.ROOT, "%-28s %9s %8d %8.1f %8.2f %8.2f %8.2f %6s%n", c[0], c[2],
          Files.size(plan) / 1024, planSeconds, t[0], t[2], t[4], c[1]);
    }
  }

  /** Runs meshplan in a new JVM, as a user's shell would; the wall time in seconds. */
  private static double run(List<String> args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin",
        "java").toString(), "-cp", System.getProperty("java.class.path"),
        "io.meshplan.cli.Main"));
    cmd.addAll(args);
    long start = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    int code = p.waitFor();
    double s = (System.nanoTime() - start) / 1e9;
    if (code != 0) {
      throw new IllegalStateException(String.join(" ", args) + " exited " + code);
    }
    return s;
  }
}
