package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/** GEMMs with FP8 operands at their measured speed in training, and GPUs without them. */
class Fp8GemmPricingTest {
  /**
   * The catalog GPUs whose architecture has FP8 tensor cores, which the refusal lists: b200,
   * h100-80gb and h200-141gb among them, and more as catalog.yaml grows.
   */
  private static final String WITH_FP8 = fp8Gpus();

  private static String fp8Gpus() {
    java.util.List<String> names = io.meshplan.cluster.GpuCatalog.names().stream()
        .filter(n -> io.meshplan.cluster.GpuCatalog.find(n).orElseThrow().architecture()
            .prices(io.meshplan.cluster.Precision.FP8)).toList();
    // CDNA 3 prices FP8 from hipBLASLt's measured GEMMs; CDNA 4 (mi355x) is not priced at all.
    org.assertj.core.api.Assertions.assertThat(names).contains("b200", "h100-80gb",
        "h200-141gb", "mi300x", "mi325x").doesNotContain("v100-32gb", "a100-80gb", "mi355x");
    return String.join(", ", names);
  }

  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  /**
   * H100 SXM, 1 TFLOP of GEMM, no memory traffic, delayed scaling (the default): FP8 at the bf16
   * GEMM's 0.8 times Transformer Engine's measured 32.014 / 18.978 = 1.68690 speed-up with the
   * casts, over the peak ratio 989.5 / 1,979 = 0.5: 0.674760 of 1,979e12 = 1.335351e15 FLOP/s,
   * with the 5 µs ramp at the FP8 peak (9.895e9 FLOPs): (1e12 + 9.895e9) / 1.335351e15 =
   * 7.56277e-4 s. bf16: (1e12 + 989.5e12 * 5e-6) / (989.5e12 * 0.8) = 1.0049475e12 / 7.916e14 =
   * 1.26951e-3 s, 1.679x the FP8 time (the measured 1.687x, less the ramp).
   */
  @Test
  void h100Fp8GemmRunsAtTheMeasuredSpeedUpOverBf16() {
    KernelTimeModel k = KernelTimeModel.of(gpu("h100-80gb"), 2);
    assertThat(k.dotCost(1e12, 0, Precision.FP8)).isCloseTo(7.56277e-4,
        org.assertj.core.data.Offset.offset(1e-9));
    assertThat(k.dotCost(1e12, 0, Precision.BF16)).isCloseTo(1.26951e-3,
        org.assertj.core.data.Offset.offset(1e-8));
    assertThat(k.dotCost(1e12, 0)).isEqualTo(k.dotCost(1e12, 0, Precision.BF16));
  }

  /** A memory-bound FP8 GEMM is still no faster than its bytes at 0.8 of 3.35 TB/s. */
  @Test
  void fp8GemmIsNeverFasterThanItsTraffic() {
    KernelTimeModel k = KernelTimeModel.of(gpu("h100-80gb"), 2);
    // 1e9 FLOPs, 2.68e9 bytes: 2.68e9 / (3.35e12 * 0.8) = 1e-3 s, above the math time.
    assertThat(k.dotCost(1e9, 2.68e9, Precision.FP8)).isCloseTo(1e-3,
        org.assertj.core.data.Offset.offset(1e-12));
  }

  @Test
  void gpusWithoutFp8TensorCoresHaveNoFp8Gemms() {
    for (String n : new String[] {"v100-32gb", "a100-80gb"}) {
      assertThat(Fp8Gemms.of(gpu(n))).as(n).isEmpty();
      KernelTimeModel k = KernelTimeModel.of(gpu(n), 2);
      assertThat(k.dotCost(1e12, 0, Precision.FP8)).isEqualTo(k.dotCost(1e12, 0));
      assertThatThrownBy(() -> Fp8Gemms.require(gpu(n))).isInstanceOf(InputException.class)
          .hasMessage("fp8 training needs FP8 tensor cores, which the " + n + " does not have;"
              + " use " + (n.startsWith("v100") ? "f16" : "bf16")
              + ", or a GPU that has them: " + WITH_FP8);
    }
    // B200: its FP8 peak, 4,500e12.
    assertThat(Fp8Gemms.of(gpu("b200")).orElseThrow().peakFlops()).isEqualTo(4500e12);
  }
}
