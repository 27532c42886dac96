package io.meshplan.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cli.Main;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Embedded Spark ({@code --spark local[2]}) writes the same sweep as the local executor. */
class SparkSweepTest {
  @TempDir Path dir;

  private static int run(StringWriter out, StringWriter err, String... args) {
    return Main.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  @Test
  void embeddedSparkMatchesOneThread() throws IOException {
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: opt-125m\nseq: 512\ngpus: a100-40gb\n"
        + "clusters: [1x2, 2x2]\nglobalBatch: [16, 32]\n");
    StringWriter out1 = new StringWriter();
    StringWriter err1 = new StringWriter();
    int local = run(out1, err1, "sweep", "--grid", grid.toString(), "--threads", "1",
        "--gpu-hour-price", "3", "--csv", dir.resolve("local.csv").toString(), "--jsonl",
        dir.resolve("local.jsonl").toString());
    StringWriter out2 = new StringWriter();
    StringWriter err2 = new StringWriter();
    int spark = run(out2, err2, "sweep", "--grid", grid.toString(), "--spark", "local[2]",
        "--gpu-hour-price", "3", "--csv", dir.resolve("spark.csv").toString(), "--jsonl",
        dir.resolve("spark.jsonl").toString());
    assertThat(local).as(err1.toString()).isZero();
    assertThat(spark).as(err2.toString()).isZero();
    assertThat(Files.readString(dir.resolve("spark.csv")))
        .isEqualTo(Files.readString(dir.resolve("local.csv")));
    assertThat(Files.readString(dir.resolve("spark.jsonl")))
        .isEqualTo(Files.readString(dir.resolve("local.jsonl")));
    assertThat(Files.readAllLines(dir.resolve("spark.csv"))).hasSize(5);
    assertThat(out2.toString().replace("spark.", "local."))
        .isEqualTo(out1.toString());
  }

  /**
   * sweep --spark --catalog: a GPU only the user's catalog has travels with the tasks to the
   * executors, which write the local executor's bytes.
   */
  @Test
  void aCatalogGpuSweepsOnSparkAsLocally() throws IOException {
    Path catalog = dir.resolve("catalog.yaml");
    Files.writeString(catalog, "gpus:\n  - name: x100-64gb\n    architecture: hopper\n"
        + "    peakTflops: {fp32: 50, bf16: 800, fp16: 800, fp8: 1600}\n    memoryGiB: 64\n"
        + "    hbmGBps: 3000\n    nvlinkDomain: 8\n    nvlinkGBpsPerDirection: 400\n"
        + "    defaultFabric: roce-400\n    source: a made-up part for a test\n");
    Path grid = dir.resolve("catalog-grid.yaml");
    Files.writeString(grid, "models: opt-125m\nseq: 512\ngpus: x100-64gb\n"
        + "clusters: [1x2, 2x2]\nglobalBatch: 16\n");
    StringWriter err1 = new StringWriter();
    int local = run(new StringWriter(), err1, "sweep", "--grid", grid.toString(), "--catalog",
        catalog.toString(), "--threads", "1", "--csv", dir.resolve("local.csv").toString());
    StringWriter err2 = new StringWriter();
    int spark = run(new StringWriter(), err2, "sweep", "--grid", grid.toString(), "--catalog",
        catalog.toString(), "--spark", "local[2]", "--csv", dir.resolve("spark.csv").toString());
    assertThat(local).as(err1.toString()).isZero();
    assertThat(spark).as(err2.toString()).isZero();
    assertThat(Files.readString(dir.resolve("spark.csv")))
        .isEqualTo(Files.readString(dir.resolve("local.csv")));
    assertThat(Files.readAllLines(dir.resolve("spark.csv"))).hasSize(3)
        .allSatisfy(row -> assertThat(row).matches("(index,.*|\\d,opt-125m,512,x100-64gb,"
            + "roce-400,.*,ok,.*)"));
  }

  /** plan --spark: the plan JSON is byte-identical to the local planner's. */
  @Test
  void planOnSparkMatchesLocal() {
    String[] base = {"plan", "--model", "opt-125m", "--seq", "512", "--cluster",
        "2x2:a100-40gb", "--global-batch", "32", "--json"};
    StringWriter out1 = new StringWriter();
    StringWriter err1 = new StringWriter();
    int local = run(out1, err1, base);
    String[] spark = java.util.Arrays.copyOf(base, base.length + 2);
    spark[base.length] = "--spark";
    spark[base.length + 1] = "local[2]";
    StringWriter out2 = new StringWriter();
    StringWriter err2 = new StringWriter();
    int code = run(out2, err2, spark);
    assertThat(local).as(err1.toString()).isZero();
    assertThat(code).as(err2.toString()).isZero();
    assertThat(out2.toString()).isEqualTo(out1.toString()).contains("\"stages\"");
  }

