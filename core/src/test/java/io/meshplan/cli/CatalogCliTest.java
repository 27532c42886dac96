package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A GPU that only a user's YAML describes (--catalog, or inline in a cluster file) plans,
 * simulates, exports and deploys with no Java change; a catalog entry with an architecture
 * meshplan has no kernel tables for, or a broken catalog file, is refused in one line by every
 * command that takes --cluster, and never overwritten.
 */
class CatalogCliTest {
  @TempDir Path dir;

  /** A Hopper-class part no catalog ships: 64 GiB, 3 TB/s, 8 GPUs on NVLink, RoCE by default. */
  private static final String GPU = "  - name: x100-64gb\n    architecture: hopper\n"
      + "    peakTflops: {fp32: 50, bf16: 800, fp16: 800, fp8: 1600}\n    memoryGiB: 64\n"
      + "    hbmGBps: 3000\n    nvlinkDomain: 8\n    nvlinkGBpsPerDirection: 400\n"
      + "    defaultFabric: roce-400\n    source: a made-up part for a test\n";

  private static final String[] FLAGS = {"--model", "llama2-7b", "--layers", "4", "--cluster",
      "2x8:x100-64gb", "--tp", "2", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "64"};

  private Path catalog(String gpus) throws Exception {
    Path f = dir.resolve("my-catalog.yaml");
    Files.writeString(f, "gpus:\n" + gpus);
    return f;
  }

  private static String[] args(String command, Path catalog, String... more) {
    List<String> a = new ArrayList<>(List.of(command, "--catalog", catalog.toString()));
    a.addAll(List.of(FLAGS));
    a.addAll(List.of(more));
    return a.toArray(String[]::new);
  }

  @Test
  void aGpuOnlyInTheUsersYamlPlansSimulatesAndExports() throws Exception {
    Path c = catalog(GPU);
    CliRun plan = CliRun.of("plan", "--catalog", c.toString(), "--model", "llama2-7b",
        "--layers", "4", "--cluster", "2x8:x100-64gb", "--global-batch", "64");
    assertThat(plan.code()).as(plan.err()).isZero();
    assertThat(plan.out()).contains("iteration");
    CliRun sim = CliRun.of(args("simulate", c, "--json"));
    assertThat(sim.code()).as(sim.err()).isZero();
    // bf16 on the entry's 800 TFLOP/s: the hardware rate per GPU stays under its peak.
    double tflops = Double.parseDouble(sim.out().replaceAll("(?s).*\"hardwareTflopsPerGpu\"\\s*:"
        + "\\s*([0-9.eE+-]+).*", "$1"));
    assertThat(tflops).isPositive().isLessThan(800);
    CliRun export = CliRun.of(args("export", c, "--to", "megatron"));
    assertThat(export.code()).as(export.err()).isZero();
    // Hopper's compute capability is 9, before Blackwell: Megatron-LM asks for one connection.
    assertThat(export.out()).contains("export CUDA_DEVICE_MAX_CONNECTIONS=1")
        .contains("--tensor-model-parallel-size 2");
    CliRun deploy = CliRun.of("deploy", "--catalog", c.toString(), "--target", "slurm",
        "--cluster", "2x8:x100-64gb", "--out", dir.resolve("d").toString(), "--", "train.py");
    assertThat(deploy.code()).as(deploy.err()).isZero();
  }

  @Test
  void aClusterFileDescribesItsGpuInline() throws Exception {
    Path cluster = dir.resolve("cluster.yaml");
    Files.writeString(cluster, "nodes: 2\ngpusPerNode: 8\ngpu:\n"
        + GPU.replace("  - name", "  name").replace("\n    ", "\n  "));
    List<String> a = new ArrayList<>(List.of("simulate"));
    a.addAll(List.of(FLAGS));
    a.set(a.indexOf("2x8:x100-64gb"), cluster.toString());
    CliRun inline = CliRun.of(a.toArray(String[]::new));
    CliRun listed = CliRun.of(args("simulate", catalog(GPU)));
    assertThat(inline.code()).as(inline.err()).isZero();
    assertThat(inline.out()).isEqualTo(listed.out());
  }

