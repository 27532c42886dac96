package io.meshplan.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The auditor's files, end to end: a cluster file's or a catalog's figure that was "above 0" but
 * tiny ended in an internal error (exit 1: a time of Infinity, a memory of 0 bytes) or in an
 * iteration time hundreds of digits long (exit 0); each is now refused in one line, exit 2,
 * naming the file, the field and the range.
 */
class ClusterBoundsCliTest {
  @TempDir Path dir;

  private static final List<String> PLAN = List.of("plan", "--model", "llama2-7b", "--layers",
      "4");

  /** The shipped a100-80gb entry, renamed xg, with a fabric xf of its own. */
  private static final String CATALOG = "gpus:\n  - name: xg\n    architecture: ampere\n"
      + "    peakTflops: {fp32: 19.5, tf32: 156, bf16: 312, fp16: 312}\n    memoryGiB: 80\n"
      + "    hbmGBps: 2039\n    nvlinkDomain: 8\n    nvlinkGBpsPerDirection: 300\n"
      + "    powerW: 400\n    boostClockMHz: 1410\n    defaultFabric: xf\n    source: test\n"
      + "fabrics:\n  - name: xf\n    kind: infiniband\n    nicGbps: 200\n    nicsPerNode: 8\n"
      + "    latencySeconds: 0.000005\n    source: test\n";

  @Test
  void aClusterFilesTinyBandwidthIsRefusedInOneLine() throws Exception {
    Path f = dir.resolve("v.yaml");
    // Were: nvlink 1e-300 and hbm 1e-300 B/s an internal error on Infinity seconds, nic 1e-300
    // on two nodes the same, nvlink 1e-10 an iteration of 3.7e18 s with exit 0.
    String[][] cases = {{"1", "8", "nvlinkBandwidth: 1e-300"}, {"1", "8", "hbmBandwidth: 1e-300"},
        {"2", "16", "nicBandwidth: 1e-300"}, {"1", "8", "nvlinkBandwidth: 1e-10"}};
    for (String[] c : cases) {
      Files.writeString(f, "nodes: " + c[0] + "\ngpusPerNode: 8\ngpu: a100-80gb\n" + c[2] + "\n");
      String field = c[2].substring(0, c[2].indexOf(':'));
      CliRun.of(PLAN, "--cluster", f.toString(), "--global-batch", c[1]).refusedInOneLine(2,
          "meshplan: error: " + f + ": field '" + field + "' must be a bandwidth from 0.1 GB/s to"
              + " 1 PB/s");
    }
  }

  @Test
  void aCatalogsTinyFigureIsRefusedInOneLine() throws Exception {
    Path f = dir.resolve("cat.yaml");
    // Were: memoryGiB 1e-300 an internal error on 0 HBM bytes, NVLink 1e-300 one on a tensor
    // time of 2.83e298 s, nicGbps 1e-300 one on Infinity, a bf16 peak of 1e-300 an iteration
    // time some 300 digits long with exit 0.
    String[][] cases = {
        {"memoryGiB: 80", "memoryGiB: 1e-300", "1", "'memoryGiB' must be a number from 1 to "
            + "65,536 GiB"},
        {"nvlinkGBpsPerDirection: 300", "nvlinkGBpsPerDirection: 1e-300", "1",
            "'nvlinkGBpsPerDirection' must be a number from 0.1 to 1,000,000 GB/s"},
        {"nicGbps: 200", "nicGbps: 1e-300", "2",
            "fabrics[0] 'xf': 'nicGbps' must be a number from 0.8 to 8,000,000 Gb/s"},
        {"bf16: 312", "bf16: 1e-300", "1",
            "peakTflops: 'bf16' must be a number from 0.1 to 1,000,000 TFLOP/s"}};
    for (String[] c : cases) {
      Files.writeString(f, CATALOG.replace(c[0], c[1]));
      CliRun r = CliRun.of(PLAN, "--catalog", f.toString(), "--cluster", c[2] + "x8:xg",
          "--global-batch", String.valueOf(8 * Integer.parseInt(c[2])));
      r.refusedInOneLine(2, "meshplan: error: " + f + ": ");
      r.refusedInOneLine(2, c[3]);
    }
  }

  /**
   * A cluster file's YAML faults are named in meshplan's words: '.nan' was "Malformed numeric
   * value '.nan'" and a tab SnakeYAML's "found character '\t(TAB)' that cannot start any token".
   */
  @Test
  void yamlFaultsAreNamedInTheUsersTerms() throws Exception {
    java.util.Map<String, String> cases = java.util.Map.of(
        "nodes: 2\ngpusPerNode: 8\ngpu: h100\nfabricLatency: .nan\n",
        "line 4, column 20: '.nan' is not a finite number",
        "nodes: 2\n\tgpusPerNode: 8\ngpu: h100\n",
        "a tab where YAML takes none; indent with spaces",
        // A list or mapping is shown as written, where it printed as '' ("got ''", "unknown
        // fabric ''").
        "nodes: [2]\ngpusPerNode: 8\ngpu: h100\n",
        "field 'nodes' must be a positive integer, got [2]",
        "nodes: 2\ngpusPerNode: 8\ngpu: h100\nnvlinkBandwidth: [360GB/s]\n",
        "got [\"360GB/s\"]",
        "nodes: 2\ngpusPerNode: 8\ngpu: h100\nfabric: {name: f, kind: infiniband}\n",
        "field 'fabric' must name a fabric of the catalog (such as ib-ndr400), got {\"name\":\"f\"");
    int k = 0;
    for (var c : cases.entrySet()) {
      Path f = dir.resolve("c" + k++ + ".yaml");
      java.nio.file.Files.writeString(f, c.getKey());
      CliRun.of("simulate", "--cluster", f.toString(), "--model", "llama3-8b", "--tp", "1",
          "--pp", "1", "--dp", "16", "--global-batch", "16", "--micro-batch", "1")
          .refusedInOneLine(2, c.getValue());
    }
  }

  /**
   * A GPU of the file with an fp32 peak alone trains in f32 by default; it was refused as if
   * '--dtype f16' had been given.
   */
  @Test
  void aGpuWithFp32AloneTrainsInF32() throws Exception {
    Path f = dir.resolve("fp32.yaml");
    java.nio.file.Files.writeString(f, "nodes: 2\ngpusPerNode: 8\ngpu: {name: mygpu, "
        + "architecture: hopper, peakTflops: {fp32: 67}, memoryGiB: 80, hbmGBps: 3350, "
        + "nvlinkDomain: 8, nvlinkGBpsPerDirection: 450, defaultFabric: ib-ndr400, source: t}\n");
    CliRun r = CliRun.of("simulate", "--cluster", f.toString(), "--model", "gpt-1.7b", "--tp",
        "1", "--pp", "1", "--dp", "16", "--global-batch", "16", "--micro-batch", "1", "--json");
    org.assertj.core.api.Assertions.assertThat(r.code()).as(r.err()).isZero();
    org.assertj.core.api.Assertions.assertThat(r.out()).contains("\"dtype\" : \"f32\"");
  }
}
