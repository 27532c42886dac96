package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import org.junit.jupiter.api.Test;

class NcclTestsParsersTest {
  @Test
  void singleNodeAllReduceCurrentLayout() {
    ParseResult r = Fixtures.read("all_reduce_perf_8gpu_a100.log", 8);
    // -b 8 -e 8G -f 2: 8 = 2^3 .. 2^33, so 31 rows.
    assertThat(r.points()).hasSize(31);
    assertThat(r.warnings()).isEmpty();
    MeasuredPoint first = r.points().get(0);
    // Row "8  2  float  sum  -1  10.80  0.00  0.00  0 ..." on line 19 (1 command line, then
    // version, start, nThread, "#", "Using devices", 8 ranks, "#" and 3 column header lines).
    assertThat(first.line()).isEqualTo(19);
    assertThat(first.bytes()).isEqualTo(8);
    assertThat(first.seconds()).isCloseTo(10.80e-6, within(1e-12));
    assertThat(first.collective()).isEqualTo(Collective.ALL_REDUCE);
    assertThat(first.gpus()).isEqualTo(8);
    assertThat(first.level()).isEqualTo(LinkLevel.INTRA_NODE);
    MeasuredPoint last = r.points().get(30);
    // "8589934592 ... 63588.4  135.09  236.40": time in us, bandwidths in GB/s.
    assertThat(last.bytes()).isEqualTo(8589934592L);
    assertThat(last.seconds()).isCloseTo(0.0635884, within(1e-9));
    assertThat(last.busbw()).isCloseTo(236.40e9, within(1.0));
  }

  @Test
  void twoNodeTaggedOutputCountsRanksAndHosts() {
    ParseResult r = Fixtures.read("all_reduce_perf_16gpu_2node_tagged.log", 8);
    // -b 8 -e 4G: 2^3 .. 2^32, 30 rows; 16 "#  Rank" lines on hosts dgx-a100-01 and -02.
    assertThat(r.points()).hasSize(30);
    assertThat(r.warnings()).isEmpty();
    assertThat(r.points()).allSatisfy(p -> {
      assertThat(p.gpus()).isEqualTo(16);
      assertThat(p.nodes()).isEqualTo(2);
      assertThat(p.level()).isEqualTo(LinkLevel.INTER_NODE);
    });
  }

  @Test
  void twoNodeHostsWinOverClusterGpusPerNode() {
    // Even if --cluster claimed 16 GPUs per node, the rank lines name two hosts.
    ParseResult r = Fixtures.read("all_reduce_perf_16gpu_2node_tagged.log", 16);
    assertThat(r.points().get(0).nodes()).isEqualTo(2);
  }

  @Test
  void pre213LayoutWithoutRootColumn() {
    ParseResult r = Fixtures.read("all_reduce_perf_pre213_v100.log", 8);
    // 8 .. 1 GiB = 2^3 .. 2^30: 28 rows; 12 fields per row (no root, 'error' columns).
    assertThat(r.points()).hasSize(28);
    assertThat(r.warnings()).isEmpty();
    assertThat(r.points().get(0).seconds()).isCloseTo(14.41e-6, within(1e-12));
    assertThat(r.points().get(0).gpus()).isEqualTo(8);
  }

  @Test
  void allGatherNamedByCollectiveTestStartingLine() {
    ParseResult r = Fixtures.read("all_gather_perf_8gpu_h100.log", 8);
    // -b 1K -e 8G: 2^10 .. 2^33, 24 rows.
    assertThat(r.points()).hasSize(24);
    assertThat(r.points()).allSatisfy(p -> assertThat(p.collective())
        .isEqualTo(Collective.ALL_GATHER));
  }

  @Test
  void sendRecvAcrossTwoNodes() {
    ParseResult r = Fixtures.read("sendrecv_perf_16gpu_2node.log", 8);
    assertThat(r.points()).hasSize(28);
    assertThat(r.points()).allSatisfy(p -> {
      assertThat(p.collective()).isEqualTo(Collective.SEND_RECV);
      assertThat(p.level()).isEqualTo(LinkLevel.INTER_NODE);
    });
  }

  @Test
  void jsonOutputOfReduceScatter() {
    ParseResult r = Fixtures.read("reduce_scatter_perf_16gpu.json", 8);
    // -b 1M -e 1G: 2^20 .. 2^30, 11 results; 16 devices on 2 hosts.
    assertThat(r.points()).hasSize(11);
    assertThat(r.warnings()).isEmpty();
    MeasuredPoint p = r.points().get(0);
    assertThat(p.collective()).isEqualTo(Collective.REDUCE_SCATTER);
    assertThat(p.gpus()).isEqualTo(16);
    assertThat(p.nodes()).isEqualTo(2);
    assertThat(p.bytes()).isEqualTo(1L << 20);
    // The whole document is one line.
    assertThat(p.line()).isEqualTo(1);
  }