  /**
   * plan --spark --profile: the executors price collectives with the calibration profile that
   * travels with their tasks, so the plan JSON is the local planner's with the same profile (and
   * not the catalog-priced plan).
   */
  @Test
  void planOnSparkWithAProfileMatchesLocal(@TempDir Path dir) {
    Path profile = dir.resolve("profile.yaml");
    assertThat(run(new StringWriter(), new StringWriter(), "calibrate",
        "examples/alpa_profile_communication_4x8_a100.txt", "--cluster", "4x8:a100-80gb",
        "--out", profile.toString())).isZero();
    // Nothing overlapped or fused, so that the communication the profile prices shows in the
    // plan's prediction; OPT-1.3B, whose plan meets collectives the profile prices differently
    // (OPT-125M's best plan now prices the same under both).
    String[] base = {"plan", "--model", "opt-1.3b", "--seq", "512", "--cluster",
        "4x8:a100-80gb", "--global-batch", "64", "--json", "--no-fsdp-prefetch",
        "--no-gradient-accumulation-fusion"};
    String[] withProfile = java.util.Arrays.copyOf(base, base.length + 2);
    withProfile[base.length] = "--profile";
    withProfile[base.length + 1] = profile.toString();
    String[] spark = java.util.Arrays.copyOf(withProfile, withProfile.length + 2);
    spark[withProfile.length] = "--spark";
    spark[withProfile.length + 1] = "local[2]";
    StringWriter local = new StringWriter();
    StringWriter err1 = new StringWriter();
    assertThat(run(local, err1, withProfile)).as(err1.toString()).isZero();
    StringWriter onSpark = new StringWriter();
    StringWriter err2 = new StringWriter();
    assertThat(run(onSpark, err2, spark)).as(err2.toString()).isZero();
    StringWriter catalog = new StringWriter();
    assertThat(run(catalog, new StringWriter(), base)).isZero();
    assertThat(onSpark.toString()).isEqualTo(local.toString()).contains("\"stages\"")
        .isNotEqualTo(catalog.toString());
  }

  @Test
  void localMastersRetryFailedTasks() {
    assertThat(SparkExecutorProvider.withRetries("local[*]")).isEqualTo("local[*,4]");
    assertThat(SparkExecutorProvider.withRetries("local[2]")).isEqualTo("local[2,4]");
    assertThat(SparkExecutorProvider.withRetries("local")).isEqualTo("local[1,4]");
    assertThat(SparkExecutorProvider.withRetries("local[2,7]")).isEqualTo("local[2,7]");
    assertThat(SparkExecutorProvider.withRetries("spark://127.0.0.1:7077"))
        .isEqualTo("spark://127.0.0.1:7077");
  }

  @Test
  void badLocalMasterIsOneLine() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = run(out, err, "sweep", "--grid", "examples/sweep.yaml", "--spark", "local[x]");
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).startsWith("meshplan: error: Spark master 'local[x]': expected ")
        .doesNotContain("\tat ");
  }

  /** Any master that is not one of Spark's URL forms is refused before Spark starts. */
  @Test
  void unknownMastersAreOneLine() {
    for (String master : new String[] {"bogus://x", "spark://host", "spark://:7077", "yarnn",
        "k8s://"}) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int code = run(out, err, "sweep", "--grid", "examples/sweep.yaml", "--spark", master);
      assertThat(code).as(master).isEqualTo(2);
      assertThat(err.toString()).as(master)
          .isEqualTo("meshplan: error: Spark master '" + master + "': expected local, local[N], "
              + "local[*], local[N,F], spark://HOST:PORT, k8s://URL or yarn"
              + System.lineSeparator());
    }
    assertThat(SparkExecutorProvider.withRetries("spark://a:7077,b:7077"))
        .isEqualTo("spark://a:7077,b:7077");
    assertThat(SparkExecutorProvider.withRetries("k8s://https://api:6443"))
        .isEqualTo("k8s://https://api:6443");
  }

  /** A task that throws is retried by Spark, and the results are those of the local executor. */
  @Test
  void failedTasksAreRetried() throws IOException {
    io.meshplan.sweep.SweepGrid grid = io.meshplan.sweep.SweepGridReader.parse(
        "models: opt-125m\nseq: 512\ngpus: a100-40gb\nclusters: [1x2]\nglobalBatch: [16, 32]\n",
        "g.yaml");
    Path markers = Files.createDirectories(dir.resolve("markers"));
    io.meshplan.sweep.PointTask task = new io.meshplan.sweep.PointTask(false, 0);
    java.util.List<io.meshplan.sweep.PointResult> viaSpark;
    try (SparkExecutor ex = (SparkExecutor) new SparkExecutorProvider().open("local[2]",
        java.util.Map.of())) {
      viaSpark = ex.map("flaky", grid.points(), new FlakyTask(markers.toString(), true, task),
          n -> { });
    }
    java.util.List<io.meshplan.sweep.PointResult> local;
    try (io.meshplan.exec.LocalExecutor ex = new io.meshplan.exec.LocalExecutor(1)) {
      local = ex.map("local", grid.points(), task, n -> { });
    }
    assertThat(viaSpark).isEqualTo(local);
    // Each of the two points failed once and ran again: four attempts.
    try (var files = Files.list(markers)) {
      assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("start-")))
          .hasSize(4);
    }
  }
}
