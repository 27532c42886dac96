package io.meshplan.spark;

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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Spark standalone cluster on this machine: a master and {@code workers} workers, each a separate
 * JVM bound to 127.0.0.1 and started from a class path (the workers' {@code SPARK_HOME/jars} links
 * to its jars, and the executors get its class folders through {@code
 * spark.executor.extraClassPath}). Closing it stops the executor, the workers with the executor
 * JVMs they started, the master, and deletes its folder.
 */
final class LocalSparkCluster implements AutoCloseable {
  private final List<Process> started = new ArrayList<>();
  private final Path home;
  private final List<String> jars = new ArrayList<>();
  private final List<String> folders = new ArrayList<>();
  private final String masterUrl;
  private final int workers;
  private SparkExecutor executor;

  /**
   * Whether a class path can start a cluster: it must hold spark-core as a jar.
   *
   * @param classPath the class path
   * @return whether it holds the jar
   */
  static boolean canStart(String classPath) {
    for (String e : classPath.split(File.pathSeparator)) {
      if (e.endsWith(".jar") && e.contains("spark-core_2.13") && Files.isRegularFile(Path.of(e))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Starts the master and the workers and waits until the master listens.
   *
   * @param classPath the class path of the master, workers and executors
   * @param workers how many workers, one core each
   * @param workerMemory memory each worker offers, Spark's notation (e.g. {@code 1g})
   * @throws IOException when a process cannot be started
   * @throws InterruptedException when interrupted while waiting
   */
  LocalSparkCluster(String classPath, int workers, String workerMemory)
      throws IOException, InterruptedException {
    this.workers = workers;
    for (String e : classPath.split(File.pathSeparator)) {
      if (e.endsWith(".jar") && Files.isRegularFile(Path.of(e))) {
        jars.add(e);
      } else if (!e.isEmpty() && Files.isDirectory(Path.of(e))) {
        folders.add(Path.of(e).toAbsolutePath().toString());
      }
    }
    home = Files.createTempDirectory("meshplan-spark-home");
    Path lib = Files.createDirectories(home.resolve("jars"));
    for (String j : jars) {
      Path link = lib.resolve(Path.of(j).getFileName());
      if (!Files.exists(link)) {
        Files.createSymbolicLink(link, Path.of(j).toAbsolutePath());
      }
    }
    int port = freePort();
    masterUrl = "spark://127.0.0.1:" + port;
    String jarsCp = String.join(File.pathSeparator, jars);
    start(home.resolve("master.log"), jarsCp, "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", Integer.toString(port), "--webui-port", "0");
    waitForPort(port);
    for (int i = 0; i < workers; i++) {
      Path work = Files.createDirectories(home.resolve("work-" + i));
      start(home.resolve("worker-" + i + ".log"), jarsCp,
          "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
          "--memory", workerMemory, "--webui-port", "0", "--work-dir", work.toString(),
          masterUrl);
    }
  }

  /**
   * Opens the application (one executor of one core per worker) and waits until every worker's
   * executor has registered.
   *
   * @param executorMemory each executor's heap, Spark's notation
   * @return the executor
   * @throws InterruptedException when interrupted while waiting
   */
  SparkExecutor open(String executorMemory) throws InterruptedException {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.driver.host", "127.0.0.1");
    conf.put("spark.driver.bindAddress", "127.0.0.1");
    conf.put("spark.executor.memory", executorMemory);
    conf.put("spark.executor.cores", "1");
    conf.put("spark.cores.max", Integer.toString(workers));
    conf.put("spark.executor.extraClassPath", String.join(File.pathSeparator, folders));
    conf.put("spark.ui.showConsoleProgress", "false");
    executor = (SparkExecutor) new SparkExecutorProvider().open(masterUrl, conf);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
    // The driver counts itself among the executors.
    while (executor.context().sc().statusTracker().getExecutorInfos().length < workers + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the workers' executors did not register within "
            + "150 s; see " + home);
      }
      Thread.sleep(500);
    }
    return executor;
  }

  /**
   * The cluster's folder (logs, work folders).
   *
   * @return the folder
   */
  Path home() {
    return home;
  }

  private void start(Path log, String cp, String main, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-cp", cp, main));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().put("SPARK_HOME", home.toString());
    pb.environment().put("SPARK_SCALA_VERSION", "2.13");
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    started.add(pb.start());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private void waitForPort(int port) throws InterruptedException {
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

  @Override
  public void close() throws IOException {
    if (executor != null) {
      executor.close();
    }
    // Workers first (with the executors they started), then the master: only what was started.
    for (int i = started.size() - 1; i >= 0; i--) {
      Process p = started.get(i);
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    try (Stream<Path> s = Files.walk(home)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
