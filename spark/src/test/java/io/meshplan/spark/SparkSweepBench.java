package io.meshplan.spark;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.PlanResult;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.plan.PlanJson;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import io.meshplan.model.Presets;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointStatus;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.Sweep;
import io.meshplan.sweep.SweepCsv;
import io.meshplan.sweep.SweepGridReader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * Times one sweep, or one plan, on the local executor and on a Spark standalone cluster of this
 * machine ({@link LocalSparkCluster}), each run in a fresh JVM so that none inherits another's
 * warm layer prices or compiled code, and prints a table: the cluster's start (the standalone
 * master and workers, which a real cluster has running already), the application's start (the
 * Spark context and the workers' executors registering), the work itself, application plus work,
 * that against the local run with as many threads as the run has cores (workers), and whether the
 * output is byte-identical to the first run's.
 *
 * <p>Run from the repository root after {@code mvn -q -B -DskipTests package && mvn -q -B
 * test-compile}: {@code java -cp "spark/target/test-classes:spark/target/meshplan-spark.jar:
 * core/target/meshplan.jar:core/target/lib/*:spark/target/lib/*" io.meshplan.spark.SparkSweepBench
 * examples/sweep-200.yaml local:1 local:2 spark:1 spark:2}. A run is {@code local:N} (the local
 * executor with N threads) or {@code spark:W} (W workers of one core; {@code -DexecutorMemory}
 * sets each executor's heap, default 3g). Instead of a grid file, {@code plan:MODEL:CLUSTER} (for
 * example {@code plan:llama3.1-405b:2048x8:h100-80gb:ib-ndr400}) times {@code plan --spark}'s work
 * (one task per microbatch size, {@link Planner} on the executor) at a global batch of 1,024, and
 * compares the plan JSON.
 */
public final class SparkSweepBench {
  private SparkSweepBench() {}

  /**
   * Runs the benchmark, or with {@code --one} a single run, printing one {@code RESULT} line.
   *
   * @param args the grid file and the runs, or {@code --one GRID RUN}
   * @throws Exception when a run fails
   */
  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--one")) {
      one(args[1], args[2]);
      return;
    }
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: SparkSweepBench GRID RUN...");
    }
    System.out.printf(Locale.ROOT, "| run | tasks | ok | cluster start s | app start s | work s"
        + " | app + work s | vs local, same cores | same output as %s |%n"
        + "|---|---|---|---|---|---|---|---|---|%n", args[1]);
    java.util.Map<String, Double> localTotals = new java.util.HashMap<>();
    String firstHash = null;
    for (int i = 1; i < args.length; i++) {
      String[] r = child(args[0], args[i]);
      double cluster = Double.parseDouble(r[3]);
      double start = Double.parseDouble(r[4]);
      double sweep = Double.parseDouble(r[5]);
      double total = start + sweep;
      String cores = args[i].substring(args[i].indexOf(':') + 1);
      if (args[i].startsWith("local:")) {
        localTotals.put(cores, total);
      }
      if (i == 1) {
        firstHash = r[6];
      }
      Double local = localTotals.get(cores);
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s |%n",
          args[i], r[1], r[2], cluster, start, sweep, total,
          local == null ? "-" : String.format(Locale.ROOT, "%.2f", total / local),
          r[6].equals(firstHash) ? "yes" : "NO");
    }
  }

  /** Runs one configuration in a child JVM with this class path and returns its RESULT fields. */
  private static String[] child(String grid, String run) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx6g",
        "-XX:+UseSerialGC"));
    for (String opens : List.of("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io",
        "java.net", "java.nio", "java.util", "java.util.concurrent",
        "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
        "sun.util.calendar")) {
      cmd.add("--add-opens=java.base/" + opens + "=ALL-UNNAMED");
    }
    cmd.add("-DexecutorMemory=" + System.getProperty("executorMemory", "3g"));
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
        SparkSweepBench.class.getName(), "--one", grid, run));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String result = null;
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith("RESULT ")) {
          result = line;
        }
      }
    }
    if (p.waitFor() != 0 || result == null) {
      throw new IllegalStateException("run " + run + " failed (exit " + p.exitValue() + ")");
    }
    return result.split(" ");
  }

  private static void one(String work, String run) throws Exception {
    String[] kind = run.split(":");
    int n = Integer.parseInt(kind[1]);
    long t0 = System.nanoTime();
    LocalSparkCluster cluster = null;
    TaskExecutor ex;
    double clusterStart = 0;
    if (kind[0].equals("local")) {
      ex = new LocalExecutor(n);
    } else if (kind[0].equals("spark")) {
      cluster = new LocalSparkCluster(System.getProperty("java.class.path"), n,
          System.getProperty("executorMemory", "3g"));
      clusterStart = (System.nanoTime() - t0) / 1e9;
      t0 = System.nanoTime();
      ex = cluster.open(System.getProperty("executorMemory", "3g"));
    } else {
      throw new IllegalArgumentException("run " + run + ": expected local:N or spark:W");
    }
    double start = (System.nanoTime() - t0) / 1e9;
    long t1 = System.nanoTime();
    String output;
    long tasks;
    long ok;
    try {
      if (work.startsWith("plan:")) {
        PricedJob q = Planner.price(job(work), Pricing.catalog(),
            PlannerOptions.defaults().withThreads(1));
        PlanResult o = Planner.plan(q, PlannerOptions.defaults().withThreads(1).withExecutor(ex));
        output = o instanceof PlanResult.Planned p ? PlanJson.write(p.plan()) : "";
        tasks = SearchRules.microbatchSizes(q.request()).size();
        ok = o instanceof PlanResult.Planned ? 1 : 0;
      } else {
        List<PointResult> r = new Sweep(ex, new PointTask(false, 0))
            .run(SweepGridReader.read(Path.of(work)), d -> { });
        output = SweepCsv.write(r, OptionalDouble.empty());
        tasks = r.size();
        ok = r.stream().filter(x -> x.status() == PointStatus.OK).count();
      }
    } finally {
      ex.close();
      if (cluster != null) {
        cluster.close();
      }
    }
    double sweep = (System.nanoTime() - t1) / 1e9;
    System.out.printf(Locale.ROOT, "RESULT %d %d %.3f %.3f %.3f %s%n", tasks, ok,
        clusterStart, start, sweep, sha256(output));
  }

  /**
   * {@code plan}'s question for {@code plan:MODEL:CLUSTER}: the preset with its sequence length,
   * a global batch of 1,024, the GPU's training precision and usable memory.
   */
  private static TrainingJob job(String work) {
    String[] w = work.split(":", 3);
    return TrainingJob.of(Presets.get(w[1]), ClusterSpec.parse(w[2])).withGlobalBatch(1024);
  }

  private static String sha256(String s) throws NoSuchAlgorithmException {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(s.getBytes(StandardCharsets.UTF_8)));
  }
}
