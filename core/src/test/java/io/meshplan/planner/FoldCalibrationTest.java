package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.calibrate.ComputeScale;
import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.cluster.Architecture;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FoldCalibrationTest {
  /** Small public runs of three Hopper folds: one GPU node each, fast to simulate. */
  private static List<PublicRun> small() {
    return PublicFolds.all().stream().filter(r -> r.cluster().gpuCount() <= 48
        && r.cluster().gpu().architecture() == Architecture.HOPPER
        && !r.model().arch().moe().routed()).toList();
  }

  /** A run whose published figure is what meshplan predicts at a compute scale. */
  private static PublicRun measuredAt(PublicRun r, double scale, double noise) {
    Profile p = new Profile(Profile.VERSION, "", List.of())
        .withCompute(r.cluster().gpu().architecture(), new ComputeScale(scale, 1));
    double figure = r.predicted(r.simulate(Optional.of(p))) * noise;
    return new PublicRun(r.fold(), r.set(), r.name(), r.model(), r.cluster(), r.config(),
        r.dtype(), r.attention(), r.kernel(), r.overlaps(), figure, r.figure());
  }

  @Test
  void runsMeasuredAtAKnownScaleGiveThatScaleInSampleAndOutOfSample() {
    List<PublicRun> runs = new ArrayList<>();
    for (PublicRun r : small()) {
      runs.add(measuredAt(r, 0.75, 1));
    }
    assertThat(runs.stream().map(PublicRun::fold).distinct().count()).isGreaterThanOrEqualTo(2);
    FoldCalibration.Result res = new FoldCalibration(runs).run();
    ComputeScale c = res.profile().compute().get("hopper");
    // Every run is exactly the model at 0.75: the fit finds it to the rounding of 4 digits,
    // and the fold left out is predicted as well by the others.
    assertThat(c.scale()).isCloseTo(0.75, within(2e-4));
    assertThat(c.kernelLevel()).isFalse();
    for (FoldCalibration.Scored s : res.rows()) {
      assertThat(Math.abs(s.error(s.leaveOut()))).as(s.run().name()).isLessThan(1e-3);
      assertThat(Math.abs(s.error(s.kernel()))).as(s.run().name()).isGreaterThan(0.05);
    }
  }

  @Test
  void aFoldNeverScoresItself() {
    // Seeded noise on every run; then one fold's published figures are changed: its own
    // leave-one-stack-out predictions do not move, while the in-sample fit does.
    SplittableRandom rnd = new SplittableRandom(38);
    List<PublicRun> runs = new ArrayList<>();
    for (PublicRun r : small()) {
      runs.add(measuredAt(r, 0.8, 0.9 + 0.2 * rnd.nextDouble()));
    }
    String fold = runs.get(0).fold();
    List<PublicRun> changed = runs.stream().map(r -> !r.fold().equals(fold) ? r
        : new PublicRun(r.fold(), r.set(), r.name(), r.model(), r.cluster(), r.config(),
            r.dtype(), r.attention(), r.kernel(), r.overlaps(), r.measured() * 0.7,
            r.figure())).toList();
    FoldCalibration.Result a = new FoldCalibration(runs).run();
    FoldCalibration.Result b = new FoldCalibration(changed).run();
    for (int i = 0; i < runs.size(); i++) {
      if (runs.get(i).fold().equals(fold)) {
        assertThat(b.rows().get(i).leaveOut()).isEqualTo(a.rows().get(i).leaveOut());
      }
    }
    assertThat(b.profile().compute().get("hopper").scale())
        .isNotEqualTo(a.profile().compute().get("hopper").scale());
  }

  @Test
  void theShippedPricesAreWhatCalibrateWritesFromThePublicFolds() {
    // meshplan calibrate --train --folds public --out public-prices.yaml wrote the resource.
    Profile fitted = new FoldCalibration(PublicFolds.all()).run().profile();
    assertThat(ProfileFiles.format(Path.of(PublicPrices.RESOURCE), fitted))
        .isEqualTo(ProfileFiles.format(Path.of(PublicPrices.RESOURCE), PublicPrices.shipped()));
    assertThat(PublicPrices.shipped().compute()).containsKeys("hopper", "ampere");
  }

  @Test
  void anArchitectureWithOneStacksRunsKeepsKernelLevelPricesAndAKernelLevelBand() {
    // CDNA 3's 4 runs are all one stack's (fold mlperf, AMD's MLPerf code on ROCm): no second
    // stack can check a factor fitted on them, so none ships, and the band comes from the
    // kernel-level residuals.
    List<PublicRun> cdna3 = PublicFolds.all().stream()
        .filter(r -> r.cluster().gpu().architecture() == Architecture.CDNA3).toList();
    assertThat(cdna3).hasSize(4).allMatch(r -> r.fold().equals("mlperf"));
    ComputeScale c = PublicPrices.shipped().compute().get("cdna3");
    assertThat(c.scale()).isEqualTo(1.0);
    assertThat(c.folds()).containsExactly("mlperf");
    assertThat(c.errorBand()).hasValueSatisfying(b -> assertThat(b.basis())
        .isEqualTo(io.meshplan.calibrate.ErrorBand.KERNEL_LEVEL));
    assertThat(PublicPrices.words(cdna3.get(0).cluster().gpu(), c))
        .contains("checked on 4 public runs, 1 stack)");
  }

  @Test
  void blackwellsTwoStacksScoreEachOtherAndKeepKernelLevelPrices() {
    // Blackwell's 54 runs are two stacks': Megatron-Bridge's 33 (fold nemo) and NVIDIA's MLPerf
    // code's 21 (fold mlperf-nvidia: 7 Llama 2 70B LoRA rows, 14 Llama 3.1 pre-training rows). A
    // factor fitted on either predicts the other worse than the kernel-level prices do, so none
    // ships; each run's band residual is scored without its fold.
    List<PublicRun> blackwell = PublicFolds.all().stream()
        .filter(r -> r.cluster().gpu().architecture() == Architecture.BLACKWELL).toList();
    assertThat(blackwell).hasSize(54);
    assertThat(blackwell.stream().filter(r -> r.fold().equals("mlperf-nvidia"))).hasSize(21);
    ComputeScale c = PublicPrices.shipped().compute().get("blackwell");
    assertThat(c.scale()).isEqualTo(1.0);
    assertThat(c.folds()).containsExactly("mlperf-nvidia", "nemo");
    assertThat(c.errorBand()).hasValueSatisfying(b -> assertThat(b.basis())
        .isNotEqualTo(io.meshplan.calibrate.ErrorBand.KERNEL_LEVEL));
    assertThat(PublicPrices.words(blackwell.get(0).cluster().gpu(), c))
        .contains("checked on 54 public runs, 2 stacks)");
  }
}
