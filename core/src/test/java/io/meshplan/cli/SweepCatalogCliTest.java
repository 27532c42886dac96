package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sweep --catalog FILE}: a grid may name the GPUs and fabrics a user's catalog adds, as
 * {@code --cluster} may in plan, simulate, export and deploy; without it the same grid is refused
 * in one line; a broken catalog is refused in one line; no output may name the catalog.
 */
class SweepCatalogCliTest {
  @TempDir Path dir;

  /** The h100-80gb entry of catalog.yaml renamed, with 64 GiB and RoCE by default. */
  private static final String GPU = "  - name: x100-64gb\n    architecture: hopper\n"
      + "    peakTflops: {fp32: 67, tf32: 494.5, bf16: 989.5, fp16: 989.5, fp8: 1979}\n"
      + "    memoryGiB: 64\n    hbmGBps: 3350\n    nvlinkDomain: 8\n"
      + "    nvlinkGBpsPerDirection: 450\n    defaultFabric: roce-400\n"
      + "    source: a made-up part for a test\n";

  private static final String GRID = "models: opt-125m\nseq: 512\ngpus: x100-64gb\n"
      + "clusters: [1x2, 2x2]\nglobalBatch: 16\n";

  private Path write(String name, String text) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    return f;
  }

  @Test
  void aGpuOnlyInTheCatalogSweeps() throws Exception {
    Path c = write("my-catalog.yaml", "gpus:\n" + GPU);
    Path g = write("grid.yaml", GRID);
    Path csv = dir.resolve("out.csv");
    CliRun r = CliRun.of("sweep", "--grid", g.toString(), "--catalog", c.toString(), "--csv",
        csv.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("sweep: 2 points: 2 planned, 0 infeasible")
        .contains("1x2:x100-64gb:roce-400").contains("2x2:x100-64gb:roce-400");
    List<String> rows = Files.readAllLines(csv);
    assertThat(rows).hasSize(3);
    assertThat(rows.get(1)).startsWith("0,opt-125m,512,x100-64gb,roce-400,1,2,2,16,auto,false,ok,");
    assertThat(rows.get(2)).startsWith("1,opt-125m,512,x100-64gb,roce-400,2,2,4,16,auto,false,ok,");
    // Only the memory differs from h100-80gb's entry, and opt-125m fits in either: the sweep of
    // the renamed part on the same fabric predicts h100-80gb's iteration times.
    Path h = write("h100.yaml", GRID.replace("x100-64gb", "h100-80gb") + "fabrics: roce-400\n");
    Path hcsv = dir.resolve("h100.csv");
    CliRun ref = CliRun.of("sweep", "--grid", h.toString(), "--csv", hcsv.toString());
    assertThat(ref.code()).as(ref.err()).isZero();
    assertThat(Files.readString(csv).replace("x100-64gb", "h100-80gb"))
        .isEqualTo(Files.readString(hcsv));
  }

  @Test
  void withoutTheCatalogTheGridIsRefused() throws Exception {
    Path g = write("grid.yaml", GRID);
    CliRun.of("sweep", "--grid", g.toString()).refusedInOneLine(2,
        "field 'gpus': unknown gpu 'x100-64gb'; valid: ");
  }

  @Test
  void aCatalogFabricIsAGridFabric() throws Exception {
    Path c = write("my-catalog.yaml", "gpus:\n" + GPU + "fabrics:\n  - name: slow-eth\n"
        + "    kind: roce\n    nicGbps: 25\n    nicsPerNode: 1\n    latencySeconds: 0.00002\n"
        + "    source: a made-up fabric for a test\n");
    Path g = write("grid.yaml", GRID.replace("x100-64gb", "h100") + "fabrics: [slow-eth]\n");
    CliRun r = CliRun.of("sweep", "--grid", g.toString(), "--catalog", c.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("x2:h100-80gb:slow-eth");
    CliRun.of("sweep", "--grid", g.toString()).refusedInOneLine(2,
        "field 'fabrics[0]': unknown fabric 'slow-eth'; valid: ");
  }

  @Test
  void aBrokenCatalogIsRefusedInOneLine() throws Exception {
    Path g = write("grid.yaml", GRID);
    Path c = write("my-catalog.yaml", "gpus:\n" + GPU.replace("hopper", "quantum"));
    CliRun.of("sweep", "--grid", g.toString(), "--catalog", c.toString()).refusedInOneLine(2,
        "unknown architecture 'quantum'");
    CliRun.of("sweep", "--grid", g.toString(), "--catalog", dir.resolve("none.yaml").toString())
        .refusedInOneLine(2, "none.yaml");
  }

  @Test
  void noOutputNamesTheCatalog() throws Exception {
    Path g = write("grid.yaml", GRID);
    String text = "gpus:\n" + GPU;
    Path c = write("my-catalog.yaml", text);
    CliRun.of("sweep", "--grid", g.toString(), "--catalog", c.toString(), "--csv", c.toString())
        .refusedInOneLine(2, "is also an input: --catalog");
    CliRun.of("sweep", "--grid", g.toString(), "--catalog", c.toString(), "--jsonl",
        c.toString(), "--force").refusedInOneLine(2, "is also an input: --catalog");
    Path named = write("sweep.csv", text);
    CliRun.of("sweep", "--grid", g.toString(), "--catalog", named.toString(), "--out",
        dir.toString()).refusedInOneLine(2, "is also an input: --catalog");
    assertThat(Files.readString(c)).isEqualTo(text);
    assertThat(Files.readString(named)).isEqualTo(text);
  }
}
