package io.meshplan.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.SweepCsv;
import io.meshplan.sweep.SweepGrid;
import io.meshplan.sweep.SweepGridReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real Spark standalone cluster on this machine ({@link LocalSparkCluster}): a master and two
 * workers, each a separate JVM bound to 127.0.0.1 and started from the test class path. A sweep
 * runs on it while the test kills the first executor that starts a task; Spark reruns the lost
 * tasks and the output equals the local executor's.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class StandaloneClusterTest {
  private static final String GRID = "models: opt-125m\nseq: 512\ngpus: a100-40gb\n"
      + "clusters: [1x2, 2x2]\nglobalBatch: [16, 32]\n";
  private static LocalSparkCluster cluster;
  private static Path home;
  private static SparkExecutor executor;

  @BeforeAll
  static void startCluster() throws Exception {
    String cp = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    Assumptions.assumeTrue(LocalSparkCluster.canStart(cp),
        "spark-core is not on the test class path as a jar, so no worker can be started");
    cluster = new LocalSparkCluster(cp, 2, "1g");
    home = cluster.home();
    executor = cluster.open("768m");
  }

  @AfterAll
  static void stopCluster() throws IOException {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void sweepSurvivesAKilledExecutor() throws Exception {
    SweepGrid grid = SweepGridReader.parse(GRID, "g.yaml");
    PointTask task = new PointTask(false, 0);
    Path markers = Files.createDirectories(home.resolve("markers"));
    CompletableFuture<List<PointResult>> job = CompletableFuture.supplyAsync(() ->
        executor.map("sweep", grid.points(), new FlakyTask(markers.toString(), false, task),
            n -> { }));
    // Kill the executor JVM that started the first task, while that task runs.
    long victim = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (victim < 0 && System.nanoTime() < deadline && !job.isDone()) {
      try (Stream<Path> s = Files.list(markers)) {
        victim = s.map(f -> f.getFileName().toString().split("-"))
            .mapToLong(f -> Long.parseLong(f[2])).findFirst().orElse(-1);
      }
      Thread.sleep(50);
    }
    assertThat(victim).as("no task started within 120 s").isPositive();
    ProcessHandle h = ProcessHandle.of(victim).orElseThrow();
    assertThat(h.info().commandLine().orElse("")).contains("CoarseGrainedExecutorBackend");
    assertThat(job.isDone()).as("the job ended before the kill").isFalse();
    h.destroyForcibly();
    h.onExit().get(30, TimeUnit.SECONDS);

    List<PointResult> viaSpark = job.get(240, TimeUnit.SECONDS);
    List<PointResult> local;
    try (LocalExecutor ex = new LocalExecutor(1)) {
      local = ex.map("local", grid.points(), task, n -> { });
    }
    assertThat(SweepCsv.write(viaSpark, OptionalDouble.of(2)))
        .isEqualTo(SweepCsv.write(local, OptionalDouble.of(2)));
    assertThat(viaSpark).isEqualTo(local).hasSize(4);
    List<Long> pids = new ArrayList<>();
    try (Stream<Path> s = Files.list(markers)) {
      s.map(f -> Long.parseLong(f.getFileName().toString().split("-")[2])).distinct()
          .forEach(pids::add);
    }
    // Tasks ran in the killed executor and in at least one other.
    assertThat(pids).contains(victim).hasSizeGreaterThanOrEqualTo(2);
  }
}
