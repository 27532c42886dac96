package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * For every parsed table, busbw = algbw * the collective's bus factor (2(n-1)/n for all-reduce,
 * (n-1)/n for all-gather and reduce-scatter, 1 for send/recv) within the rounding of the printed
 * columns. A wrong rank count or collective would break this: for 16 ranks all-reduce's factor is
 * 1.875, for 8 ranks 1.75, a 7% difference.
 */
class BusBandwidthConsistencyTest {
  @ParameterizedTest
  @CsvSource({
    // file, half a unit of the last printed digit of busbw and algbw (bytes/s)
    "all_reduce_perf_8gpu_a100.log, 0.005e9",
    "all_reduce_perf_16gpu_2node_tagged.log, 0.005e9",
    "all_reduce_perf_pre213_v100.log, 0.005e9",
    "all_gather_perf_8gpu_h100.log, 0.005e9",
    "sendrecv_perf_16gpu_2node.log, 0.005e9",
    "reduce_scatter_perf_16gpu.json, 0.0000005e9",
    "all_reduce_perf_na_rows.log, 0.005e9",
    "all_reduce_perf_truncated.log, 0.005e9",
    "all_reduce_bench_4node.md, 0.005e9",
    // seed 002: one decimal of Gbps = 0.05e9 / 8 bytes/s
    "runai_rdma_allreduce_table.md, 0.00625e9",
  })
  void busbwIsAlgbwTimesBusFactor(String file, double halfUnit) {
    ParseResult r = Fixtures.read(file, 8);
    assertThat(r.points()).isNotEmpty();
    for (MeasuredPoint p : r.points()) {
      double f = p.collective().busFactor(p.gpus());
      // |busbw - algbw*f| <= rounding of busbw + f * rounding of algbw
      double tol = halfUnit * (1 + f) * 1.0001;
      assertThat(Math.abs(p.busbw() - p.algbw() * f))
          .as("%s busbw %.3e algbw %.3e factor %.4f", p.where(), p.busbw(), p.algbw(), f)
          .isLessThanOrEqualTo(tol);
    }
  }
}
