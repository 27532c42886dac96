package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Doubts are said: a profile measured on another cluster is named by every command that prices
 * with it, a fit that cannot separate latency from bandwidth is refused, and a fitted bandwidth
 * far below the catalog's is warned about.
 */
class QuietDoubtsCliTest {
  private static final Path LOG =
      Path.of("core/src/test/resources/calibrate/all_reduce_perf_8gpu_a100.log");

  @TempDir Path dir;

  private List<String> log;

  @BeforeEach
  void read() throws Exception {
    log = Files.readAllLines(LOG);
  }

  /** The log's header (its first 18 lines), some of its rows, and nccl-tests' footer. */
  private Path logOf(String name, int firstRow, int lastRow) throws Exception {
    StringBuilder b = new StringBuilder();
    log.subList(0, 18).forEach(l -> b.append(l).append('\n'));
    log.subList(firstRow - 1, lastRow).forEach(l -> b.append(l).append('\n'));
    b.append("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.01\n#\n");
    Path f = dir.resolve(name);
    Files.writeString(f, b.toString());
    return f;
  }

  @Test
  void aLogOfOneEightByteRowIsRefused() throws Exception {
    assertThat(log.get(18)).contains("      8             2     float");
    Path one = logOf("one.log", 19, 19);
    Path out = dir.resolve("one.yaml");
    CliRun r = CliRun.of("calibrate", one.toString(), "--cluster", "1x8:a100-80gb", "--out",
        out.toString());
    r.refusedInOneLine(ExitCodes.BAD_INPUT, one + ":19: all_reduce intra-node on 8 GPUs was"
        + " measured at 1 message size (8 bytes); a fit needs at least 2 sizes to separate"
        + " latency from bandwidth");
    assertThat(out).doesNotExist();
  }

  @Test
  void aFitFarBelowNvlinkIsWarnedAboutInOneLine() throws Exception {
    // Rows 8 B to 1 KiB (lines 19 to 26), all about 11 us: latency-bound, the fitted bandwidth
    // is some GB/s, under 10% of the A100's 300 GB/s NVLink.
    assertThat(log.get(25)).contains("    1024           256     float");
    Path small = logOf("small.log", 19, 26);
    CliRun r = CliRun.of("calibrate", small.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("small.yaml").toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err().lines()).singleElement().asString().startsWith("meshplan: warning:"
        + " all_reduce intra-node on 8 GPUs: the fitted bus bandwidth ").contains(" is below 10%"
        + " of the catalog's 300.0 GB/s (a100-80gb NVLink)");
    // The whole sweep, 8 B to 8 GiB, reaches its 200-250 GB/s plateau: no doubt.
    CliRun full = CliRun.of("calibrate", LOG.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("full.yaml").toString());
    assertThat(full.code()).as(full.err()).isZero();
    assertThat(full.err()).doesNotContain("below 10%");
  }

  @Test
  void aForeignProfileIsNamedByPlanSimulateAndExport() {
    Path profile = dir.resolve("a100.yaml");
    CliRun cal = CliRun.of("calibrate", "examples/alpa_profile_communication_4x8_a100.txt",
        "--cluster", "4x8:a100-80gb", "--out", profile.toString());
    assertThat(cal.code()).as(cal.err()).isZero();
    String warning = "meshplan: warning: --profile " + profile + " was measured on"
        + " 4x8:a100-80gb:ib-hdr200, not on 1x8:a100-80gb:ib-hdr200; its prices may not apply";
    String[] job = {"--model", "gpt-1.7b", "--cluster", "1x8:a100-80gb", "--profile",
        profile.toString(), "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
        "--global-batch", "16", "--zero-stage", "3"};
    CliRun sim = CliRun.of(concat(new String[] {"simulate"}, job));
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(sim.err().lines()).containsExactly(warning);
    CliRun ex = CliRun.of(concat(new String[] {"export", "--to", "megatron"}, job));
    assertThat(ex.code()).as(ex.err()).isZero();
    assertThat(ex.err().lines()).containsExactly(warning);
    CliRun plan = CliRun.of("plan", "--model", "gpt-1.7b", "--cluster", "1x8:a100-80gb",
        "--profile", profile.toString(), "--global-batch", "16", "--megatron-grid");
    assertThat(plan.code()).as(plan.err()).isZero();
    assertThat(plan.err().lines()).contains(warning);
    // On the cluster it was measured on, no word.
    CliRun home = CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb",
        "--profile", profile.toString(), "--tp", "1", "--pp", "1", "--dp", "32",
        "--micro-batch", "1", "--global-batch", "32", "--zero-stage", "3");
    assertThat(home.code()).as(home.err()).isZero();
    assertThat(home.err()).isEmpty();
  }

  private static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
