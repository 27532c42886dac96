package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.FabricCatalog;
import io.meshplan.cluster.GpuCatalog;
import io.meshplan.cluster.GpuSpec;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.cluster.Precision;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * No prediction runs faster than the GPU can in the training precision: on every catalog GPU, in
 * every precision it has, for seeded random small models and Megatron-style configurations, the
 * model and hardware TFLOP/s per GPU stay at or below that precision's dense peak and the MFU at
 * or below 1; a precision the GPU lacks is refused.
 */
class PeakBoundTest {
  private static final int CASES_PER_PRECISION = 6;

  private static List<DType> precisions(GpuSpec gpu) {
    List<DType> out = new ArrayList<>();
    for (DType t : List.of(DType.F32, DType.F16, DType.BF16, Fp8Training.RECIPE)) {
      Precision p = Precision.ofTraining(t).orElseThrow();
      // Only what meshplan prices: CDNA 3 trains bf16 and f16 only, CDNA 4 nothing.
      if (gpu.peak(p).isPresent() && gpu.architecture().prices(p)) {
        out.add(t);
      }
    }
    return out;
  }

  private static ModelSpec model(Random r, DType dtype) {
    int heads = 8 << r.nextInt(2);
    int hidden = heads * (64 << r.nextInt(2));
    int seq = 256 << r.nextInt(3);
    boolean llama = r.nextBoolean();
    Architecture arch = llama ? Presets.get("llama2-7b").arch() : Architecture.megatronGpt(seq);
    return new ModelSpec("random", llama ? ModelSpec.Family.LLAMA : ModelSpec.Family.GPT,
        2 + r.nextInt(3), hidden, heads, heads, 4 * hidden, 8192, seq, 8, dtype, arch);
  }

  private static SimulationResult simulate(GpuSpec gpu, DType dtype, Random r) {
    ClusterSpec cluster = new ClusterSpec(1, 8, gpu,
        FabricCatalog.find(GpuCatalog.defaultFabric(gpu)).orElseThrow());
    ModelSpec m = model(r, dtype);
    int tp = 1 << r.nextInt(4);
    int dp = 8 / tp;
    int micro = 1 + r.nextInt(2);
    int global = dp * micro * (1 + r.nextInt(4));
    Recompute rc = Recompute.values()[r.nextInt(Recompute.values().length)];
    Attention att = r.nextBoolean() ? TrainingJob.defaultAttention(cluster) : Attention.UNFUSED;
    TrainingJob job = TrainingJob.of(m, cluster).withDtype(dtype).withGlobalBatch(global)
        .withAttention(att);
    PricedJob priced = Planner.price(job, Pricing.catalog(), PlannerOptions.defaults());
    ParallelConfig c = new ParallelConfig(tp, 1, dp, 1, micro, global, rc, tp > 1 && r.nextBoolean(),
        r.nextInt(4));
    return Planner.simulate(priced, c, false).orElseThrow()
        .simulation();
  }

  @Test
  void noFigureExceedsThePrecisionsPeakOnAnyGpu() {
    Random r = new Random(23);
    int checked = 0;
    int checkedShipped = 0;
    int expected = 0;
    List<String> shipped = List.of("v100-16gb", "v100-32gb", "a100-40gb", "a100-80gb",
        "h100-80gb", "h200-141gb", "b200");
    for (String name : GpuCatalog.names()) {
      GpuSpec gpu = GpuCatalog.find(name).orElseThrow();
      for (DType t : precisions(gpu)) {
        double peakTflops = gpu.peak(Precision.ofTraining(t).orElseThrow()).orElseThrow() / 1e12;
        for (int i = 0; i < CASES_PER_PRECISION; i++) {
          SimulationResult s = simulate(gpu, t, r);
          String at = name + " " + Fp8Training.word(t) + " case " + i;
          assertThat(s.tflopsPerGpu()).as(at).isPositive().isLessThanOrEqualTo(peakTflops);
          assertThat(s.hardwareTflopsPerGpu()).as(at).isLessThanOrEqualTo(peakTflops);
          assertThat(s.mfu()).as(at).isPositive().isLessThanOrEqualTo(1.0);
          checked++;
          checkedShipped += shipped.contains(name) ? 1 : 0;
        }
      }
      expected += precisions(gpu).size() * CASES_PER_PRECISION;
    }
    // Two V100s with f32, f16; two A100s adding bf16; H100, H200, B200 adding fp8:
    // (2 * 2 + 2 * 3 + 3 * 4) * 6 = 22 * 6; a GPU catalog.yaml adds adds its own precisions.
    assertThat(checkedShipped).isEqualTo(22 * CASES_PER_PRECISION);
    assertThat(checked).isEqualTo(expected);
  }

