package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The GEMM model against measured GEMMs: OpenXLA's default GEMM performance table (the rows in
 * {@code kernels/xla_gemm_table.csv}, with their source), every {@code b x m x n x k} GEMM of
 * 10^10 FLOPs and more (108 per GPU and type). The error of a row is {@code ln(measured time /
 * modelled time)}: positive where the model is too fast.
 */
class GemmTableTest {
  /** One measured GEMM. */
  private record Row(String gpu, long b, long m, long n, long k, String dtype, double flops) {
    double work() {
      return 2.0 * b * m * n * k;
    }
  }

  private static List<Row> rows(String gpu, String dtype) throws IOException {
    List<Row> out = new ArrayList<>();
    try (InputStream in = GemmTableTest.class.getResourceAsStream("/kernels/xla_gemm_table.csv")) {
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (line.startsWith("#") || line.startsWith("gpu,")) {
          continue;
        }
        String[] f = line.split(",");
        Row row = new Row(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
            Long.parseLong(f[4]), f[5], Double.parseDouble(f[6]));
        if (row.gpu().equals(gpu) && row.dtype().equals(dtype) && row.work() >= 1e10) {
          out.add(row);
        }
      }
    }
    return out;
  }

  /** Mean error and mean absolute error of a model over rows: {bias, mae}. */
  private static double[] errors(List<Row> rows, KernelTimeModel model, boolean fp8) {
    double sum = 0;
    double abs = 0;
    for (Row r : rows) {
      double elem = fp8 ? 1 : 2;
      double bytes = r.b() * (elem * (r.m() * r.k() + r.k() * r.n()) + 2.0 * r.m() * r.n());
      double modelled = fp8 ? model.dotCost(r.work(), bytes, Precision.FP8)
          : model.dotCost(r.work(), bytes);
      double e = Math.log(r.work() / r.flops() / modelled);
      sum += e;
      abs += Math.abs(e);
    }
    return new double[] {sum / rows.size(), abs / rows.size()};
  }

  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  /**
   * H100 bf16: 0.8 of the dense peak with a 5 us ramp is within 1% on average and 6% per GEMM
   * (the table's 4,096^3 GEMM runs at 0.79 of 989.5 TFLOP/s, the model's at 0.77).
   */
  @Test
  void hopperBf16GemmsMatchTheTable() throws IOException {
    List<Row> rows = rows("h100-80gb", "bf16");
    assertThat(rows).hasSize(108);
    double[] e = errors(rows, KernelTimeModel.of(gpu("h100-80gb"), Precision.BF16), false);
    assertThat(e[0]).isBetween(-0.03, 0.03);
    assertThat(e[1]).isLessThan(0.07);
  }

  /**
   * B200 bf16 GEMMs reach 0.68 of the dense peak, not Hopper's 0.8: with 0.8 the model would be
   * 19% too fast on average; with 0.68, within 2% on average and 6% per GEMM.
   */
  @Test
  void blackwellBf16GemmsRunBelowHoppersFraction() throws IOException {
    List<Row> rows = rows("b200", "bf16");
    KernelTimeModel b200 = KernelTimeModel.of(gpu("b200"), Precision.BF16);
    assertThat(b200.gemmEfficiency()).isEqualTo(KernelTimeModel.BLACKWELL_16BIT_GEMM_EFFICIENCY);
    double[] e = errors(rows, b200, false);
    assertThat(e[0]).isBetween(-0.03, 0.03);
    assertThat(e[1]).isLessThan(0.07);
    KernelTimeModel hopperFraction = new KernelTimeModel(b200.peakFlops(), b200.hbmBandwidth(),
        KernelTimeModel.GEMM_EFFICIENCY, b200.rampSeconds(), b200.memoryEfficiency(),
        b200.attention(), b200.fp8());
    assertThat(errors(rows, hopperFraction, false)[0]).isGreaterThan(0.15);
  }

  /**
   * B200 FP8 GEMMs at 0.75 of the FP8 peak: within 10% on average, the model a little fast on
   * the smaller GEMMs, whose start-up the 5 us ramp under-counts at the FP8 rate.
   */
  @Test
  void blackwellFp8GemmsAreCloseToTheTable() throws IOException {
    // The table times the GEMM kernel alone, its operands already FP8: Fp8Gemms.EFFICIENCY, not
    // the training price, which adds the casts.
    KernelTimeModel b = KernelTimeModel.of(gpu("b200"), Precision.BF16);
    KernelTimeModel kernelAlone = new KernelTimeModel(b.peakFlops(), b.hbmBandwidth(),
        b.gemmEfficiency(), b.rampSeconds(), b.memoryEfficiency(), b.attention(),
        java.util.Optional.of(new Fp8Gemms(4500e12, Fp8Gemms.EFFICIENCY)));
    double[] e = errors(rows("b200", "fp8"), kernelAlone, true);
    assertThat(e[0]).isBetween(-0.10, 0.10);
    assertThat(e[1]).isLessThan(0.10);
  }
}
