package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import org.junit.jupiter.api.Test;

class OtherParsersTest {
  @Test
  void alpaLinesFromSeed000() {
    // 4 nodes x 8 A100: GPUs per node 8.
    ParseResult r = Fixtures.read("alpa_profile_communication_4x8_a100.txt", 8);
    assertThat(r.warnings()).isEmpty();
    // 7 AllReduce + 8 SendRecv lines.
    assertThat(r.points()).hasSize(15);
    MeasuredPoint p = r.points().stream()
        .filter(x -> x.collective() == Collective.ALL_REDUCE && x.gpus() == 4 && x.groups() == 2
            && x.seconds() == 0.01406)
        .findFirst().orElseThrow();
    // "[[0, 1, 2, 3], [4, 5, 6, 7]]  Bytes: 2.00000 GB  Time: 0.01406 s  Bandwidth: 213.31 GB/s"
    // Alpa's GB is 2^30: bytes = 2 * 2^30 = 2147483648.
    assertThat(p.bytes()).isEqualTo(2147483648L);
    assertThat(p.level()).isEqualTo(LinkLevel.INTRA_NODE);
    // busbw = 2^31 / 0.01406 * 2*3/4 = 229.10e9 B/s; Alpa printed 213.31 GiB/s = 229.04e9 B/s.
    assertThat(p.busbw()).isCloseTo(213.31 * (1L << 30), within(0.001 * p.busbw()));
    MeasuredPoint cross = r.points().stream()
        .filter(x -> x.collective() == Collective.SEND_RECV && x.groups() == 1 && x.nodes() == 2)
        .findFirst().orElseThrow();
    // [[0, 31]]: device 0 on node 0, device 31 on node 31/8 = 3.
    assertThat(cross.gpus()).isEqualTo(2);
    assertThat(cross.level()).isEqualTo(LinkLevel.INTER_NODE);
    // Alpa printed 12.54 GiB/s = 2^31 / 0.15949 / 2^30.
    assertThat(cross.busbw() / (1L << 30)).isCloseTo(12.54, within(0.01));
  }

  @Test
  void alpaLineWithBrokenGroupsWarns() {
    String log = "AllReduce: [[0, 1], [2]]\tBytes: 2.00000 GB\tTime: 0.01 s\tBandwidth: 1.00 GB/s\n"
        + "AllReduce: [[0, 1]]\tBytes: 2.00000 GB\tTime: 0.00000 s\tBandwidth: 1.00 GB/s\n"
        + "AllReduce: [[0, 1]]\tBytes: 2.00000 GB\tTime: 0.01000 s\tBandwidth: 214.75 GB/s\n";
    ParseResult r = new BenchmarkLogReader(8).parse("alpa.txt", log);
    assertThat(r.points()).hasSize(1);
    assertThat(r.warnings()).extracting(ParseWarning::line).containsExactly(1, 2);
  }

  @Test
  void htmlTableOfSeed002() {
    ParseResult r = Fixtures.read("runai_rdma_allreduce_table.md", 8);
    // GPUs 2, 4, 8, 16, 32; the "RDMA" pair only.
    assertThat(r.points()).extracting(MeasuredPoint::gpus).containsExactly(2, 4, 8, 16, 32);
    assertThat(r.points()).allSatisfy(p -> assertThat(p.sized()).isFalse());
    MeasuredPoint p16 = r.points().get(3);
    // "(In Gbps)": 122.3 Gbps = 122.3e9 / 8 = 15.2875e9 bytes/s.
    assertThat(p16.busbw()).isCloseTo(15.2875e9, within(1.0));
    assertThat(p16.level()).isEqualTo(LinkLevel.INTER_NODE);
    assertThat(r.points().get(2).level()).isEqualTo(LinkLevel.INTRA_NODE);
    assertThat(r.warnings()).singleElement()
        .satisfies(w -> assertThat(w.message()).contains("only the first"));
  }

  @Test
  void allReduceBenchMarkdownTable() {
    ParseResult r = Fixtures.read("all_reduce_bench_4node.md", 8);
    assertThat(r.warnings()).isEmpty();
    // 32KiB .. 16GiB: 20 rows, 32 ranks from "over 32 ranks".
    assertThat(r.points()).hasSize(20);
    MeasuredPoint p = r.points().get(0);
    assertThat(p.gpus()).isEqualTo(32);
    assertThat(p.bytes()).isEqualTo(32768);
    // time = 32768 B / 0.48e9 B/s = 68.27 us.
    assertThat(p.seconds()).isCloseTo(32768 / 0.48e9, within(1e-12));
    assertThat(p.level()).isEqualTo(LinkLevel.INTER_NODE);
  }

  @Test
  void oldAllReduceBenchUsedBinaryGigabytes() {
    String log = "The average bandwidth of all_reduce over 2 ranks (5 warmups / 20 trials):\n\n"
        + "| payload |    busbw   |    algbw   |\n"
        + "| ------: | ---------: | ---------: |\n"
        + "|    1GiB |   1.00GBps |   1.00GBps |\n"
        + "Legend: 1KB = 2**10Bytes, 1MB = 2**20Bytes, 1GB = 2**30Bytes. 1Bps = 1Bytes per second\n";
    ParseResult r = new BenchmarkLogReader(8).parse("old.md", log);
    // 1.00 "GBps" meant 2^30 bytes/s: 1 GiB takes exactly 1 s.
    assertThat(r.points().get(0).seconds()).isCloseTo(1.0, within(1e-12));
  }

  @Test
  void tableRowWithNotApplicableWarns() {
    String log = "The average bandwidth of all_reduce over 8 ranks (5 warmups / 20 trials):\n"
        + "| payload |    busbw   |    algbw   |\n"
        + "| ------: | ---------: | ---------: |\n"
        + "|   32KiB |        N/A |        N/A |\n"
        + "|   64KiB |  -1.61GBps |   0.92GBps |\n"
        + "|  128KiB |   3.05GBps |   1.74GBps |\n";
    ParseResult r = new BenchmarkLogReader(8).parse("t.md", log);
    assertThat(r.points()).hasSize(1);
    assertThat(r.warnings()).extracting(ParseWarning::line).containsExactly(4, 5);
  }
}
