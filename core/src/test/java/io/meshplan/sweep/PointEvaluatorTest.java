package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelFlops;
import io.meshplan.model.Presets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PointEvaluatorTest {
  private static SweepPoint point(int index, int nodes, int globalBatch) {
    return new SweepPoint(index, "opt-125m", 512, nodes, 2, "a100-40gb", "ib-hdr200",
        globalBatch, 0, false);
  }

  /**
   * Layer prices do not depend on the node count or the global batch: points planned with one
   * shared cache equal points each planned with a fresh cache.
   */
  @Test
  void sharedLayerPricesChangeNothing() {
    List<SweepPoint> points = List.of(point(0, 2, 16), point(1, 1, 32));
    PointEvaluator shared = new PointEvaluator(new LayerCostCache(), SolverOptions.defaults());
    List<PointResult> withShared = new ArrayList<>();
    List<PointResult> fresh = new ArrayList<>();
    for (SweepPoint p : points) {
      withShared.add(shared.evaluate(p, false, pct -> { }));
      fresh.add(new PointEvaluator(new LayerCostCache(), SolverOptions.defaults())
          .evaluate(p, false, pct -> { }));
    }
    assertThat(withShared).isEqualTo(fresh);
    assertThat(withShared).allSatisfy(r -> assertThat(r.status()).isEqualTo(PointStatus.OK));
  }

  @Test
  void lowerBoundIsModelFlopsAtPeakAndBelowThePlan() {
    SweepPoint p = point(0, 2, 16);
    // opt-125m trains in bf16 on A100 (dense peak 312 TFLOP/s): model FLOPs of 16 x 512 tokens
    // over 4 GPUs at that peak.
    double flops = ModelFlops.trainingFlopsPerToken(Presets.get("opt-125m"), 512) * 16 * 512;
    assertThat(PointEvaluator.lowerBoundSeconds(p)).isEqualTo(flops / (4 * 312e12));
    PointResult r = new PointEvaluator(new LayerCostCache(), SolverOptions.defaults())
        .evaluate(p, false, pct -> { });
    assertThat(PointEvaluator.lowerBoundSeconds(p)).isLessThan(r.iterationSeconds());
  }

  @Test
  void aPointPastItsLimitIsTimedOutWithItsBound() {
    // Its layer solves alone take seconds.
    SweepPoint p = new SweepPoint(3, "opt-125m", 2048, 16, 8, "h100-80gb", "ib-ndr400", 1024,
        0, false);
    PointResult r = new PointTask(false, 0.001).apply(p);
    assertThat(r.status()).isEqualTo(PointStatus.TIMED_OUT);
    assertThat(r.point()).isEqualTo(p);
    assertThat(r.lowerBoundSeconds()).isEqualTo(PointEvaluator.lowerBoundSeconds(p));
    assertThat(r.message()).startsWith("no result within 0.001 s; no plan can beat ");
  }

  @Test
  void aMicrobatchCountThatDoesNotDivideIsRejected() {
    SweepPoint p = new SweepPoint(0, "opt-125m", 512, 1, 2, "a100-40gb", "ib-hdr200", 16, 3,
        false);
    PointResult r = new PointEvaluator(new LayerCostCache(), SolverOptions.defaults())
        .evaluate(p, false, pct -> { });
    assertThat(r.status()).isEqualTo(PointStatus.REJECTED);
    assertThat(r.message()).isEqualTo("the global batch 16 is not a multiple of 3 microbatches");
  }
}
