package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class PipelineSimulatorTest {
  private static final Offset<Double> EPS = within(1e-9);

  /**
   * 1F1B, p = 4 equal stages, m = 8, f = 1 s, b = 2 s, free transfers: T = (m + p - 1) * (f + b)
   * = 11 * 3 = 33 s. Stage 0 computes m * (f + b) = 24 s and idles (p - 1) * (f + b) = 9 s.
   */
  @Test
  void oneFOneBEqualStagesMatchesTheClosedForm() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.times(1, 2), 4),
        new Schedule.OneFOneB(), 8, P2pCost.free());
    assertThat(r.iterationSeconds()).isCloseTo(33.0, EPS);
    assertThat(r.criticalGroup()).isZero();
    assertThat(r.breakdown().computeSeconds()).isCloseTo(24.0, EPS);
    assertThat(r.breakdown().bubbleSeconds()).isCloseTo(9.0, EPS);
    assertThat(r.breakdown().exposedCommunicationSeconds()).isCloseTo(0.0, EPS);
  }

  /** GPipe with the same stages: also (m + p - 1) * (f + b) = 33 s. */
  @Test
  void gpipeEqualStagesMatchesTheClosedForm() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.times(1, 2), 4), new Schedule.GPipe(),
        8, P2pCost.free());
    assertThat(r.iterationSeconds()).isCloseTo(33.0, EPS);
  }

  /**
   * GPipe with a transfer of c = 0.5 s per hop: T = (m + p - 1)(f + b) + 2 (p - 1) c = 33 + 3 = 36
   * s. Stage 0 finishes its forwards at 8 s; microbatch 0's backward reaches it at: last stage
   * forward of microbatch 7 ends at 3 * (1 + 0.5) + 8 = 12.5, backwards of stages 3, 2, 1 end at
   * 14.5, 17, 19.5, and the gradient arrives at 20. Of stage 0's 12 s wait, the last 0.5 s is the
   * transfer in flight (exposed pipeline communication), 11.5 s bubble.
   */
  @Test
  void gpipeWithTransfersAddsTwoHopsPerStage() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.builder(1, 2).send(1).build(), 4),
        new Schedule.GPipe(), 8, P2pCost.uniform(bytes -> 0.5 * bytes));
    assertThat(r.iterationSeconds()).isCloseTo(36.0, EPS);
    assertThat(r.breakdown().pipelineSeconds()).isCloseTo(0.5, EPS);
    assertThat(r.breakdown().bubbleSeconds()).isCloseTo(11.5, EPS);
    assertThat(r.timeline().events()).filteredOn(e -> e.kind() == EventKind.SEND)
        .hasSize(2 * 3 * 8);
  }

  /**
   * 1F1B is latency-sensitive: p = 2, m = 3, f = b = c = 1 s. Stage 1: F0 [2,3], B0 [3,4],
   * F1 [4,5], B1 [5,6], F2 [8,9], B2 [9,10]. Stage 0: F0 [0,1], F1 [1,2], B0 [5,6], F2 [6,7],
   * B1 [7,8], B2 [11,12]. T = 12 s, more than (m + p - 1)(f + b) + 2 (p - 1) c = 10 s.
   */
  @Test
  void oneFOneBWithTransfersStallsInTheSteadyState() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.builder(1, 1).send(1).build(), 2),
        new Schedule.OneFOneB(), 3, P2pCost.uniform(bytes -> bytes));
    assertThat(r.iterationSeconds()).isCloseTo(12.0, EPS);
    List<Event> stage0 = r.timeline().events().stream()
        .filter(e -> e.group() == 0 && e.isCompute()).toList();
    assertThat(stage0).extracting(Event::startSeconds).containsExactly(0.0, 1.0, 5.0, 6.0, 7.0,
        11.0);
  }

  /**
   * Interleaving shrinks the bubble by the number of chunks (Narayanan et al., SC'21, section
   * 2.2.2): p = 2, v = 2, m = 4, each chunk f = 0.5 s, b = 1 s, so a whole stage has f + b = 3 s.
   * 1F1B: (m + p - 1) * 3 = 15 s, bubble (p - 1) * 3 = 3 s. Interleaved: m * 3 + (p - 1) * 3 / v =
   * 12 + 1.5 = 13.5 s, bubble 1.5 s; bubble fraction (p - 1) / (v * m) = 1/8 of the ideal 12 s.
   */
  @Test
  void interleavingShrinksTheBubbleByTheChunkCount() {
    SimulationResult flat = Stages.run(Stages.repeat(Stages.times(1, 2), 2),
        new Schedule.OneFOneB(), 4, P2pCost.free());
    SimulationResult inter = Stages.run(Stages.repeat(Stages.times(0.5, 1), 4),
        new Schedule.Interleaved(2), 4, P2pCost.free());
    assertThat(flat.iterationSeconds()).isCloseTo(15.0, EPS);
    assertThat(flat.breakdown().bubbleSeconds()).isCloseTo(3.0, EPS);
    assertThat(inter.iterationSeconds()).isCloseTo(13.5, EPS);
    assertThat(inter.breakdown().bubbleSeconds()).isCloseTo(1.5, EPS);
    assertThat(inter.breakdown().bubbleSeconds() / 12.0).isCloseTo(1.0 / 8, EPS);
  }

  /** p = 4, v = 3, m = 8, chunk f = 1, b = 2: m * v * 3 + (p - 1) * 3 = 72 + 9 = 81 s. */
  @Test
  void interleavedWithThreeChunksMatchesTheClosedForm() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.times(1, 2), 12),
        new Schedule.Interleaved(3), 8, P2pCost.free());
    assertThat(r.iterationSeconds()).isCloseTo(81.0, EPS);
  }

  /**
   * In flight: 1F1B group g holds p - g microbatches, GPipe holds all m (p = 4, m = 8). Stage
   * memory: weights 10, gradients 20, optimizer 30, activations 5 per microbatch, temporaries 7
   * bytes: 1F1B stage 0 peaks at 10 + 20 + 30 + 4*5 + 7 = 87 bytes, GPipe at 60 + 8*5 + 7 = 107.
   */
  @Test
  void inFlightMicrobatchesAreReadFromTheEvents() {
    StageCost s = Stages.builder(1, 2).memory(new MemoryBreakdown(10, 20, 30, 5, 7)).build();
    SimulationResult one = Stages.run(Stages.repeat(s, 4), new Schedule.OneFOneB(), 8,
        P2pCost.free());
    assertThat(one.stages()).extracting(x -> x.timing().peakInFlightMicrobatches())
        .containsExactly(4, 3, 2, 1);
    assertThat(one.peakMemoryBytesPerGpu()).isEqualTo(87.0);
    assertThat(one.memoryGroup()).isZero();
    assertThat(one.memory().activationsBytes()).isEqualTo(20.0);
    SimulationResult gpipe = Stages.run(Stages.repeat(s, 4), new Schedule.GPipe(), 8,
        P2pCost.free());
    assertThat(gpipe.stages()).extracting(x -> x.timing().peakInFlightMicrobatches())
        .containsExactly(8, 8, 8, 8);
    assertThat(gpipe.peakMemoryBytesPerGpu()).isEqualTo(107.0);
  }

  /**
   * Megatron's interleaved warm-up is (p - g - 1) * 2 + (v - 1) * p forwards, so with p = 2, v =
   * 2, m = 4 group 0 runs 4 forwards then one more before its first backward: 5 chunk-microbatches
   * in flight; group 1 runs 2 + 1 = 3.
   */
  @Test
  void interleavedInFlightFollowsTheWarmUp() {
    SimulationResult r = Stages.run(Stages.repeat(Stages.times(0.5, 1), 4),
        new Schedule.Interleaved(2), 4, P2pCost.free());
    assertThat(r.stages()).extracting(x -> x.timing().peakInFlightMicrobatches())
        .containsExactly(5, 3);
  }

  /**
   * One stage, m = 2, f = 1, b = 2: passes end at 6 s; the last backward runs [4, 6]. Gradient sync
   * 1.5 s, optimizer 0.5 s, gather 0.25 s. Without overlap: 6 + 1.5 + 0.5 + 0.25 = 8.25 s, with
   * 1.75 s of exposed data-parallel communication. With overlap the sync starts at 4 and ends at
   * max(4 + 1.5, 6) = 6: 6 + 0.5 + 0.25 = 6.75 s, only the gather exposed.
   */
  @Test
  void gradientSyncOverlapsWithTheLastBackwardWhenAllowed() {
    StageCost plain = Stages.builder(1, 2).parallel(2, 1).gradSync(1.5, false).optimizer(0.5)
        .gather(0.25).build();
    SimulationResult r = Stages.run(List.of(plain), new Schedule.OneFOneB(), 2, P2pCost.free());
    assertThat(r.iterationSeconds()).isCloseTo(8.25, EPS);
    assertThat(r.breakdown().dataParallelSeconds()).isCloseTo(1.75, EPS);
    assertThat(r.breakdown().optimizerSeconds()).isCloseTo(0.5, EPS);
    assertThat(r.timeline().events()).extracting(Event::kind).containsSubsequence(
        EventKind.GRAD_SYNC, EventKind.OPTIMIZER, EventKind.PARAM_GATHER);
    StageCost overlapped = Stages.builder(1, 2).parallel(2, 1).gradSync(1.5, true).optimizer(0.5)
        .gather(0.25).build();
    SimulationResult o = Stages.run(List.of(overlapped), new Schedule.OneFOneB(), 2,
        P2pCost.free());
    // The 1.5 s sync runs under the last backward (4 s to 6 s) and slows it: it ends at
    // 4 + 2 + 1.5 * 0.189 / 1.189 = 6.23844 s (Overlap.under); then optimizer and gather.
    double slow = 1.5 * Overlap.SLOWDOWN / (1 + Overlap.SLOWDOWN);
    assertThat(o.iterationSeconds()).isCloseTo(6.75 + slow, EPS);
    assertThat(o.breakdown().dataParallelSeconds()).isCloseTo(0.25 + slow, EPS);
    Event sync = o.timeline().events().stream().filter(e -> e.kind() == EventKind.GRAD_SYNC)
        .findFirst().orElseThrow();
    assertThat(sync.startSeconds()).isEqualTo(4.0);
    assertThat(sync.endSeconds()).isCloseTo(6.0 + slow, EPS);
  }

  /**
   * The last bucket's gradients are ready when the last backward ends, so its reduction follows
   * it. As above with 0.5 s of the 1.5 s sync in the last bucket: the other 1.0 s runs under the
   * backward (4 s to 6 s) and slows it by 1.0 * 0.189 / 1.189 = 0.15896 s; the tail then runs
   * from 6.15896 s to 6.65896 s; optimizer and gather follow: 7.40896 s.
   */
  @Test
  void theLastBucketsReductionFollowsTheLastBackward() {
    StageCost tail = Stages.builder(1, 2).parallel(2, 1).gradSync(1.5, true).gradSyncTail(0.5)
        .optimizer(0.5).gather(0.25).build();
    SimulationResult o = Stages.run(List.of(tail), new Schedule.OneFOneB(), 2, P2pCost.free());
    double slow = 1.0 * Overlap.SLOWDOWN / (1 + Overlap.SLOWDOWN);
    assertThat(o.iterationSeconds()).isCloseTo(6.0 + slow + 0.5 + 0.5 + 0.25, EPS);
    Event sync = o.timeline().events().stream().filter(e -> e.kind() == EventKind.GRAD_SYNC)
        .findFirst().orElseThrow();
    assertThat(sync.endSeconds()).isCloseTo(6.0 + slow + 0.5, EPS);
    // A tail the sync does not hold is refused.
    assertThatThrownBy(() -> Stages.builder(1, 2).parallel(2, 1).gradSync(0.5, true)
        .gradSyncTail(0.75).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("gradSyncTailSeconds");
  }

  /**
   * Throughput arithmetic. One stage, dp = 2, tp = 1, m = 4, f = 1, b = 2: T = 12 s. Model FLOPs
   * 1.5e12 and hardware FLOPs 2e12 per microbatch per replica; peak 1e12 FLOP/s, so a microbatch
   * may take at least 2 s and takes 3. Model FLOPs per iteration 1.5e12 * 4 * 2 = 12e12: 12e12 /
   * 12 / 2 GPUs = 0.5e12 FLOP/s = 0.5 TFLOP/s per GPU, MFU 0.5; hardware 16e12 / 12 / 2 = 0.667
   * TFLOP/s. 4096 tokens / 12 s = 341.33 tokens/s.
   */
  @Test
  void throughputAndMfu() {
    StageCost s = Stages.builder(1, 2).parallel(2, 1).flops(1.5e12, 2e12).build();
    SimulationInput in = new SimulationInput(List.of(s), new Schedule.GPipe(), 4,
        P2pCost.free(), 2, 1e12, 4096);
    SimulationResult r = new PipelineSimulator(in).simulate();
    assertThat(r.iterationSeconds()).isCloseTo(12.0, EPS);
    assertThat(r.modelFlopsPerIteration()).isEqualTo(12e12);
    assertThat(r.tflopsPerGpu()).isCloseTo(0.5, EPS);
    assertThat(r.mfu()).isCloseTo(0.5, EPS);
    assertThat(r.hardwareTflopsPerGpu()).isCloseTo(16.0 / 24, EPS);
    assertThat(r.tokensPerSecond()).isCloseTo(4096.0 / 12, EPS);
  }

  /**
   * Tensor-parallel communication and recomputation are parts of the passes: f = 1, b = 2 of
   * which 0.5 s recompute, 0.75 s exposed tensor communication per microbatch; m = 2, one stage:
   * T = 6 s, compute 6 - 1.5 = 4.5 s, tensor 1.5 s, recompute 1 s.
   */
  @Test
  void tensorCommunicationAndRecomputeAreSplitOut() {
    StageCost s = Stages.builder(1, 2).recompute(0.5).tensorComm(0.75).build();
    SimulationResult r = Stages.run(List.of(s), new Schedule.OneFOneB(), 2, P2pCost.free());
    assertThat(r.breakdown().computeSeconds()).isCloseTo(4.5, EPS);
    assertThat(r.breakdown().tensorParallelSeconds()).isCloseTo(1.5, EPS);
    assertThat(r.breakdown().exposedCommunicationSeconds()).isCloseTo(1.5, EPS);
    assertThat(r.breakdown().recomputeSeconds()).isCloseTo(1.0, EPS);
  }

  /**
   * ZeRO-2/3's per-microbatch gathers and reduce-scatters run inside the passes but count as
   * data-parallel communication: f = 1, b = 2 with 0.75 s of exposed communication per
   * microbatch, 0.5 s of it the shard work; a 0.25 s gradient reduction after the last backward;
   * m = 2, one stage: T = 2 * 3 + 0.25 = 6.25 s, compute 6 - 1.5 = 4.5 s, tensor 2 * 0.25 = 0.5
   * s, data 2 * 0.5 + 0.25 = 1.25 s, exposed 0.5 + 1.25 = 1.75 s.
   */
  @Test
  void zeroShardWorkCountsAsDataParallel() {
    StageCost s = Stages.builder(1, 2).tensorComm(0.75).shard(0.5).gradSync(0.25, false)
        .build();
    SimulationResult r = Stages.run(List.of(s), new Schedule.OneFOneB(), 2, P2pCost.free());
    assertThat(r.iterationSeconds()).isCloseTo(6.25, EPS);
    assertThat(r.breakdown().computeSeconds()).isCloseTo(4.5, EPS);
    assertThat(r.breakdown().tensorParallelSeconds()).isCloseTo(0.5, EPS);
    assertThat(r.breakdown().dataParallelSeconds()).isCloseTo(1.25, EPS);
    assertThat(r.breakdown().exposedCommunicationSeconds()).isCloseTo(1.75, EPS);
    assertThat(r.breakdown().totalSeconds()).isCloseTo(6.25, EPS);
  }

  @Test
  void interleavingNeedsMicrobatchesMultipleOfTheDepth() {
    Schedule s = new Schedule.Interleaved(2);
    assertThat(s.check(4, 6)).hasValueSatisfying(e -> assertThat(e.message())
        .contains("multiple of the pipeline depth (4)").contains("4 or 8"));
    assertThat(s.check(4, 8)).isEmpty();
    SimulationInput in = Stages.input(Stages.repeat(Stages.times(1, 2), 8), s, 6,
        P2pCost.free());
    assertThatThrownBy(() -> new PipelineSimulator(in)).isInstanceOf(InputException.class)
        .hasMessageContaining("multiple of the pipeline depth");
    assertThatThrownBy(() -> new Schedule.Interleaved(1)).hasMessageContaining("at least 2");
  }

  @Test
  void rejectsAStageFasterThanThePeak() {
    // 2e12 FLOPs in 1 + 2 = 3 s on 1 GPU of 0.5e12 FLOP/s: the peak allows 1.5e12.
    StageCost s = Stages.builder(1, 2).flops(2e12, 2e12).build();
    SimulationInput in = new SimulationInput(List.of(s), new Schedule.GPipe(), 1,
        P2pCost.free(), 1, 0.5e12, 1);
    assertThatThrownBy(() -> new PipelineSimulator(in))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dense peak");
  }

  @Test
  void stageCostChecksItsNumbers() {
    assertThatThrownBy(() -> Stages.builder(1, Double.NaN).build())
        .hasMessageContaining("backwardSeconds");
    assertThatThrownBy(() -> Stages.builder(1, 2).recompute(3).build())
        .hasMessageContaining("recomputeSeconds");
    assertThatThrownBy(() -> Stages.builder(1, 2).flops(2, 1).build())
        .hasMessageContaining("hardwareFlopsPerMicrobatch");
    assertThatThrownBy(() -> new MemoryBreakdown(0, -1, 0, 0, 0))
        .hasMessageContaining("gradientsBytes");
    assertThatThrownBy(() -> new StageCost(3, 2, 1, 1, 1, 0, 0, 0, 0, false, 0, 0, 0, 0,
        new MemoryBreakdown(0, 0, 0, 0, 0), StageCommBytes.NONE))
        .hasMessageContaining("devices (3)");
  }

  @Test
  void scheduleOrdersAreDocumented() {
    // 1F1B, p = 3, m = 4, group 0: warm-up 2 forwards, 2 steady pairs, 2 cool-down backwards.
    assertThat(new Schedule.OneFOneB().order(0, 3, 4)).hasToString(
        "[F0, F1, F2, B0, F3, B1, B2, B3]");
    assertThat(new Schedule.GPipe().order(1, 3, 2)).hasToString("[F0, F1, B0, B1]");
    // Interleaved p = 2, v = 2, m = 4, group 1: warm-up 0*2 + 1*2 = 2 forwards (chunk 0, mb 0, 1),
    // then forward k+2 with backward k: backwards start with chunk 1.
    assertThat(new Schedule.Interleaved(2).order(1, 2, 4)).hasToString(
        "[F0, F1, F0c1, B0c1, F1c1, B1c1, F2, B0, F3, B1, F2c1, B2c1, F3c1, B3c1, B2, B3]");
  }
}
