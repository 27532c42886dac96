package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The nearest configuration made to fit: the writer's own when it fits, else the first of the
 * memory-saving variants (ZeRO-1, full recomputation, both, ZeRO-3, ZeRO-3 with full
 * recomputation) that the writer expresses and that fits, else the writer's, said not to fit.
 * The predictor here is a table of peaks by (ZeRO stage, full recomputation or not), so each
 * choice can be stated by hand.
 */
class FittingNearestTest {
  private static final FrameworkWriter MEGATRON = Exporter.writer(ExportTarget.MEGATRON);
  private static final FrameworkWriter DEEPSPEED = Exporter.writer(ExportTarget.DEEPSPEED);

  /** tp 8 x pp 4 x dp 32 of Plans.LLAMA70B, selective recomputation, no ZeRO. */
  private static final ExportInput NEAREST = Plans.input(1, Recompute.SELECTIVE, true, 0);

  /** The same layout without sequence parallelism, which DeepSpeed's pipeline engine runs. */
  private static final ExportInput PIPELINED = Plans.input(1, Recompute.SELECTIVE, false, 0);

  /** Peaks in GB by ZeRO stage (rows 0 to 3) and recomputation (column 0 as given, 1 full). */
  private static CostPredictor table(double[][] gb) {
    return in -> Optional.of(new PipelinePlan.Prediction(1.0, 1.0, 1.0, 0.1,
        gb[in.config().zeroStage()][in.config().recompute() == Recompute.FULL ? 1 : 0] * 1e9));
  }

  private static final double[][] PEAKS = {{100, 60}, {70, 40}, {65, 35}, {50, 30}};

  @Test
  void theWritersConfigurationIsKeptWhenItFits() {
    FittingNearest f = FittingNearest.of(MEGATRON, NEAREST, table(PEAKS), 100e9);
    assertThat(f.input()).isEqualTo(NEAREST);
    assertThat(f.change()).isEmpty();
    assertThat(f.fits()).isTrue();
    assertThat(f.prediction().orElseThrow().peakMemoryBytesPerGpu()).isEqualTo(100e9);
  }

  @Test
  void theLeastChangeThatFitsIsChosen() {
    // 100 GB as given; ZeRO-1 70 GB does not fit 65 GB, full recomputation's 60 GB does.
    FittingNearest f = FittingNearest.of(MEGATRON, NEAREST, table(PEAKS), 65e9);
    assertThat(f.change()).contains("full recomputation");
    assertThat(f.input().config().recompute()).isEqualTo(Recompute.FULL);
    assertThat(f.input().config().zeroStage()).isZero();
    assertThat(f.fits()).isTrue();
    // At 70 GB ZeRO-1 alone is enough and comes first.
    FittingNearest z = FittingNearest.of(MEGATRON, NEAREST, table(PEAKS), 70e9);
    assertThat(z.change()).contains("the optimizer state sharded (ZeRO stage 1)");
    assertThat(z.input().config().recompute()).isEqualTo(Recompute.SELECTIVE);
  }

  @Test
  void recomputingSomeLayersIsNotFullRecomputation() {
    // Full recomputation of the first 3 layers of each chunk keeps the other layers'
    // activations. The predictor prices every layer recomputed at 40 GB and anything else at 60
    // GB: at 50 GB only the variant that recomputes every layer fits, and it is offered.
    ExportInput partial = NEAREST.withConfig(NEAREST.config().withRecompute(Recompute.FULL)
        .withRecomputeLayers(3));
    assertThat(MEGATRON.missing(partial)).isEmpty();
    CostPredictor cost = in -> Optional.of(new PipelinePlan.Prediction(1.0, 1.0, 1.0, 0.1,
        (in.config().recompute() == Recompute.FULL && in.config().recomputeLayers() == 0 ? 40
            : 60) * 1e9));
    FittingNearest f = FittingNearest.of(MEGATRON, partial, cost, 50e9);
    assertThat(f.fits()).isTrue();
    assertThat(f.change()).contains("full recomputation");
    assertThat(f.input().config().recomputeLayers()).isZero();
    assertThat(f.input().config().zeroStage()).isZero();
  }