  @Test
  void fp32PricesAtTheFp32PeakNotTf32() {
    // f32 matrix products are IEEE fp32 (PyTorch's allow_tf32 is off by default): V100 15.7,
    // A100 19.5, H100 67 TFLOP/s, never the TF32 (156, 494.5) or FP16 (125) tensor-core peak.
    assertThat(KernelTimeModel.densePeak(GpuCatalog.find("v100-32gb").orElseThrow(), 4))
        .isEqualTo(15.7e12);
    assertThat(KernelTimeModel.densePeak(GpuCatalog.find("a100-80gb").orElseThrow(), 4))
        .isEqualTo(19.5e12);
    assertThat(KernelTimeModel.densePeak(GpuCatalog.find("h100-80gb").orElseThrow(), 4))
        .isEqualTo(67e12);
    assertThat(KernelTimeModel.densePeak(GpuCatalog.find("a100-80gb").orElseThrow(), 2))
        .isEqualTo(312e12);
    // An HLO module's f32 dots are XLA's: TF32 where the GPU has it, FP32 on Volta.
    assertThat(KernelTimeModel.xlaPrecision(GpuCatalog.find("a100-80gb").orElseThrow(), 4))
        .isEqualTo(Precision.TF32);
    assertThat(KernelTimeModel.xlaPrecision(GpuCatalog.find("v100-32gb").orElseThrow(), 4))
        .isEqualTo(Precision.FP32);
    assertThat(KernelTimeModel.xlaPrecision(GpuCatalog.find("v100-32gb").orElseThrow(), 2))
        .isEqualTo(Precision.FP16);
  }

  @Test
  void catalogListsTheDatasheetPeaks() {
    GpuSpec v100 = GpuCatalog.find("v100-16gb").orElseThrow();
    assertThat(v100.peakFlops()).containsOnlyKeys(Precision.FP32, Precision.FP16);
    assertThat(v100.peak(Precision.FP16)).contains(125e12);
    GpuSpec a100 = GpuCatalog.find("a100-40gb").orElseThrow();
    assertThat(a100.peakFlops()).containsOnlyKeys(Precision.FP32, Precision.TF32, Precision.BF16,
        Precision.FP16);
    assertThat(a100.peak(Precision.TF32)).contains(156e12);
    GpuSpec h100 = GpuCatalog.find("h100-80gb").orElseThrow();
    assertThat(h100.peak(Precision.BF16)).contains(989.5e12);
    assertThat(h100.peak(Precision.FP8)).contains(1979e12);
    assertThat(h100.peak(Precision.TF32)).contains(494.5e12);
  }

  @Test
  void aPrecisionTheGpuLacksIsRefused() {
    GpuSpec v100 = GpuCatalog.find("v100-32gb").orElseThrow();
    assertThatThrownBy(() -> v100.requireTraining(DType.BF16)).isInstanceOf(InputException.class)
        .hasMessage("the training precision bf16 needs BF16 math, which the v100-32gb does not"
            + " have; it trains in f32 (15.7 TFLOP/s), f16 (125.0 TFLOP/s)");
    assertThatThrownBy(() -> GpuCatalog.find("a100-80gb").orElseThrow()
        .requireTraining(Fp8Training.RECIPE)).isInstanceOf(InputException.class)
        .hasMessageContaining("fp8 needs FP8 math, which the a100-80gb does not have");
    GpuCatalog.find("b200").orElseThrow().requireTraining(Fp8Training.RECIPE);
  }
}
