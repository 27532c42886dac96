package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.calibrate.ProfileEntry;
import io.meshplan.calibrate.ProfileFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * calibrate on logs whose numbers parse but are out of range: a warning and the rest of the log
 * fitted, or one line with exit code 2, never an internal error; and never a profile that {@code
 * --profile} refuses.
 */
class CalibrateBoundsCliTest {
  @TempDir Path dir;

  private static final String HEADER = "#       size         count      type   redop    root"
      + "     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n";

  private static String row(long bytes, String us, String alg, String bus) {
    return String.format(java.util.Locale.ROOT, "%12d %13d     float     sum      -1 %8s %7s %7s"
        + "       0 %8s %7s %7s       0%n", bytes, bytes / 4, us, alg, bus, us, alg, bus);
  }

  /** An 8-rank all-reduce log: 1 MiB in 23.30 us and 2 MiB in 33.86 us. */
  private static String log(String threads, int ranks, String rows) {
    StringBuilder b = new StringBuilder("# Collective test starting: all_reduce_perf\n# nThread "
        + threads + " minBytes 1048576 maxBytes 2097152 step: 2(factor)\n");
    for (int i = 0; i < ranks; i++) {
      b.append("#  Rank  ").append(i).append(" Group  0 Pid  4100").append(i)
          .append(" on dgx-a100-01 device  ").append(i).append(" [0000:07:00] NVIDIA A100\n");
    }
    return b + HEADER + rows + "# Avg bus bandwidth    : 93.5\n";
  }

  private static final String ROWS = row(1048576, "23.30", "45.00", "78.74")
      + row(2097152, "33.86", "61.93", "108.39");

  private Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  private CliRun calibrate(Path log, Path out) {
    return CliRun.of("calibrate", log.toString(), "--cluster", "1x8:a100-80gb", "--out",
        out.toString());
  }

  @Test
  void headerGpuCountTooLargeIsAWarningAndTheRanksAreFitted() throws IOException {
    Path log = write("all_reduce_perf.log", log("1 nGpus 99999999999", 8, ROWS));
    Path out = dir.resolve("o.yaml");
    CliRun r = calibrate(log, out);
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    assertThat(r.err()).isEqualTo("meshplan: warning: " + log + ":2: nThread 1 x nGpus"
        + " 99999999999 is not 1 to 1048576 GPUs; line ignored\n");
    assertThat(ProfileFiles.read(out).entries()).extracting(ProfileEntry::gpus).containsExactly(8);
  }

  @Test
  void rowsThatOverflowAreSkippedAndTheRestFitted() throws IOException {
    String rows = row(524288, "1e-300", "29.60", "51.80") + row(4194304, "53.32", "78.67",
        "1e308") + ROWS;
    Path log = write("all_reduce_perf.log", log("1 nGpus 8", 8, rows));
    Path out = dir.resolve("o.yaml");
    CliRun r = calibrate(log, out);
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    // Lines 11 and 12: the start, nThread, 8 rank and header lines come first.
    assertThat(r.err().lines()).containsExactly(
        "meshplan: warning: " + log + ":12: implausible measurement with a time of 1.000e-306 s"
            + " (below 0.01 us, the finest time nccl-tests prints); row skipped",
        "meshplan: warning: " + log + ":13: implausible measurement with a bandwidth past any"
            + " number (above 1 PB/s); row skipped");
    assertThat(ProfileFiles.read(out).entries()).singleElement()
        .satisfies(e -> assertThat(e.points()).isEqualTo(2));
  }

  @Test
  void oneRankLogIsRefusedAfterItsWarningAndNothingIsWritten() throws IOException {
    // One GPU: busbw = algbw x 2(1-1)/1 = 0.
    String rows = row(1048576, "23.30", "45.00", "0.00") + row(2097152, "33.86", "61.93", "0.00");
    Path log = write("all_reduce_perf.log", log("1 nGpus 1", 1, rows));
    Path out = dir.resolve("o.yaml");
    CliRun r = calibrate(log, out);
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    // Line 5, the first row: after the start, nThread, one rank and header lines.
    assertThat(r.err().lines()).containsExactly(
        "meshplan: warning: " + log + ":5: measured on groups of 1 GPU, which move no data"
            + " between GPUs: no communication to fit; 2 rows skipped",
        "meshplan: error: no measurements found in 1 file(s) (" + log + "); see the warnings"
            + " above");
    assertThat(out).doesNotExist();
  }

  @Test
  void oneRankLogBesideAnEightRankOneLeavesAProfileThatReads() throws IOException {
    String rows = row(1048576, "23.30", "45.00", "0.00") + row(2097152, "33.86", "61.93", "0.00");
    Path one = write("one_all_reduce_perf.log", log("1 nGpus 1", 1, rows));
    Path eight = write("all_reduce_perf.log", log("1 nGpus 8", 8, ROWS));
    Path out = dir.resolve("o.yaml");
    CliRun r = CliRun.of("calibrate", one.toString(), eight.toString(), "--cluster",
        "1x8:a100-80gb", "--out", out.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
    assertThat(ProfileFiles.read(out).entries()).extracting(ProfileEntry::gpus).containsExactly(8);
  }

  @Test
  void aFitThatProfileWouldRefuseIsNotWritten() throws IOException {
    // Times that fall with size (100 us at 1 MiB, 50 us at 2 MiB) fit beta = 0: an infinite bus
    // bandwidth, above the bound 2 x 300 GB/s of an A100's NVLink that --profile checks.
    String rows = row(1048576, "100.00", "10.49", "18.35") + row(2097152, "50.00", "41.94",
        "73.40");
    Path log = write("all_reduce_perf.log", log("1 nGpus 8", 8, rows));
    Path out = dir.resolve("o.yaml");
    calibrate(log, out).refusedInOneLine(ExitCodes.BAD_INPUT, "meshplan: error: --out " + out
        + ": not written, since meshplan would refuse the fitted profile on reading: entries[0]:"
        + " beta 0.0 (bus bandwidth infinite, from a time of 0) is above 600.0 GB/s");
    assertThat(out).doesNotExist();
  }
}