  @Test
  void aVariantTheWriterCannotExpressIsPassedOver() {
    // DeepSpeed's pipeline engine takes ZeRO stages 0 and 1 only: at 33 GB only ZeRO-3 with full
    // recomputation (30 GB) would fit, so nothing is changed and the writer's configuration is
    // said not to fit.
    assertThat(DEEPSPEED.missing(PIPELINED)).isEmpty();
    assertThat(DEEPSPEED.missing(PIPELINED.withConfig(PIPELINED.config().withZeroStage(3))))
        .isPresent();
    FittingNearest d = FittingNearest.of(DEEPSPEED, PIPELINED, table(PEAKS), 33e9);
    assertThat(d.fits()).isFalse();
    assertThat(d.change()).isEmpty();
    assertThat(d.input()).isEqualTo(PIPELINED);
    assertThat(d.prediction().orElseThrow().peakMemoryBytesPerGpu()).isEqualTo(100e9);
    // Megatron-LM writes ZeRO-3 (Megatron-FSDP), so the same table fits there.
    FittingNearest m = FittingNearest.of(MEGATRON, NEAREST, table(PEAKS), 33e9);
    assertThat(m.change()).contains("the weights, gradients and optimizer state sharded (ZeRO "
        + "stage 3) and full recomputation");
    assertThat(m.fits()).isTrue();
  }

  @Test
  void withoutAPredictionNothingIsClaimed() {
    FittingNearest f = FittingNearest.of(MEGATRON, NEAREST, in -> Optional.empty(), 1e9);
    assertThat(f.input()).isEqualTo(NEAREST);
    assertThat(f.prediction()).isEmpty();
    assertThat(f.fits()).isFalse();
  }

  /**
   * Seeded random peak tables and capacities, against the documented order enumerated here by
   * hand: the choice is the first candidate the writer expresses whose peak fits.
   */
  @Test
  void randomTablesAgreeWithTheDocumentedOrder() {
    Random rnd = new Random(20261130);
    for (FrameworkWriter w : List.of(MEGATRON, DEEPSPEED)) {
      ExportInput base = w == DEEPSPEED ? PIPELINED : NEAREST;
      assertThat(w.missing(base)).isEmpty();
      for (int i = 0; i < 200; i++) {
        double[][] gb = new double[4][2];
        for (double[] row : gb) {
          row[0] = 1 + rnd.nextInt(100);
          row[1] = 1 + rnd.nextInt(100);
        }
        double capacity = (1 + rnd.nextInt(100)) * 1e9;
        FittingNearest f = FittingNearest.of(w, base, table(gb), capacity);
        // The order of the class comment: (zero, full) pairs.
        int[][] order = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {3, 0}, {3, 1}};
        List<int[]> expressed = new ArrayList<>();
        for (int[] o : order) {
          ExportInput in = base.withConfig(base.config().withZeroStage(o[0])
              .withRecompute(o[1] == 1 ? Recompute.FULL : Recompute.SELECTIVE));
          if (o[0] == 0 && o[1] == 0 || w.missing(in).isEmpty()) {
            expressed.add(o);
          }
        }
        int[] chosen = null;
        for (int[] o : expressed) {
          if (gb[o[0]][o[1]] * 1e9 <= capacity) {
            chosen = o;
            break;
          }
        }
        if (chosen == null) {
          assertThat(f.fits()).isFalse();
          assertThat(f.input()).isEqualTo(base);
        } else {
          assertThat(f.fits()).isTrue();
          assertThat(f.input().config().zeroStage()).isEqualTo(chosen[0]);
          assertThat(f.input().config().recompute() == Recompute.FULL).isEqualTo(chosen[1] == 1);
          assertThat(f.change().isPresent()).isEqualTo(chosen[0] != 0 || chosen[1] != 0);
        }
      }
    }
  }
}
