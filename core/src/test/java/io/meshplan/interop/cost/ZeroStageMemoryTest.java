package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.sim.StageCost;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ZeRO stages 0 to 3 side by side on one small stage: 4 data-parallel replicas, bf16 weights, one
 * layer of P = 1e6 parameters. Axis 0 costs 1e-9 s/byte, HBM 1e12 B/s.
 */
class ZeroStageMemoryTest {
  private static final double P = 1e6;
  private static final StageCostBuilder BUILDER = new StageCostBuilder(new AlphaBetaCommModel(
      LogicalMesh.of(4, 1), new double[] {0, 0}, new double[] {1e-9, 0}), 1e12, 2, false);

  private static StageCost stage(int zero) {
    LayerCost l = LayerCost.builder().forwardSeconds(0.001).backwardSeconds(0.002)
        .parameters(P).gradientParameters(P).savedActivationBytes(1e6).temporaryBytes(2e6)
        .boundaryBytes(4e5).modelFlops(1e12).hardwareFlops(1e12).build();
    return BUILDER.build(List.of(l), 4, 1, zero, false);
  }

  @Test
  void memoryPerGpuUnderEachStage() {
    // Whole: weights 2P = 2e6 B, fp32 gradients 4P = 4e6 B, master + moments 12P = 12e6 B.
    double[][] expected = {
        // ZeRO-0: nothing sharded.
        {2e6, 4e6, 12e6, 2e6},
        // ZeRO-1: optimizer state / 4.
        {2e6, 4e6, 3e6, 2e6},
        // ZeRO-2: gradients / 4 and optimizer state / 4; the 16-bit bucket of 5e8 elements,
        // 2 * 5e8 = 1e9 B, beside the layer's 2e6 B of temporaries.
        {2e6, 1e6, 3e6, 1e9 + 2e6},
        // ZeRO-3: everything / 4; one layer's gathered weights (2e6 B) beside the temporaries.
        {5e5, 1e6, 3e6, 4e6}};
    for (int z = 0; z <= 3; z++) {
      var m = stage(z).memory();
      assertThat(new double[] {m.weightsBytes(), m.gradientsBytes(), m.optimizerStateBytes(),
          m.temporaryBytes()}).as("ZeRO-" + z).containsExactly(expected[z]);
    }
  }

  /**
   * Gradients reduced in bf16 ({@code --grad-reduce-in-bf16}): every reduction moves 2P = 2e6
   * gradient bytes instead of 4e6, and under ZeRO-0 and 1 (Megatron-LM's buffer) the kept
   * gradients are bf16 too, 2e6 B; under ZeRO-2 and 3 the kept shard stays fp32, 1e6 B.
   */
  @Test
  void bf16GradientReductionHalvesTheBytesReduced() {
    StageCostBuilder b = new StageCostBuilder(new AlphaBetaCommModel(LogicalMesh.of(4, 1),
        new double[] {0, 0}, new double[] {1e-9, 0}), 1e12, 2,
        io.meshplan.model.Overlaps.NONE.withBf16GradReduce(true));
    LayerCost l = LayerCost.builder().forwardSeconds(0.001).backwardSeconds(0.002)
        .parameters(P).gradientParameters(P).savedActivationBytes(1e6).temporaryBytes(2e6)
        .boundaryBytes(4e5).modelFlops(1e12).hardwareFlops(1e12).build();
    double[] kept = {2e6, 2e6, 1e6, 1e6};
    for (int z = 0; z <= 3; z++) {
      assertThat(b.build(List.of(l), 4, 1, z, false).memory().gradientsBytes()).as("ZeRO-" + z)
          .isEqualTo(kept[z]);
    }
    // ZeRO-0: an all-reduce of 2e6 B over 4 sends 2 * (3/4) * 2e6 = 3e6 B, 0.003 s.
    StageCost z0 = b.build(List.of(l), 4, 1, 0, false);
    assertThat(z0.commBytes().dataPerIteration()).isCloseTo(3e6, within(1e-6));
    assertThat(z0.gradSyncSeconds()).isCloseTo(0.003, within(1e-12));
    // ZeRO-1: reduce-scatter (3/4) * 2e6 = 1.5e6 B plus the weight gather's 1.5e6 B, where fp32
    // gradients send 3e6 + 1.5e6.
    assertThat(b.build(List.of(l), 4, 1, 1, false).commBytes().dataPerIteration())
        .isCloseTo(3e6, within(1e-6));
    assertThat(stage(1).commBytes().dataPerIteration()).isCloseTo(4.5e6, within(1e-6));
    // ZeRO-3 per microbatch: two weight gathers of 1.5e6 B and a reduce-scatter of 1.5e6 B.
    assertThat(b.build(List.of(l), 4, 1, 3, false).commBytes().dataPerMicrobatch())
        .isCloseTo(4.5e6, within(1e-6));
  }

  @Test
  void zeroTwoReduceScattersEveryMicrobatchAndGathersWeightsOnce() {
    StageCost c = stage(2);
    // Reduce-scatter of 4e6 gradient bytes over 4: (3/4) * 4e6 = 3e6 B per GPU per microbatch,
    // 3e6 * 1e-9 = 0.003 s in every backward.
    assertThat(c.commBytes().dataPerMicrobatch()).isCloseTo(3e6, within(1e-6));
    assertThat(c.backwardSeconds()).isCloseTo(0.002 + 0.003, within(1e-12));
    assertThat(c.forwardSeconds()).isCloseTo(0.001, within(1e-12));
    // Once per iteration: the updated weights, (3/4) * 2e6 = 1.5e6 B, 0.0015 s; no separate
    // gradient reduction at the end.
    assertThat(c.commBytes().dataPerIteration()).isCloseTo(1.5e6, within(1e-6));
    assertThat(c.paramGatherSeconds()).isCloseTo(0.0015, within(1e-12));
    assertThat(c.gradSyncSeconds()).isZero();
    // A quarter of the parameters updated: 2.5e5 * 30 B / 1e12 B/s.
    assertThat(c.optimizerSeconds()).isCloseTo(7.5e-6, within(1e-15));
    // Over 8 microbatches: 8 * 3e6 + 1.5e6 = 2.55e7 B per GPU; ZeRO-1 sends
    // (3/4) * 4e6 + 1.5e6 = 4.5e6 once, ZeRO-3 8 * (2 * 1.5e6 + 3e6) = 4.8e7.
    double[] perIteration = new double[4];
    for (int z = 1; z <= 3; z++) {
      var b = stage(z).commBytes();
      perIteration[z] = 8 * b.dataPerMicrobatch() + b.dataPerIteration();
    }
    assertThat(perIteration[1]).isCloseTo(4.5e6, within(1e-6));
    assertThat(perIteration[2]).isCloseTo(2.55e7, within(1e-6));
    assertThat(perIteration[3]).isCloseTo(4.8e7, within(1e-6));
  }
}
