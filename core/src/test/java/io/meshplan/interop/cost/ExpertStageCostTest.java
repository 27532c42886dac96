package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.model.Overlaps;
import io.meshplan.sim.StageCost;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A mixture-of-experts stage: the expert state sharded over the expert-data-parallel group, the
 * dense state over the data-parallel group, and the all-to-alls priced on the expert mesh.
 */
class ExpertStageCostTest {
  /** Every axis of every mesh: alpha 0, beta 1e-9 s per byte. */
  private static final Function<LogicalMesh, CommModel> MESHES = m -> new AlphaBetaCommModel(m,
      new double[m.rank()], filled(m.rank()));

  private static double[] filled(int n) {
    double[] b = new double[n];
    java.util.Arrays.fill(b, 1e-9);
    return b;
  }

  /** A stage of d = 8 replicas of t = 1 GPU: 16 GPUs would not matter; the mesh is 8 x 1. */
  private static final StageCostBuilder BUILDER = new StageCostBuilder(
      MESHES.apply(LogicalMesh.of(8, 1)), MESHES, 1e12, 2, Overlaps.NONE);

  /**
   * One block whose GPU holds 4e6 parameters, 3e6 of them routed experts (EP 4 on 8 GPUs: the
   * expert-data-parallel group has 8 / 4 = 2 GPUs), with one all-to-all buffer of 1e6 bytes.
   */
  private static LayerCost block(int forwardExchanges, int backwardExchanges) {
    return LayerCost.builder().forwardSeconds(0.01).backwardSeconds(0.02)
        .parameters(4e6).gradientParameters(4e6).modelFlops(1e12).hardwareFlops(1e12)
        .experts(new ExpertExchange(4, 1, 3e6, 1e6, forwardExchanges, backwardExchanges))
        .build();
  }

  /**
   * ZeRO-1 (Megatron's distributed optimizer): the dense million parameters' 12 bytes of
   * optimizer state over 8 GPUs (1.5e6 B) and the experts' 3e6 over 2 (18e6 B): 19.5e6 B, where a
   * dense reading over 8 would give 6e6. Gradients stay whole: 4e6 x 4 B = 16e6 B.
   */
  @Test
  void expertStateIsShardedOverTheExpertDataParallelGroup() {
    StageCost c = BUILDER.build(List.of(block(2, 2)), 8, 1, 1, false);
    assertThat(c.memory().optimizerStateBytes()).isCloseTo(1.5e6 + 18e6, within(1e-6));
    assertThat(c.memory().gradientsBytes()).isCloseTo(16e6, within(1e-6));
    assertThat(c.memory().weightsBytes()).isCloseTo(8e6, within(1e-6));
    // Reduce-scatters: dense 4e6 gradient bytes over 8, (7/8) 4e6 1e-9 = 3.5e-3 s; experts 12e6
    // bytes over 2, (1/2) 12e6 1e-9 = 6e-3 s.
    assertThat(c.gradSyncSeconds()).isCloseTo(3.5e-3 + 6e-3, within(1e-12));
  }

  /**
   * Each all-to-all of the 1e6-byte buffer over EP 4 costs (3/4) 1e6 1e-9 = 7.5e-4 s and sends
   * (3/4) 1e6 = 7.5e5 bytes; two in the forward, two in the backward, four with full
   * recomputation's dispatch and combine again.
   */
  @Test
  void allToAllsArePricedPerMicrobatchOnTheExpertAxis() {
    StageCost c = BUILDER.build(List.of(block(2, 2)), 8, 1, 0, false);
    assertThat(c.forwardSeconds()).isCloseTo(0.01 + 2 * 7.5e-4, within(1e-12));
    assertThat(c.backwardSeconds()).isCloseTo(0.02 + 2 * 7.5e-4, within(1e-12));
    assertThat(c.commBytes().expertPerMicrobatch()).isCloseTo(4 * 7.5e5,
        within(1e-6));
    // The exchange is the expert axis's, not the data-parallel one's.
    assertThat(c.commBytes().dataPerMicrobatch()).isZero();
    StageCost full = BUILDER.build(List.of(block(2, 4)), 8, 1, 0, false);
    assertThat(full.backwardSeconds()).isCloseTo(0.02 + 4 * 7.5e-4, within(1e-12));
  }