  @Test
  void anUnknownArchitectureIsRefusedInOneLineByEveryCommand() throws Exception {
    Path c = catalog(GPU.replace("hopper", "rubin"));
    String line = "my-catalog.yaml: gpus[0] 'x100-64gb': unknown architecture 'rubin': meshplan"
        + " has kernel efficiencies for volta, ampere, hopper, blackwell, cdna3 only (and reads cdna4"
        + " without pricing it)";
    String before = Files.readString(c);
    CliRun.of(args("simulate", c)).refusedInOneLine(2, line);
    CliRun.of(args("export", c, "--to", "megatron", "--out", dir.resolve("o").toString()))
        .refusedInOneLine(2, line);
    CliRun.of("plan", "--catalog", c.toString(), "--model", "llama2-7b", "--cluster",
        "2x8:x100-64gb").refusedInOneLine(2, line);
    CliRun.of("deploy", "--catalog", c.toString(), "--target", "slurm", "--cluster",
        "2x8:x100-64gb", "--", "train.py").refusedInOneLine(2, line);
    CliRun.of("bench", "--catalog", c.toString(), "--cluster", "2x8:x100-64gb", "--out",
        dir.resolve("b").toString()).refusedInOneLine(2, line);
    assertThat(Files.readString(c)).isEqualTo(before);
    assertThat(dir.resolve("o")).doesNotExist();
  }

  @Test
  void brokenCatalogFilesAreRefusedInOneLine() throws Exception {
    String[][] cases = {
        {"x: &a 1\ny: *a\n", "YAML anchor"},
        {GPU + "    memoryGiB: 65\n", "given twice"},
        {GPU.replace("memoryGiB: 64", "memoryGiB: -64"), "'memoryGiB' must be"},
        {GPU.replace("hbmGBps: 3000", "hbmGBps: 1e300"), "'hbmGBps' must be"},
        {"gpus:\n  - " + "{a: ".repeat(120) + "1" + "}".repeat(120) + "\n", "my-catalog.yaml"},
    };
    for (String[] k : cases) {
      Path f = dir.resolve("my-catalog.yaml");
      Files.writeString(f, k[0].startsWith("gpus:") || k[0].startsWith("x:") ? k[0]
          : "gpus:\n" + k[0]);
      CliRun.of(args("simulate", f)).refusedInOneLine(2, k[1]);
    }
    CliRun.of(args("simulate", dir.resolve("none.yaml"))).refusedInOneLine(2, "none.yaml");
  }

  @Test
  void theOutputNeverReplacesTheCatalog() throws Exception {
    Path c = catalog(GPU);
    String before = Files.readString(c);
    CliRun r = CliRun.of(args("simulate", c, "--out", c.toString()));
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(Files.readString(c)).isEqualTo(before);
  }

  /**
   * A plan made on a catalog GPU is simulated and exported again with the same catalog, given
   * again or carried in the plan.
   */
  @Test
  void aPlanOnACatalogGpuIsReadAgainWithTheCatalog() throws Exception {
    Path c = catalog(GPU);
    Path plan = dir.resolve("plan.json");
    CliRun made = CliRun.of("plan", "--catalog", c.toString(), "--model", "llama2-7b",
        "--layers", "4", "--cluster", "2x8:x100-64gb", "--global-batch", "64", "--out",
        plan.toString());
    assertThat(made.code()).as(made.err()).isZero();
    CliRun again = CliRun.of("simulate", "--catalog", c.toString(), "--plan", plan.toString());
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(again.out()).contains("iteration");
    CliRun export = CliRun.of("export", "--catalog", c.toString(), "--plan", plan.toString(),
        "--to", "megatron");
    assertThat(export.code()).as(export.err()).isZero();
    assertThat(export.out()).contains("on 2x8:x100-64gb:roce-400");
    // The plan carries its catalog: without --catalog it is read with that one.
    CliRun alone = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(alone.code()).as(alone.err()).isZero();
    assertThat(alone.out().lines().filter(l -> l.startsWith("iteration ")).findFirst())
        .isEqualTo(again.out().lines().filter(l -> l.startsWith("iteration ")).findFirst());
    CliRun deploy = CliRun.of("deploy", "--plan", plan.toString(), "--target", "slurm", "--",
        "train.py");
    assertThat(deploy.code()).as(deploy.err()).isZero();
    assertThat(deploy.out()).contains("#SBATCH --nodes=2");
    // A plan without it (written before plans carried one) names a GPU the shipped catalog lacks.
    String json = Files.readString(plan);
    com.fasterxml.jackson.databind.node.ObjectNode root =
        (com.fasterxml.jackson.databind.node.ObjectNode) new com.fasterxml.jackson.databind
            .ObjectMapper().readTree(json);
    root.remove("catalog");
    Path old = Files.writeString(dir.resolve("old.json"), root.toString());
    CliRun.of("simulate", "--plan", old.toString()).refusedInOneLine(2,
        "unknown gpu 'x100-64gb'");
  }
}
