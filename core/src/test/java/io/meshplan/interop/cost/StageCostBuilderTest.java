package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.model.Overlaps;
import io.meshplan.sim.HiddenComm;
import io.meshplan.sim.Overlap;
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
    // The per-microbatch gathers and reduce-scatter, 0.0015 + 0.0015 + 0.003 = 0.006 s, are
    // data-parallel work inside the passes, beside the layer's 0.0001 s of tensor communication.
    assertThat(c.shardSeconds()).isCloseTo(0.006, within(1e-12));
    assertThat(c.tensorCommSeconds()).isCloseTo(0.0001 + 0.006, within(1e-12));
  }

  /**
   * ZeRO-2 (as DeepSpeed's stage 2 and Megatron-FSDP's {@code optim_grads} run it): gradients and
   * optimizer state sharded over the 4 replicas, weights whole; each microbatch's backward
   * reduce-scatters its 4e6 gradient bytes, (3/4) * 4e6 * 1e-9 = 0.003 s, which counts as
   * data-parallel work; the 2e6 updated weight bytes are gathered once per iteration, 0.0015 s.
   */
  @Test
  void zeroTwoReduceScattersEveryMicrobatchOnTheDataParallelAxis() {
    StageCost c = BUILDER.build(List.of(layer(1e6)), 4, 2, 2, false);
    assertThat(c.memory().weightsBytes()).isEqualTo(2e6);
    assertThat(c.memory().gradientsBytes()).isEqualTo(1e6);
    assertThat(c.memory().optimizerStateBytes()).isEqualTo(3e6);
    assertThat(c.forwardSeconds()).isCloseTo(0.001, within(1e-12));
    assertThat(c.backwardSeconds()).isCloseTo(0.002 + 0.003, within(1e-12));
    assertThat(c.shardSeconds()).isCloseTo(0.003, within(1e-12));
    assertThat(c.tensorCommSeconds()).isCloseTo(0.0001 + 0.003, within(1e-12));
    assertThat(c.paramGatherSeconds()).isCloseTo(0.0015, within(1e-12));
    assertThat(c.gradSyncSeconds()).isZero();
    // ZeRO 0 and 1 reduce once per iteration, after the passes: nothing per microbatch.
    assertThat(BUILDER.build(List.of(layer(1e6)), 4, 2, 0, false).shardSeconds()).isZero();
    assertThat(BUILDER.build(List.of(layer(1e6)), 4, 2, 1, false).shardSeconds()).isZero();
  }

  private static StageCostBuilder with(Overlaps o) {
    return new StageCostBuilder(COMM, 1e12, 2, o);
  }

  private static LayerCost accumulating(double params) {
    // 0.5 ms of the 2 ms backward is the separate fp32 accumulation.
    return layer(params).toBuilder().accumulateSeconds(0.0005).build();
  }

  @Test
  void fusedAccumulationLeavesTheBackwardUnderZeroOneOnly() {
    Overlaps fused = new Overlaps(false, false, false, false, true);
    // Two layers: backward 2 * (2 - 0.5) ms = 3 ms under ZeRO 0 and 1.
    assertThat(with(fused).build(List.of(accumulating(1e6), accumulating(1e6)), 4, 2, 0, false)
        .backwardSeconds()).isCloseTo(0.003, within(1e-15));
    assertThat(with(fused).build(List.of(accumulating(1e6)), 4, 2, 1, false)
        .backwardSeconds()).isCloseTo(0.0015, within(1e-15));
    // FSDP does not fuse it: ZeRO-3 keeps 2 ms plus gather 1.5 ms and reduce-scatter 3 ms.
    assertThat(with(fused).build(List.of(accumulating(1e6)), 4, 2, 3, false)
        .backwardSeconds()).isCloseTo(0.002 + 0.0015 + 0.003, within(1e-12));
    // Unfused: the whole 2 ms.
    assertThat(with(Overlaps.NONE).build(List.of(accumulating(1e6)), 4, 2, 0, false)
        .backwardSeconds()).isCloseTo(0.002, within(1e-15));
  }

  @Test
  void tensorOverlapRunsUnderEachPassOnlyWithSequenceParallelism() {
    Overlaps tp = new Overlaps(false, false, true, false, false);
    // Forward: K = 1 - 0.05 = 0.95 ms, C = 0.05 ms, hidden: 0.95 + 0.05 * 0.189 / 1.189 ms.
    // Backward: K = 2 - 0.05 = 1.95 ms, C = 0.05 ms: 1.95 + 0.05 * 0.189 / 1.189 ms.
    double slow = 0.00005 * Overlap.SLOWDOWN / (1 + Overlap.SLOWDOWN);
    StageCost c = with(tp).build(List.of(layer(1e6)), 4, 2, 0, true, false);
    assertThat(c.forwardSeconds()).isCloseTo(0.00095 + slow, within(1e-15));
    assertThat(c.backwardSeconds()).isCloseTo(0.00195 + slow, within(1e-15));
    assertThat(c.tensorCommSeconds()).isZero();
    assertThat(c.hidden().perMicrobatchSeconds()).isCloseTo(0.0001, within(1e-15));
    assertThat(c.hidden().slowdownPerMicrobatchSeconds()).isCloseTo(2 * slow, within(1e-15));
    // Without sequence parallelism Megatron-LM has no overlap: serial, as before.
    StageCost serial = with(tp).build(List.of(layer(1e6)), 4, 2, 0, false, false);
    assertThat(serial.forwardSeconds()).isEqualTo(0.001);
    assertThat(serial.tensorCommSeconds()).isEqualTo(0.0001);
    assertThat(serial.hidden()).isEqualTo(HiddenComm.NONE);
  }

  @Test
  void fsdpPrefetchExposesOnlyTheFirstLayersGatherAndReduceScatter() {
    Overlaps prefetch = new Overlaps(false, false, false, true, false);
    // Two equal layers, 2e6 parameters: gather of 4e6 weight bytes over 4 replicas
    // (3/4) * 4e6 * 1e-9 = 3 ms, reduce-scatter of 8e6 gradient bytes 6 ms. The first layer's half
    // of each is exposed: forward + 1.5 ms, backward + 3 ms.
    // Forward: the other 1.5 ms of gather under K = 2 * 0.95 = 1.9 ms of compute: hidden, adds
    // 1.5 * 0.189 / 1.189 ms. Backward: 3 ms gather + 6 - 3 ms reduce-scatter = 6 ms under
    // K = 2 * 1.95 = 3.9 ms: exposed beyond 3.9 * 1.189 = 4.6371 ms, the window 6 ms.
    StageCost c = with(prefetch).build(List.of(layer(1e6), layer(1e6)), 4, 2, 3, false);
    double fwd = 0.002 + 0.0015 + 0.0015 * Overlap.SLOWDOWN / (1 + Overlap.SLOWDOWN);
    assertThat(c.forwardSeconds()).isCloseTo(fwd, within(1e-12));
    // Backward: 4 ms of layers (0.1 ms of it tensor communication) + 3 ms exposed + 6 - 3.9 ms.
    assertThat(c.backwardSeconds()).isCloseTo(0.004 + 0.003 + (0.006 - 0.0039), within(1e-12));
    StageCost off = with(Overlaps.NONE).build(List.of(layer(1e6), layer(1e6)), 4, 2, 3, false);
    assertThat(off.forwardSeconds()).isCloseTo(0.002 + 0.003, within(1e-12));
    assertThat(off.backwardSeconds()).isCloseTo(0.004 + 0.003 + 0.006, within(1e-12));
    assertThat(c.forwardSeconds() + c.backwardSeconds())
        .isLessThan(off.forwardSeconds() + off.backwardSeconds());
  }

  @Test
  void theParameterGatherRunsUnderTheNextForwardButItsFirstBucket() {
    Overlaps gather = new Overlaps(true, true, false, false, false);
    // ZeRO-1, three layers of 4e7 parameters, each its own Megatron-Core bucket (at least
    // max(4e7, 1e6 * 4) = 4e7 elements). All-gather of 3 * 4e7 * 2 B: (3/4) * 2.4e8 * 1e-9 =
    // 0.18 s; the first layer's bucket, 0.06 s, is gathered before the forward starts; the other
    // 0.12 s runs under K = 3 * 0.95 ms of forward compute and leaves 0.12 - 0.00285 exposed.
    List<LayerCost> three = List.of(layer(4e7), layer(4e7), layer(4e7));
    StageCost c = with(gather).build(three, 4, 2, 1, true);
    assertThat(c.paramGatherSeconds()).isCloseTo(0.06 + 0.12 - 0.00285, within(1e-12));
    assertThat(c.hidden().perIterationSeconds()).isCloseTo(0.00285 * (1 + Overlap.SLOWDOWN),
        within(1e-12));
    // One bucket holds the whole stage of one small layer: nothing is left to hide.
    StageCost one = with(gather).build(List.of(layer(1e6)), 4, 2, 1, true);
    assertThat(one.paramGatherSeconds()).isCloseTo(0.0015, within(1e-12));
    assertThat(one.hidden().perIterationSeconds()).isZero();
  }

  /**
   * Megatron-Core's buckets, built in backward order, close once they hold max(4e7, 1e6 * dp)
   * parameters; the last one holds what is left of the stage's first layers.
   */
  @Test
  void theLastBucketIsWhatTheFirstLayersLeave() {
    // dp 4: buckets of 4e7. Backward order 3e7, 2e7 (5e7: closed), 3e7, 3e7 (6e7: closed), 1e7
    // left: the last bucket.
    List<LayerCost> five = List.of(layer(1e7), layer(3e7), layer(3e7), layer(2e7), layer(3e7));
    assertThat(StageCostBuilder.lastBucket(five, 4, false)).isEqualTo(1e7);
    // dp 100: buckets of 1e8: 3e7 + 2e7 + 3e7 + 3e7 = 1.1e8 closed, 1e7 left.
    assertThat(StageCostBuilder.lastBucket(five, 100, false)).isEqualTo(1e7);
    // dp 1000: buckets of 1e9, never reached: the whole stage is one bucket.
    assertThat(StageCostBuilder.lastBucket(five, 1000, false)).isEqualTo(1.2e8);
    // A bucket that closes exactly at the first layer is the last one: 4e7 + 4e7.
    List<LayerCost> even = List.of(layer(4e7), layer(4e7));
    assertThat(StageCostBuilder.lastBucket(even, 4, false)).isEqualTo(4e7);
  }

  /**
   * The last bucket's reduction is the tail of the gradient sync. ZeRO-0, dp 4, layers of 1e7
   * and 5e7: buckets 5e7 (closed) and 1e7 (the last). All-reduce of 4-byte gradients: 2 * (3/4)
   * * 6e7 * 4 * 1e-9 = 0.36 s, the last bucket's 2 * (3/4) * 1e7 * 4 * 1e-9 = 0.06 s.
   */
  @Test
  void theLastBucketsReductionIsTheSyncsTail() {
    StageCost c = BUILDER.build(List.of(layer(1e7), layer(5e7)), 4, 2, 0, false);
    assertThat(c.gradSyncSeconds()).isCloseTo(0.36, within(1e-12));
    assertThat(c.gradSyncTailSeconds()).isCloseTo(0.06, within(1e-12));
    // ZeRO-1 reduce-scatters: (3/4) * 6e7 * 4 * 1e-9 = 0.18 s, its tail 0.03 s.
    StageCost z1 = BUILDER.build(List.of(layer(1e7), layer(5e7)), 4, 2, 1, false);
    assertThat(z1.gradSyncSeconds()).isCloseTo(0.18, within(1e-12));
    assertThat(z1.gradSyncTailSeconds()).isCloseTo(0.03, within(1e-12));
    // As the simulator runs it, the objective's tail: 0.15 s under the 4 ms of backward, the
    // rest of the window exposed, then the 0.03 s tail.
    assertThat(StageCostBuilder.iterationTail(z1)).isCloseTo(
        Overlap.under(z1.backwardSeconds(), 0.15).addedSeconds() + 0.03
            + z1.paramGatherSeconds() + z1.optimizerSeconds(), within(1e-12));
  }
}
