package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SweepCliTest {
  private static final String GRID = """
      models: opt-125m
      seq: 512
      gpus: a100-40gb
      clusters: [1x2, 2x2]
      globalBatch: [16, 32]
      """;

  @TempDir Path dir;

  private Path grid(String text) throws IOException {
    Path g = dir.resolve("grid-" + Math.abs(text.hashCode()) + ".yaml");
    Files.writeString(g, text);
    return g;
  }

  /** One thread and two threads write the same bytes and print the same summary. */
  @Test
  void outputDoesNotDependOnThreads() throws IOException {
    Path g = grid(GRID);
    CliRun one = CliRun.of("sweep", "--grid", g.toString(), "--threads", "1", "--csv",
        dir.resolve("1.csv").toString(), "--jsonl", dir.resolve("1.jsonl").toString(),
        "--gpu-hour-price", "2.5");
    CliRun two = CliRun.of("sweep", "--grid", g.toString(), "--threads", "2", "--csv",
        dir.resolve("2.csv").toString(), "--jsonl", dir.resolve("2.jsonl").toString(),
        "--gpu-hour-price", "2.5");
    assertThat(one.code()).as(one.err()).isZero();
    assertThat(two.code()).as(two.err()).isZero();
    assertThat(Files.readString(dir.resolve("2.csv")))
        .isEqualTo(Files.readString(dir.resolve("1.csv")));
    assertThat(Files.readString(dir.resolve("2.jsonl")))
        .isEqualTo(Files.readString(dir.resolve("1.jsonl")));
    assertThat(two.out().replace("2.", "1.")).isEqualTo(one.out().replace("2.", "1."));

    List<String> csv = Files.readAllLines(dir.resolve("1.csv"));
    assertThat(csv).hasSize(5);
    assertThat(csv.get(0)).startsWith("index,model,seq,gpu,fabric,nodes,gpus_per_node,gpus,");
    assertThat(csv.get(1)).startsWith("0,opt-125m,512,a100-40gb,ib-hdr200,1,2,2,16,auto,false,ok,");
    assertThat(csv.get(4)).startsWith("3,opt-125m,512,a100-40gb,ib-hdr200,2,2,4,32,auto,false,ok,");
    // The cost column is price * GPUs * iteration / 3600 / (tokens / 1e6), from the same row.
    for (String row : csv.subList(1, 5)) {
      String[] f = row.split(",");
      double cost = 2.5 * Integer.parseInt(f[7]) * Double.parseDouble(f[12]) / 3600
          / (Integer.parseInt(f[8]) * 512 / 1e6);
      assertThat(Double.parseDouble(f[19])).isCloseTo(cost, org.assertj.core.data.Offset
          .offset(1e-6));
    }
    assertThat(Files.readAllLines(dir.resolve("1.jsonl"))).hasSize(4)
        .allSatisfy(l -> assertThat(l).startsWith("{\"index\":").contains("\"status\":\"ok\""));
    assertThat(one.out()).startsWith("sweep: 4 points: 4 planned, 0 infeasible, 0 timed out, "
        + "0 rejected\n\nPareto front of tokens/s against GPUs, opt-125m, seq 512:\n");
    // MFU: a percentage in the text, the fraction in the CSV (column 15), the same number.
    List<String> front = one.out().lines().filter(l -> l.matches(" +\\d+ +\\d+ .*")).toList();
    assertThat(front).isNotEmpty();
    for (String row : front) {
      int index = Integer.parseInt(row.trim().split(" +")[0]);
      double mfu = Double.parseDouble(csv.get(1 + index).split(",")[15]);
      assertThat(mfu).isBetween(0.0, 1.0);
      assertThat(row).contains(String.format(java.util.Locale.ROOT, " %.1f%%", 100 * mfu));
    }
  }

  @Test
  void outWritesBothFilesAndRefusesADirectoryInTheirPlace() throws IOException {
    Path g = grid("models: opt-125m\nseq: 512\ngpus: a100-40gb\nclusters: 1x2\n"
        + "globalBatch: 16\n");
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.createDirectories(out.resolve("sweep.csv"));
    CliRun bad = CliRun.of("sweep", "--grid", g.toString(), "--out", out.toString());
    assertThat(bad.code()).isEqualTo(2);
    // The file is named once, after the flag and the file it stands for.
    assertThat(bad.err()).startsWith("meshplan: error: --out (sweep.csv) "
        + out.resolve("sweep.csv") + ": ");
    Files.delete(out.resolve("sweep.csv"));
    CliRun ok = CliRun.of("sweep", "--grid", g.toString(), "--out", out.toString());
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(Files.readAllLines(out.resolve("sweep.csv"))).hasSize(2);
    assertThat(Files.readAllLines(out.resolve("sweep.jsonl"))).hasSize(1);
  }

  @Test
  void infeasiblePointsAreKeptWithTheMemoryNeeded() throws IOException {
    Path g = grid("models: opt-13b\nseq: 512\ngpus: a100-40gb\nclusters: 1x1\nglobalBatch: 8\n");
    Path csv = dir.resolve("inf.csv");
    CliRun r = CliRun.of("sweep", "--grid", g.toString(), "--csv", csv.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).startsWith("sweep: 1 point: 0 planned, 1 infeasible");
    String[] row = Files.readAllLines(csv).get(1).split(",", -1);
    assertThat(row[11]).isEqualTo("infeasible");
    // 13 billion parameters need far more than a 40 GB GPU.
    assertThat(Long.parseLong(row[17])).isGreaterThan(40_000_000_000L);
    assertThat(row[12]).isEmpty();
  }

  @Test
  void manualModeFindsAMegatronConfiguration() throws IOException {
    Path g = grid("models: opt-125m\nseq: 512\ngpus: a100-40gb\nclusters: 1x2\n"
        + "globalBatch: 16\n");
    Path jsonl = dir.resolve("m.jsonl");
    CliRun r = CliRun.of("sweep", "--grid", g.toString(), "--manual", "--jsonl",
        jsonl.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(Files.readString(jsonl)).contains("\"status\":\"ok\"")
        .containsPattern("\"layout\":\"tp=[12] pp=[12] dp=[12] micro-batch=");
  }

  @Test
  void badInputIsOneLineAndExitTwo() throws IOException {
    Path g = grid(GRID);
    String[][] cases = {
        {"sweep"},
        {"sweep", "--grid", dir.resolve("missing.yaml").toString()},
        {"sweep", "--grid", grid("models: nothing\n").toString()},
        {"sweep", "--grid", g.toString(), "--gpu-hour-price", "-1"},
        {"sweep", "--grid", g.toString(), "--gpu-hour-price", "NaN"},
        // plan and simulate refuse a price of 0; sweep took it and costed every point at 0.
        {"sweep", "--grid", g.toString(), "--gpu-hour-price", "0"},
        {"sweep", "--grid", g.toString(), "--point-timeout", "0"},
        {"sweep", "--grid", g.toString(), "--threads", "0"},
        {"sweep", "--grid", g.toString(), "--csv", g.toString()},
        {"sweep", "--grid", g.toString(), "--csv", dir.toString()},
        {"sweep", "--grid", g.toString(), "--out", dir.resolve("nope").toString()},
        {"sweep", "--grid", g.toString(), "--out", dir.toString(), "--csv", "x.csv"},
        {"sweep", "--grid", g.toString(), "--spark", "local[*]"},
    };
    for (String[] args : cases) {
      CliRun r = CliRun.of(args);
      assertThat(r.code()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(2);
      assertThat(r.err().strip().lines().findFirst().orElseThrow())
          .as(String.join(" ", args)).startsWith("meshplan: error: ");
      assertThat(r.err()).doesNotContain("Exception").doesNotContain("\tat ");
    }
    CliRun spark = CliRun.of("sweep", "--grid", g.toString(), "--spark", "local[*]");
    assertThat(spark.err()).contains("the meshplan-spark module is not on the class path")
        .contains("./meshplan-spark");
    assertThat(Files.readString(g)).isEqualTo(GRID);
  }

  /**
   * A point whose run a time-to-train flag cannot time (a checkpoint interval past its 2
   * iterations) is that point's refusal; the grid's other point is written. Before, the whole
   * sweep failed after planning every point and wrote nothing.
   */
  @Test
  void aPointTheCheckpointIntervalCannotTimeIsRejectedAlone() throws Exception {
    Path grid = dir.resolve("g.yaml");
    java.nio.file.Files.writeString(grid, "models: [opt-125m]\nseq: [1000]\ngpus: "
        + "[a100-80gb]\nclusters: [1x4]\nglobalBatch: [8, 800]\n");
    Path out = dir.resolve("x.jsonl");
    // 10^6 tokens: 125 iterations of 8 sequences of 1,000, and 1.25 of 800, rounded up to 2.
    CliRun r = CliRun.of("sweep", "--grid", grid.toString(), "--jsonl", out.toString(),
        "--train-tokens", "1000000", "--checkpoint-bandwidth", "10", "--checkpoint-interval",
        "10", "--quiet");
    assertThat(r.code()).as(r.err()).isZero();
    List<String> lines = java.nio.file.Files.readAllLines(out);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).contains("\"status\":\"ok\"");
    assertThat(lines.get(1)).contains("\"status\":\"rejected\"").contains("time to train: "
        + "--checkpoint-interval 10 is longer than the run's 2 iterations");
  }
}
