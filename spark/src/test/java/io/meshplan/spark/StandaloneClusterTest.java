package io.meshplan.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.SweepCsv;
import io.meshplan.sweep.SweepGrid;
import io.meshplan.sweep.SweepGridReader;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * A real Spark standalone cluster on this machine: a master and two workers, each a separate JVM
 * bound to 127.0.0.1 and started from the test class path (the workers' {@code SPARK_HOME/jars}
 * links to its jars, and the executors get its class folders through {@code
 * spark.executor.extraClassPath}). A sweep runs on it while the test kills the first executor that
 * starts a task; Spark reruns the lost tasks and the output equals the local executor's.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class StandaloneClusterTest {
  private static final String GRID = "models: opt-125m\nseq: 512\ngpus: a100-40gb\n"
      + "clusters: [1x2, 2x2]\nglobalBatch: [16, 32]\n";
  private static final List<Process> STARTED = new ArrayList<>();
  private static Path home;
  private static SparkExecutor executor;

  @BeforeAll
  static void startCluster() throws Exception {
    String cp = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    List<String> jars = new ArrayList<>();
    List<String> folders = new ArrayList<>();
    for (String e : cp.split(File.pathSeparator)) {
      if (e.endsWith(".jar") && Files.isRegularFile(Path.of(e))) {
        jars.add(e);
      } else if (Files.isDirectory(Path.of(e))) {
        folders.add(e);
      }
    }
    Assumptions.assumeTrue(jars.stream().anyMatch(j -> j.contains("spark-core_2.13")),
        "spark-core is not on the test class path as a jar, so no worker can be started");
    home = Files.createTempDirectory("meshplan-spark-home");
    Path lib = Files.createDirectories(home.resolve("jars"));
    for (String j : jars) {
      Path link = lib.resolve(Path.of(j).getFileName());
      if (!Files.exists(link)) {
        Files.createSymbolicLink(link, Path.of(j).toAbsolutePath());
      }
    }
    int port = freePort();
    String masterUrl = "spark://127.0.0.1:" + port;
    String jarsCp = String.join(File.pathSeparator, jars);
    start(home.resolve("master.log"), jarsCp, "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", Integer.toString(port), "--webui-port", "0");
    waitForPort(port);
    for (int i = 0; i < 2; i++) {
      Path work = Files.createDirectories(home.resolve("work-" + i));
      start(home.resolve("worker-" + i + ".log"), jarsCp,
          "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
          "--memory", "1g", "--webui-port", "0", "--work-dir", work.toString(), masterUrl);
    }
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.driver.host", "127.0.0.1");
    conf.put("spark.driver.bindAddress", "127.0.0.1");
    conf.put("spark.executor.memory", "768m");
    conf.put("spark.executor.cores", "1");
    conf.put("spark.cores.max", "2");
    conf.put("spark.executor.extraClassPath", String.join(File.pathSeparator, folders));
    conf.put("spark.ui.showConsoleProgress", "false");
    executor = (SparkExecutor) new SparkExecutorProvider().open(masterUrl, conf);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
    // The driver counts itself among the executors.
    while (executor.context().sc().statusTracker().getExecutorInfos().length < 3) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the two workers' executors did not register within "
            + "150 s; see " + home);
      }
      Thread.sleep(500);
    }
  }

  private static void start(Path log, String cp, String main, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-cp", cp, main));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().put("SPARK_HOME", home.toString());
    pb.environment().put("SPARK_SCALA_VERSION", "2.13");
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    STARTED.add(pb.start());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private static void waitForPort(int port) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        return;
      } catch (IOException notYet) {
        Thread.sleep(300);
      }
    }
    throw new IllegalStateException("the Spark master did not listen on " + port + " within 90 s;"
        + " see " + home);
  }

  @AfterAll
  static void stopCluster() throws IOException {
    if (executor != null) {
      executor.close();
    }
    // Workers first (with the executors they started), then the master: only what we started.
    for (int i = STARTED.size() - 1; i >= 0; i--) {
      Process p = STARTED.get(i);
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    if (home != null) {
      try (Stream<Path> s = Files.walk(home)) {
        s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
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
