package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Numbers of a log that parse but are out of range (a count too large for an int, a time so short
 * or a bandwidth so high that scaling or squaring it overflows, a group of one GPU) are skipped with
 * a warning at their line by every parser, never thrown.
 */
class ParserBoundsTest {
  private static final String THREADS = "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152"
      + " step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n";
  private static final String HEADER = "#       size         count      type   redop    root"
      + "     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n";
  private static final String ROW_1M = "     1048576        262144     float     sum      -1"
      + "    23.30   45.00   78.74       0    23.14   45.31   79.30       0\n";
  private static final String ROW_2M = "     2097152        524288     float     sum      -1"
      + "    33.86   61.93  108.39       0    34.19   61.34  107.35       0\n";
  private static final String FOOTER = "# Avg bus bandwidth    : 93.5\n";

  private static ParseResult read(String file, String text) {
    return new BenchmarkLogReader(8).parse(file, text);
  }

  private static String ranks(int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append("#  Rank  ").append(i).append(" Group  0 Pid  4100").append(i)
          .append(" on dgx-a100-01 device  ").append(i).append(" [0000:07:00] NVIDIA A100\n");
    }
    return b.toString();
  }

  @Test
  void gpuCountTooLargeForAnIntIsIgnoredWithAWarning() {
    // 99999999999 > 2^31 - 1 = 2147483647: Integer.parseInt threw NumberFormatException.
    ParseResult r = read("all_reduce_perf.log", THREADS.replace("nGpus 8", "nGpus 99999999999")
        + ranks(8) + HEADER + ROW_1M + ROW_2M + FOOTER);
    // The 8 '#  Rank' lines still give the group.
    assertThat(r.points()).hasSize(2).allSatisfy(p -> assertThat(p.gpus()).isEqualTo(8));
    assertThat(r.warnings()).extracting(ParseWarning::toString).containsExactly(
        "all_reduce_perf.log:1: nThread 1 x nGpus 99999999999 is not 1 to 1048576 GPUs;"
            + " line ignored");
  }

  @Test
  void threadTimesGpuProductThatWrapsAnIntIsIgnored() {
    // 100000 x 100000 = 10^10 wrapped to 10^10 - 2 x 2^32 = 1410065408 GPUs as an int product.
    ParseResult r = read("all_reduce_perf.log", THREADS.replace("nThread 1 nGpus 8",
        "nThread 100000 nGpus 100000") + HEADER + ROW_1M + ROW_2M + FOOTER);
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).extracting(ParseWarning::message).contains(
        "nThread 100000 x nGpus 100000 is not 1 to 1048576 GPUs; line ignored",
        "neither '#  Rank' lines nor a '# nThread' line: the GPU count is unknown; rows skipped");
  }

  @Test
  void rankNumberTooLargeIsIgnoredWithAWarning() {
    String log = THREADS + ranks(8).replace("Rank  7 Group", "Rank  99999999999 Group")
        + HEADER + ROW_1M + ROW_2M + FOOTER;
    ParseResult r = read("all_reduce_perf.log", log);
    // Ranks 0 to 6 are read; line 9 (after the nThread line and ranks 0..6) is ignored.
    assertThat(r.points()).allSatisfy(p -> assertThat(p.gpus()).isEqualTo(7));
    assertThat(r.warnings()).extracting(ParseWarning::toString).first().isEqualTo(
        "all_reduce_perf.log:9: Rank '99999999999' is not 0 to 1048575 (at most 1048576 GPUs);"
            + " line ignored");
  }

  @Test
  void textRowsThatOverflowWhenScaledAreSkipped() {
    // 1e-300 us = 1e-306 s: the fit's weight 1/t^2 = 1e612 is infinite and alpha NaN.
    // 1e308 GB/s x 1e9 = 1e317 bytes/s is infinite.
    String tiny = ROW_1M.replace("23.30", "1e-300");
    String huge = ROW_2M.replace("108.39", "1e308");
    ParseResult r = read("all_reduce_perf.log", THREADS + ranks(8) + HEADER + tiny + huge
        + FOOTER);
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).extracting(ParseWarning::toString).containsExactly(
        "all_reduce_perf.log:11: implausible measurement with a time of 1.000e-306 s (below"
            + " 0.01 us, the finest time nccl-tests prints); row skipped",
        "all_reduce_perf.log:12: implausible measurement with a bandwidth past any number"
            + " (above 1 PB/s); row skipped");
  }

  @Test
  void timeJustAboveTheBoundIsKept() {
    // 0.01 us = 1e-8 s, the finest nccl-tests prints, is a measurement; 0.001 us is not.
    String at = ROW_1M.replace("23.30", "0.01");
    String below = ROW_2M.replace("33.86", "0.001");
    ParseResult r = read("all_reduce_perf.log", THREADS + ranks(8) + HEADER + at + below
        + FOOTER);
    assertThat(r.points()).extracting(MeasuredPoint::bytes).containsExactly(1048576L);
    assertThat(r.warnings()).extracting(ParseWarning::line).containsExactly(12);
  }

  private static String json(String config, String result) {
    return "{\"version\":3,\"args\":[\"./build/all_reduce_perf\"],\"config\":" + config
        + ",\"results\":[" + result + "]}";
  }

  private static final String RESULT = "{\"size\":1048576,\"out_of_place\":{\"time\":23.3,"
      + "\"alg_bw\":45.0,\"bus_bw\":78.74}}";

  @Test
  void jsonGpuCountOutOfRangeIsAWarningNotAWrappedInt() {
    // asInt() of 99999999999 wrapped to 99999999999 - 23 x 2^32 = 1215752191 GPUs.
    ParseResult big = read("r.json", json("{\"nthreads\":1,\"ngpus\":99999999999}", RESULT));
    assertThat(big.points()).isEmpty();
    assertThat(big.warnings()).extracting(ParseWarning::message).containsExactly(
        "config.nthreads 1 x config.ngpus 99999999999 is not 1 to 1048576 GPUs: the GPU count"
            + " is unknown; no rows read");
    // 0 threads made 0 x 8 = 0 ranks, which the point refused with an internal error.
    ParseResult zero = read("r.json", json("{\"nthreads\":0,\"ngpus\":8}", RESULT));
    assertThat(zero.points()).isEmpty();
    assertThat(zero.warnings()).hasSize(1);
  }

  @Test
  void jsonResultsThatOverflowWhenScaledAreSkipped() {
    String tiny = RESULT.replace("23.3", "1e-300");
    String huge = RESULT.replace("78.74", "1e308");
    ParseResult r = read("r.json", json("{\"devices\":[{\"rank\":0,\"hostname\":\"a\"},{\"rank\":1,\"hostname\":\"a\"}]}",
        tiny + "," + huge));
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).extracting(ParseWarning::message).containsExactly(
        "result 0 is an implausible measurement with a time of 1.000e-306 s (below 0.01 us, the"
            + " finest time nccl-tests prints); skipped",
        "result 1 is an implausible measurement with a bandwidth past any number (above 1 PB/s);"
            + " skipped");
  }

  @Test
  void alpaTimeSoShortThatTheBandwidthIsInfiniteIsSkipped() {
    // 2 GiB / 1e-300 s = 2.1e309 bytes/s, infinite.
    ParseResult r = read("alpa.txt", "AllReduce: [[0, 1, 2, 3]]\tBytes: 2.00000 GB\tTime: 1e-300 s"
        + "\tBandwidth: 213.31 GB/s\n");
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).extracting(ParseWarning::message).containsExactly(
        "implausible measurement with a time of 1.000e-300 s (below 0.01 us, the finest time"
            + " nccl-tests prints); skipped");
  }

  @Test
  void tableCountsAndBandwidthsOutOfRangeAreSkipped() {
    // 2147483647 GPUs: (n + 8 - 1) / 8 wrapped negative nodes, refused with an internal error.
    // 400 nines parse to an infinite busbw.
    String log = "| GPUs | busbw | algbw |\n|---|---|---|\n| 2147483647 | 10.0 | 5.0 |\n"
        + "| 8 | " + "9".repeat(400) + " | 5.0 |\n| 8 | 122.3 | 65.2 |\n";
    ParseResult r = read("t.md", "All numbers in GB/s.\n" + log);
    assertThat(r.points()).extracting(MeasuredPoint::gpus).containsExactly(8);
    assertThat(r.warnings()).extracting(ParseWarning::message).containsExactly(
        "GPUs '2147483647' is not 1 to 1048576; skipped",
        "implausible measurement with a bandwidth past any number (above 1 PB/s); skipped");
    ParseResult over = read("b.md", "The average bandwidth of all_reduce over 99999999999 ranks\n"
        + "| payload | busbw | algbw |\n|---|---|---|\n| 32KiB | 0.92GBps | 0.48GBps |\n");
    assertThat(over.points()).isEmpty();
    assertThat(over.warnings()).extracting(ParseWarning::message).containsExactly(
        "'over 99999999999 ranks' is not 1 to 1048576 GPUs; skipped");
    // A signed or fractional count was no count at all: each row then guessed its own group
    // from busbw/algbw (24, 33 GPUs on 32).
    for (String n : List.of("-32", "32.5", "+32")) {
      ParseResult odd = read("b.md", "The average bandwidth of all_reduce over " + n + " ranks\n"
          + "| payload | busbw | algbw |\n|---|---|---|\n| 32KiB | 0.92GBps | 0.48GBps |\n");
      assertThat(odd.points()).as(n).isEmpty();
      assertThat(odd.warnings()).extracting(ParseWarning::message).containsExactly(
          "'over " + n + " ranks' is not 1 to 1048576 GPUs; skipped");
    }
  }

  @Test
  void groupsOfOneGpuAreSkippedWithOneWarning() {
    // nccl-tests on one GPU: all-reduce's bus factor 2(1-1)/1 = 0, so busbw is 0.00 and a fit
    // gave beta = 0, an infinite bus bandwidth that --profile refuses.
    String log = THREADS.replace("nGpus 8", "nGpus 1") + ranks(1) + HEADER
        + ROW_1M.replace("78.74", "0.00").replace("79.30", "0.00")
        + ROW_2M.replace("108.39", "0.00").replace("107.35", "0.00") + FOOTER;
    ParseResult r = read("all_reduce_perf.log", log);
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).extracting(ParseWarning::toString).containsExactly(
        "all_reduce_perf.log:4: measured on groups of 1 GPU, which move no data between GPUs:"
            + " no communication to fit; 2 rows skipped");
    // Alpa groups of one device each, as [[0], [1]], likewise.
    ParseResult alpa = read("alpa.txt", "AllGather: [[0], [1]]\tBytes: 1.00000 GB\tTime: 0.01 s"
        + "\tBandwidth: 0.00 GB/s\n");
    assertThat(alpa.points()).isEmpty();
    assertThat(alpa.warnings()).extracting(ParseWarning::line).containsExactly(1);
  }

  @Test
  void boundsAreThoseDocumented() {
    assertThat(MeasurementBounds.implausible(1 << 20, 1e-8, 1e15, 1e15)).isNull();
    assertThat(List.of(
        MeasurementBounds.implausible((1L << 50) + 1, Double.NaN, Double.NaN, 1),
        MeasurementBounds.implausible(Double.NaN, 0.99e-8, Double.NaN, Double.NaN),
        MeasurementBounds.implausible(Double.NaN, 3601, Double.NaN, Double.NaN),
        MeasurementBounds.implausible(Double.NaN, Double.NaN, 1.01e15, Double.NaN)))
        .doesNotContainNull();
    assertThat(MeasurementBounds.count("99999999999999999999", 0, 10)).isEmpty();
    assertThat(MeasurementBounds.count("-1", 0, 10)).isEmpty();
    assertThat(MeasurementBounds.count("10", 0, 10)).hasValue(10);
  }

  /**
   * A row whose size is not ASCII digits (a sign, hex, an exponent, a fraction, underscores, junk
   * after it, fullwidth digits) is warned about at its line as a row; before, it did not look like
   * a row and vanished, and a signed nGpus left the header unread without a word.
   */
  @Test
  void rowsWithAMalformedSizeAreWarnedAboutNotDropped() {
    StringBuilder bad = new StringBuilder();
    List<String> sizes = List.of("-4194304", "0x800000", "+16777216", "33554432abc", "1e6",
        "1048576.5", "1_048_576", "\uff11\uff10\uff12\uff14");
    for (String size : sizes) {
      bad.append(ROW_2M.replace("2097152", size).replaceFirst("^ +", "    "));
    }
    ParseResult r = read("all_reduce_perf.log", THREADS + ranks(8) + HEADER + ROW_1M + bad
        + ROW_2M + FOOTER);
    assertThat(r.points()).hasSize(2);
    List<String> expected = new java.util.ArrayList<>();
    for (int i = 0; i < sizes.size(); i++) {
      // Line 1 the threads, 2-9 the ranks, 10 the header, 11 the 1 MiB row, then the bad rows.
      expected.add("all_reduce_perf.log:" + (12 + i) + ": size '" + sizes.get(i)
          + "' is not a whole number of bytes in ASCII digits; row skipped");
    }
    assertThat(r.warnings()).extracting(ParseWarning::toString).containsExactlyElementsOf(
        expected);
    ParseResult signed = read("all_reduce_perf.log", THREADS.replace("nGpus 8", "nGpus -8")
        + HEADER + ROW_1M + ROW_2M + FOOTER);
    assertThat(signed.warnings()).extracting(ParseWarning::message).contains(
        "nThread 1 x nGpus -8 is not 1 to 1048576 GPUs; line ignored");
  }

  /**
   * config.devices is one object per rank, each rank once; junk entries ({"rank":"x"}, 5, null)
   * used to be counted as a 3-GPU group and written to the profile, and a rank of 1e20 passed.
   */
  @Test
  void jsonDevicesThatAreNotOneObjectPerRankAreRefused() {
    String ok = "{\"ngpus\":1,\"devices\":[{\"rank\":0,\"hostname\":\"a\"},"
        + "{\"rank\":1,\"hostname\":\"a\"}]}";
    assertThat(read("r.json", json(ok, RESULT)).points()).hasSize(1)
        .allSatisfy(p -> assertThat(p.gpus()).isEqualTo(2));
    for (String devices : List.of("[{\"rank\":\"x\"},5,null]", "[{\"rank\":0},{\"rank\":0}]",
        "[{\"rank\":0},{\"rank\":1e20}]", "[{\"rank\":0},{\"rank\":-1}]",
        "[{\"rank\":0},{}]")) {
      ParseResult r = read("r.json", json("{\"ngpus\":1,\"devices\":" + devices + "}", RESULT));
      assertThat(r.points()).as(devices).isEmpty();
      assertThat(r.warnings()).as(devices).extracting(ParseWarning::message).singleElement()
          .asString().matches("config\\.devices\\[[0-9]\\] is not a device with a rank of its"
              + " own from 0 to [0-9]: the GPU count is unknown; no rows read");
    }
  }

  /**
   * A JSON log the reader refuses is named in the user's terms: no Jackson feature or constraint
   * class names, and '(truncated?)' only where the file ends early.
   */
  @Test
  void invalidJsonIsDescribedWithoutTheLibrarysWords() {
    String deep = "{\"version\":3,\"results\":" + "[".repeat(200) + "]".repeat(200) + "}";
    String longNumber = "{\"version\":3,\"results\":[{\"size\":" + "1".repeat(2000) + "}]}";
    java.util.Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put(deep, "not valid JSON: nesting depth above 100 levels of objects and arrays, "
        + "meshplan's limit for JSON and YAML input; no rows read");
    cases.put("{\"version\":3,\"results\":[{\"size\":NaN}]}",
        "not valid JSON: Non-standard token 'NaN'; no rows read");
    cases.put(longNumber, "not valid JSON: a number of more digits than a JSON or YAML reader "
        + "takes (at most 1000); no rows read");
    cases.put("{\"version\":3,\"results\":[", "not valid JSON (truncated?): Unexpected "
        + "end-of-input: expected close marker for Array; no rows read");
    cases.forEach((text, message) -> assertThat(read("r.json", text).warnings())
        .extracting(ParseWarning::message).containsExactly(message));
  }
}
