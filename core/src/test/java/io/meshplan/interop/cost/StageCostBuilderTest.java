package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.sim.StageCost;
import java.util.List;
import org.junit.jupiter.api.Test;

class StageCostBuilderTest {
  // Axis 0 (data parallel, 4 replicas): alpha 0, beta 1e-9 s/byte; axis 1 (tp 2) free.
  private static final AlphaBetaCommModel COMM = new AlphaBetaCommModel(LogicalMesh.of(4, 2),
      new double[] {0, 0}, new double[] {1e-9, 0});
  // HBM 1e12 B/s.
  private static final StageCostBuilder BUILDER = new StageCostBuilder(COMM, 1e12, 2, true);

  private static LayerCost layer(double params) {
    return LayerCost.builder().forwardSeconds(0.001).backwardSeconds(0.002)
        .recomputeSeconds(0.0005).tensorCommSeconds(0.0001).forwardCommSeconds(0.00005)
        .parameters(params).gradientParameters(params)
        .savedActivationBytes(1e6).temporaryBytes(2e6).inputBytes(1e5).boundaryBytes(4e5)
        .modelFlops(1e12).hardwareFlops(1.2e12)
        .tensorCommBytes(3e6).forwardCommBytes(1e6).build();
  }

  @Test
  void zeroZeroKeepsEighteenBytesPerParameterAndAllReducesGradients() {
    StageCost c = BUILDER.build(List.of(layer(1e6), layer(1e6)), 4, 2, 0, false);
    // 2e6 parameters per GPU: weights 2 B, gradients 4 B, master+m+v 12 B.
    assertThat(c.memory().weightsBytes()).isEqualTo(4e6);
    assertThat(c.memory().gradientsBytes()).isEqualTo(8e6);
    assertThat(c.memory().optimizerStateBytes()).isEqualTo(24e6);
    // Saved activations add up per layer; temporaries are the largest layer's.
    assertThat(c.memory().activationBytesPerMicrobatch()).isEqualTo(2e6);
    assertThat(c.memory().temporaryBytes()).isEqualTo(2e6);
    // All-reduce of 8e6 gradient bytes on 4 devices: 2 * (3/4) * 8e6 * 1e-9 = 0.012 s.
    assertThat(c.gradSyncSeconds()).isCloseTo(0.012, within(1e-12));
    assertThat(c.paramGatherSeconds()).isZero();
    // Adam streams 30 bytes per parameter: 2e6 * 30 / 1e12 = 6e-5 s.
    assertThat(c.optimizerSeconds()).isCloseTo(6e-5, within(1e-15));
    assertThat(c.forwardSeconds()).isCloseTo(0.002, within(1e-15));
    assertThat(c.backwardSeconds()).isCloseTo(0.004, within(1e-15));
    assertThat(c.sendBytes()).isEqualTo(4e5);
  }

  @Test
  void zeroOneShardsOptimizerStateAndGathersWeights() {
    StageCost c = BUILDER.build(List.of(layer(1e6)), 4, 2, 1, true);
    // Optimizer state 12e6 / 4 replicas; gradients stay whole.
    assertThat(c.memory().optimizerStateBytes()).isEqualTo(3e6);
    assertThat(c.memory().gradientsBytes()).isEqualTo(4e6);
    // Reduce-scatter of 4e6 B: (3/4) * 4e6 * 1e-9 = 0.003 s; all-gather of 2e6 weight bytes:
    // (3/4) * 2e6 * 1e-9 = 0.0015 s.
    assertThat(c.gradSyncSeconds()).isCloseTo(0.003, within(1e-12));
    assertThat(c.paramGatherSeconds()).isCloseTo(0.0015, within(1e-12));
    // A quarter of the parameters are updated: 2.5e5 * 30 / 1e12.
    assertThat(c.optimizerSeconds()).isCloseTo(7.5e-6, within(1e-15));
    assertThat(c.sendBytes()).isZero();
  }

  @Test
  void zeroThreeShardsEverythingAndPaysGathersEveryMicrobatch() {
    StageCost c = BUILDER.build(List.of(layer(1e6)), 4, 2, 3, false);
    assertThat(c.memory().weightsBytes()).isEqualTo(5e5);
    assertThat(c.memory().gradientsBytes()).isEqualTo(1e6);
    assertThat(c.memory().optimizerStateBytes()).isEqualTo(3e6);
    // Gather of 2e6 weight bytes: 0.0015 s, once in forward and once in backward; reduce-scatter
    // of 4e6 gradient bytes: 0.003 s in backward.
    assertThat(c.forwardSeconds()).isCloseTo(0.001 + 0.0015, within(1e-12));
    assertThat(c.backwardSeconds()).isCloseTo(0.002 + 0.0015 + 0.003, within(1e-12));
    // One layer's whole weights are gathered at a time: 2e6 B beside the 2e6 B of temporaries.
    assertThat(c.memory().temporaryBytes()).isEqualTo(4e6);
    assertThat(c.gradSyncSeconds()).isZero();
  }
}
