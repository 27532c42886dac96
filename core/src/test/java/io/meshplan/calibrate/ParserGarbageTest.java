package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Random text, and real log lines mixed with random ones, never make a reader throw: every problem is
 * a warning with a line inside the file.
 */
class ParserGarbageTest {
  private static final List<String> FRAGMENTS = List.of(
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5",
      "# Collective test starting: all_reduce_perf",
      "# Collective test starting: hypercube_perf",
      "#  Rank  0 Group  0 Pid  41000 on dgx-a100-01 device  0 [0000:07:00] NVIDIA A100-SXM4-80GB",
      "#   Rank  1 Pid   5120 on  dgx1-v100 device  1 [0x07] Tesla V100-SXM2-32GB",
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time",
      "     1048576        262144     float     sum      -1    23.30   45.00   78.74       0    23.14",
      "     1048576        262144     float     sum      -1    N/A   -45.00   78.74       0",
      "           8             2     float     sum      -1    10.80    0.00    0.00       0    10.45"
          + "    0.00    0.00       0",
      "99999999999999999999999 1 float sum -1 1e999 NaN Infinity 0",
      // Numbers that parse but overflow: an int too long, a time or bandwidth whose scaling to
      // seconds or bytes/s (or squaring in the fit) leaves the double range, one rank.
      "# nThread 99999 nGpus 99999999999 minBytes 8",
      "#  Rank 99999999999 Group 99999999999 Pid 1 on h device 0 [0x07] GPU",
      "#  Rank  0 Group  0 Pid  41000 on dgx-a100-01 device  0 [0000:07:00] NVIDIA A100",
      "     1048576        262144     float     sum      -1    1e-300   45.00   1e308       0",
      "{\"args\":[\"all_reduce_perf\"],\"config\":{\"nthreads\":0,\"ngpus\":99999999999},"
          + "\"results\":[{\"size\":8,\"out_of_place\":{\"time\":1e-300,\"alg_bw\":1,"
          + "\"bus_bw\":1e308}}]}",
      "AllReduce: [[0]]\tBytes: 1e300 GB\tTime: 1e-300 s\tBandwidth: 1 GB/s",
      "| 2147483647 | 1e308 | 99999999999 |",
      "The average bandwidth of all_reduce over 99999999999 ranks",
      "# Avg bus bandwidth    : 91.6495 ",
      "[1,0]<stdout>:# nThread 1 nGpus 1",
      "AllReduce: [[0, 1, 2, 3]]\tBytes: 2.00000 GB\tTime: 0.01406 s\tBandwidth: 213.31 GB/s",
      "SendRecv: [[0, 99999999999]]\tBytes: -2 GB\tTime: NaN s\tBandwidth: 1 GB/s",
      "AllGather: [[]]\tBytes: 1 GB\tTime: 1 s\tBandwidth: 1 GB/s",
      "| payload |    busbw   |    algbw   |",
      "|   32KiB |   0.92GBps |   0.48GBps |",
      "|   99ZiB |   N/A |   -1GBps |",
      "| GPUs | busbw | algbw |",
      "| 16 | 122.3 | 65.2 |",
      "| 0 | 1 |",
      "<tr><td>GPUs</td><td>busbw</td><td>algbw</td></tr>",
      "<tr><td>8</td><td>1662.4</td><td>949.9</td></tr>",
      "<tr><td>",
      "The average bandwidth of all_reduce over 0 ranks",
      "{\"results\":[{\"size\":8,\"out_of_place\":{\"time\":-1}}",
      "{\"args\":[\"all_reduce_perf\"],\"results\":[{\"size\":\"x\"}], \"config\":{\"devices\":[{}]}}",
      "");

  /** The characters of the random lines. */
  private static final String CHARS = "0123456789.-e #|[]<>:,/\tNA";
  private static final int MAX_LINE = 60;
  private static final int MAX_LINES = 30;

  /** The empty string, one-character strings of edge characters, and a 255-character one. */
  private static final List<String> STRING_EDGES = List.of("", " ", "\0", "\n", "\r", "\r\n",
      "\t", "\uFFFF", "\uD800", "\uDFFF", "\uD83D\uDE00", "a".repeat(255));

  /** Up to 30 lines, each (with even odds) a real fragment or up to 60 random characters. */
  private static List<String> log(Gen g) {
    return g.list(0, MAX_LINES, e -> e.bool() ? e.oneOf(FRAGMENTS) : e.string(CHARS, MAX_LINE));
  }

  /**
   * The empty log, an empty line, every fragment alone and all in order, every character alone,
   * and the longest logs of empty and of the longest random lines.
   */
  private static List<List<String>> logEdges() {
    List<List<String>> edges = new ArrayList<>();
    edges.add(List.of());
    edges.add(List.of(""));
    for (String f : FRAGMENTS) {
      edges.add(List.of(f));
    }
    edges.add(FRAGMENTS);
    List<String> chars = new ArrayList<>();
    for (char c : CHARS.toCharArray()) {
      chars.add(String.valueOf(c));
    }
    edges.add(chars);
    edges.add(Collections.nCopies(MAX_LINES, ""));
    String longest = CHARS.repeat(MAX_LINE / CHARS.length() + 1).substring(0, MAX_LINE);
    edges.add(List.of(longest));
    edges.add(Collections.nCopies(MAX_LINES, longest));
    return edges;
  }

  @Test
  void randomLinesNeverThrow() {
    Cases.check(31, 500, logEdges(), ParserGarbageTest::log, lines -> {
      String text = String.join("\n", lines);
      ParseResult r;
      try {
        r = new BenchmarkLogReader(8).parse("g.log", text);
      } catch (io.meshplan.util.InputException e) {
        // Only a JSON log that says two things (a key twice, more after the document) is
        // refused outright, in one line naming the log.
        assertThat(e.getMessage()).startsWith("g.log: not valid nccl-tests JSON (line ")
            .doesNotContain("\n");
        return;
      }
      int count = Math.max(1, text.split("\r?\n|\r", -1).length);
      assertThat(r.warnings()).allSatisfy(w -> {
        assertThat(w.file()).isEqualTo("g.log");
        assertThat(w.line()).isBetween(1, count);
      });
      assertThat(r.points()).allSatisfy(p -> assertThat(p.line()).isBetween(1, count));
    });
  }

  @Test
  void arbitraryUnicodeNeverThrows() {
    Cases.check(37, 300, STRING_EDGES, g -> g.anyString(255), text -> {
      ParseResult r = new BenchmarkLogReader(4).parse("u.log", text);
      assertThat(r).isNotNull();
    });
  }
}