  @Test
  void truncatedLogWarnsAndKeepsCompleteRows() {
    ParseResult r = Fixtures.read("all_reduce_perf_truncated.log", 8);
    // 19 complete rows (8 B .. 2 MiB); the 20th is cut after its algbw on line 37.
    assertThat(r.points()).hasSize(19);
    assertThat(r.warnings()).extracting(ParseWarning::toString).anySatisfy(w ->
        assertThat(w).contains("all_reduce_perf_truncated.log:37:").contains("truncated"));
    assertThat(r.warnings()).extracting(ParseWarning::message)
        .anySatisfy(w -> assertThat(w).contains("Avg bus bandwidth"));
  }

  @Test
  void notApplicableAndNegativeRowsAreSkippedWithPositions() {
    ParseResult r = Fixtures.read("all_reduce_perf_na_rows.log", 8);
    // 8 .. 256 MiB = 26 rows, minus the N/A row (32 KiB, line 30) and the negative one (line 33).
    assertThat(r.points()).hasSize(24);
    assertThat(r.warnings()).extracting(w -> w.line()).containsExactly(30, 33);
    // '#wrong' is N/A on every row (validation off) and must not cause warnings by itself.
    assertThat(r.points()).extracting(MeasuredPoint::bytes).doesNotContain(32768L, 262144L);
  }

  @Test
  void unknownToolGivesOnePositionedWarningAndNoPoints() {
    ParseResult r = Fixtures.read("ib_write_bw_unknown_tool.log", 8);
    assertThat(r.points()).isEmpty();
    assertThat(r.warnings()).hasSize(1);
    assertThat(r.warnings().get(0).toString()).endsWith("file skipped")
        .contains("ib_write_bw_unknown_tool.log:1:");
  }

  @Test
  void headerlessRowsAreReadByFieldCount() {
    String log = "# nThread 1 nGpus 4 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5"
        + " iters: 20 agg iters: 1 validation: 1 graph: 0\n"
        // 13 fields: the 2.13+ layout. algbw = 1048576 / 1e9 / 20e-6 s = 52.43 GB/s,
        // busbw = 52.43 * 2*3/4 = 78.64 GB/s.
        + "     1048576        262144     float     sum      -1    20.00   52.43   78.64       0"
        + "    20.00   52.43   78.64       0\n"
        + "# Avg bus bandwidth    : 78.64 \n";
    ParseResult r = new BenchmarkLogReader(8).parse("all_reduce_perf.log", log);
    assertThat(r.points()).hasSize(1);
    assertThat(r.points().get(0).seconds()).isCloseTo(20e-6, within(1e-12));
    // No rank lines: 1 thread x 4 GPUs assumed, with a warning saying so.
    assertThat(r.points().get(0).gpus()).isEqualTo(4);
    assertThat(r.warnings()).hasSize(1);
  }

  @Test
  void wrongRankCountIsFlaggedByTheBusFactorCheck() {
    // busbw/algbw = 1.75 = 2*7/8, but only 4 rank lines: factor 1.5 would give 78.66.
    String log = "# Collective test starting: all_reduce_perf\n"
        + "#  Rank  0 Group  0 Pid      1 on      host1 device  0 [0000:07:00] NVIDIA A100\n"
        + "#  Rank  1 Group  0 Pid      1 on      host1 device  1 [0000:0f:00] NVIDIA A100\n"
        + "#  Rank  2 Group  0 Pid      1 on      host1 device  2 [0000:47:00] NVIDIA A100\n"
        + "#  Rank  3 Group  0 Pid      1 on      host1 device  3 [0000:4e:00] NVIDIA A100\n"
        + "     1048576        262144     float     sum      -1    20.00   52.43   91.76       0"
        + "    20.00   52.43   91.76       0\n"
        + "# Avg bus bandwidth    : 91.76 \n";
    ParseResult r = new BenchmarkLogReader(8).parse("x.log", log);
    assertThat(r.points()).hasSize(1);
    assertThat(r.warnings()).singleElement().satisfies(w -> {
      assertThat(w.line()).isEqualTo(6);
      assertThat(w.message()).contains("check the rank count");
    });
  }
}