  /** With ETP 2 (on t = 2), each pair adds an all-gather and a reduce-scatter of 2e6 bytes. */
  @Test
  void expertTensorParallelismGathersTheReceivedRows() {
    StageCostBuilder b = new StageCostBuilder(MESHES.apply(LogicalMesh.of(4, 2)), MESHES, 1e12,
        2, Overlaps.NONE);
    LayerCost l = LayerCost.builder().forwardSeconds(0.01).backwardSeconds(0.02)
        .parameters(4e6).gradientParameters(4e6)
        .experts(new ExpertExchange(2, 2, 3e6, 1e6, 2, 2)).build();
    StageCost c = b.build(List.of(l), 4, 2, 0, false);
    // All-to-all over EP 2: (1/2) 1e6 1e-9 = 5e-4 s; gather and scatter of 2e6 over ETP 2:
    // (1/2) 2e6 1e-9 = 1e-3 s each. Forward: 2 x 5e-4 + 2e-3 = 3e-3 s.
    assertThat(c.forwardSeconds()).isCloseTo(0.01 + 3e-3, within(1e-12));
  }

  /**
   * Megatron-Core's combined 1F1B pairs each all-to-all with one piece of the other microbatch's
   * compute, not with the whole block. A block of 0.001 s forward (0.0008 of it the experts) and
   * 0.02 s backward (0.01 the experts); each all-to-all 7.5e-4 s; compute beside an all-to-all runs
   * 18.9% slower (so it covers 1.189 times its length):
   * <ol>
   *   <li>the backward's combine beside the forward's 0.0002 s before its dispatch: covered
   *       0.0002 x 1.189 = 2.378e-4 s, exposed 7.5e-4 - 2.378e-4 = 5.122e-4 s, slowdown
   *       0.0002 x 0.189 = 3.78e-5 s (both to the backward, whose all-to-all it is);
   *   <li>both dispatches, 1.5e-3 s, beside the experts' 0.0108 s: hidden, slowdown 1.5e-3 x
   *       0.189 / 1.189 = 2.3844e-4 s, half to each pass;
   *   <li>the forward's combine beside the backward's 0.01 s before its experts: hidden,
   *       slowdown 7.5e-4 x 0.189 / 1.189 = 1.1922e-4 s (to the forward).
   * </ol>
   * The block's compute as a whole (0.021 s) would have hidden all four.
   */
  @Test
  void overlappedAllToAllsArePairedAsMegatronsCombinedScheduleRunsThem() {
    StageCostBuilder b = new StageCostBuilder(MESHES.apply(LogicalMesh.of(8, 1)), MESHES, 1e12,
        2, new Overlaps(false, false, false, true, true, true));
    LayerCost l = LayerCost.builder().forwardSeconds(0.001).backwardSeconds(0.02)
        .parameters(4e6).gradientParameters(4e6).modelFlops(1e12).hardwareFlops(1e12)
        .experts(new ExpertExchange(4, 1, 3e6, 1e6, 2, 2, 0.0008, 0.01)).build();
    StageCost c = b.build(List.of(l), 8, 1, 0, false);
    double sigma = io.meshplan.sim.Overlap.SLOWDOWN;
    double step1 = (7.5e-4 - 0.0002 * (1 + sigma)) + 0.0002 * sigma;
    double step2 = 1.5e-3 * sigma / (1 + sigma);
    double step3 = 7.5e-4 * sigma / (1 + sigma);
    assertThat(step1).isCloseTo(5.5e-4, within(1e-12));
    assertThat(c.forwardSeconds()).isCloseTo(0.001 + step3 + step2 / 2, within(1e-12));
    assertThat(c.backwardSeconds()).isCloseTo(0.02 + step1 + step2 / 2, within(1e-12));
  }
}
