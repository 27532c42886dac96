package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Invariants of the simulator over seeded random pipelines. */
class PipelineSimulatorProperties {
  private static final double EPS = 1e-9;
  private static final double PEAK = 300e12;

  /** The seeds checked before the random ones: zero, one, minus one and the extremes. */
  private static final List<Long> SEED_EDGES = List.of(0L, 1L, -1L, Long.MIN_VALUE,
      Long.MAX_VALUE);

  /** Checks {@code property} on the edge seeds, then on {@code tries} random seeds. */
  private static void forSeeds(long seed, int tries, Consumer<Long> property) {
    Cases.check(seed, tries, SEED_EDGES, Gen::anyLong, property);
  }

  /** A random pipeline whose stages never beat the dense peak. */
  private static SimulationInput random(long seed) {
    Random rnd = new Random(seed);
    int groups = 1 + rnd.nextInt(5);
    int kind = rnd.nextInt(3);
    Schedule schedule = kind == 0 ? new Schedule.GPipe() : kind == 1 ? new Schedule.OneFOneB()
        : new Schedule.Interleaved(2 + rnd.nextInt(2));
    int microbatches = kind == 2 ? groups * (1 + rnd.nextInt(3)) : 1 + rnd.nextInt(12);
    int[] dp = new int[groups];
    int[] tp = new int[groups];
    for (int g = 0; g < groups; g++) {
      dp[g] = 1 + rnd.nextInt(4);
      tp[g] = 1 << rnd.nextInt(4);
    }
    List<StageCost> stages = new ArrayList<>();
    for (int k = 0; k < groups * schedule.chunks(); k++) {
      int g = k % groups;
      double hardware = rnd.nextDouble() * 1e15;
      double model = hardware * rnd.nextDouble();
      // At least the time the peak allows, and up to 3x more.
      double total = hardware / (tp[g] * PEAK) * (1 + 2 * rnd.nextDouble()) + 1e-4;
      double forward = total * (0.2 + 0.3 * rnd.nextDouble());
      double backward = total - forward;
      stages.add(Stages.builder(forward, backward).parallel(dp[g], tp[g])
          .recompute(backward * 0.3 * rnd.nextDouble())
          .tensorComm(total * 0.2 * rnd.nextDouble())
          .send(rnd.nextDouble() * 1e8)
          .gradSync(dp[g] > 1 ? rnd.nextDouble() * 2 * total : 0, rnd.nextBoolean())
          .gather(rnd.nextBoolean() ? rnd.nextDouble() * total : 0)
          .optimizer(rnd.nextDouble() * total)
          .flops(model, hardware)
          .memory(new MemoryBreakdown(rnd.nextInt(1000), rnd.nextInt(1000), rnd.nextInt(1000),
              rnd.nextInt(100), rnd.nextInt(100)))
          .build());
    }
    int gpus = 0;
    for (int g = 0; g < groups; g++) {
      gpus += dp[g] * tp[g];
    }
    double alpha = rnd.nextDouble() * 1e-3;
    double beta = 1e9 + rnd.nextDouble() * 1e11;
    P2pCost p2p = rnd.nextInt(4) == 0 ? P2pCost.free() : P2pCost.alphaBeta(alpha, beta);
    return new SimulationInput(stages, schedule, microbatches, p2p, gpus + rnd.nextInt(3), PEAK,
        1 + rnd.nextInt(1 << 20));
  }

  @Test
  void computeOpsNeverOverlapOnAGroup() {
    forSeeds(7, 300, seed -> {
      SimulationInput in = random(seed);
      SimulationResult r = new PipelineSimulator(in).simulate();
      Map<Integer, Double> lastEnd = new HashMap<>();
      for (Event e : r.timeline().events()) {
        if (e.isCompute()) {
          double prev = lastEnd.getOrDefault(e.group(), 0.0);
          assertThat(e.startSeconds()).isGreaterThanOrEqualTo(prev - EPS);
          lastEnd.put(e.group(), e.endSeconds());
        }
      }
    });
  }

  @Test
  void everyOpRunsOnceAndAfterItsInput() {
    forSeeds(11, 300, seed -> {
      SimulationInput in = random(seed);
      SimulationResult r = new PipelineSimulator(in).simulate();
      int stages = in.stages().size();
      int m = in.microbatches();
      int groups = in.groups();
      Event[][] fwd = new Event[stages][m];
      Event[][] bwd = new Event[stages][m];
      for (Event e : r.timeline().events()) {
        if (e.kind() == EventKind.FORWARD) {
          assertThat(fwd[e.virtualStage()][e.microbatch()]).isNull();
          fwd[e.virtualStage()][e.microbatch()] = e;
        } else if (e.kind() == EventKind.BACKWARD) {
          assertThat(bwd[e.virtualStage()][e.microbatch()]).isNull();
          bwd[e.virtualStage()][e.microbatch()] = e;
        }
      }
      for (int k = 0; k < stages; k++) {
        for (int mb = 0; mb < m; mb++) {
          assertThat(fwd[k][mb]).isNotNull();
          assertThat(bwd[k][mb]).isNotNull();
          assertThat(fwd[k][mb].group()).isEqualTo(k % groups);
          if (k > 0) {
            double hop = hop(in, k - 1, k, in.stages().get(k - 1).sendBytes());
            assertThat(fwd[k][mb].startSeconds())
                .isGreaterThanOrEqualTo(fwd[k - 1][mb].endSeconds() + hop - EPS);
          }
          if (k < stages - 1) {
            double hop = hop(in, k + 1, k, in.stages().get(k).sendBytes());
            assertThat(bwd[k][mb].startSeconds())
                .isGreaterThanOrEqualTo(bwd[k + 1][mb].endSeconds() + hop - EPS);
          } else {
            assertThat(bwd[k][mb].startSeconds())
                .isGreaterThanOrEqualTo(fwd[k][mb].endSeconds() - EPS);
          }
        }
      }
    });
  }

  private static double hop(SimulationInput in, int from, int to, double bytes) {
    int a = from % in.groups();
    int b = to % in.groups();
    return a == b ? 0 : in.p2p().seconds(a, b, bytes);
  }

  @Test
  void breakdownAddsUpToTheIterationOnEveryGroup() {
    forSeeds(13, 300, seed -> {
      SimulationResult r = new PipelineSimulator(random(seed)).simulate();
      double t = r.iterationSeconds();
      for (GroupTiming g : r.timeline().groups()) {
        assertThat(g.breakdown().totalSeconds()).isCloseTo(t,
            org.assertj.core.api.Assertions.within(1e-9 * Math.max(1, t)));
        assertThat(g.endSeconds()).isLessThanOrEqualTo(t);
      }
      assertThat(r.breakdown()).isEqualTo(r.timeline().groups().get(r.criticalGroup()).breakdown());
      TimeBreakdown b = r.breakdown();
      assertThat(b.tensorParallelSeconds() + b.pipelineSeconds() + b.dataParallelSeconds())
          .isCloseTo(b.exposedCommunicationSeconds(), org.assertj.core.api.Assertions.within(1e-9));
      Event last = r.timeline().events().stream()
          .max(java.util.Comparator.comparingDouble(Event::endSeconds)).orElseThrow();
      assertThat(last.endSeconds()).isEqualTo(t);
    });
  }

  @Test
  void neverAboveTheDensePeak() {
    forSeeds(17, 300, seed -> {
      SimulationInput in = random(seed);
      SimulationResult r = new PipelineSimulator(in).simulate();
      assertThat(r.mfu()).isBetween(0.0, 1.0);
      assertThat(r.tflopsPerGpu()).isLessThanOrEqualTo(PEAK / 1e12);
      assertThat(r.hardwareTflopsPerGpu()).isLessThanOrEqualTo(PEAK / 1e12 * (1 + 1e-9));
      assertThat(r.tflopsPerGpu()).isLessThanOrEqualTo(r.hardwareTflopsPerGpu());
    });
  }

  @Test
  void memoryBreakdownSumsToThePeak() {
    forSeeds(19, 300, seed -> {
      SimulationInput in = random(seed);
      SimulationResult r = new PipelineSimulator(in).simulate();
      double worst = 0;
      for (StageResult s : r.stages()) {
        MemoryUse m = s.memory();
        assertThat(m.weightsBytes() + m.gradientsBytes() + m.optimizerStateBytes()
            + m.activationsBytes() + m.temporariesBytes()).isEqualTo(m.totalBytes());
        worst = Math.max(worst, m.totalBytes());
        // Activations never exceed every chunk's microbatches all in flight.
        double all = 0;
        for (int k : s.virtualStages()) {
          all += in.stages().get(k).memory().activationBytesPerMicrobatch() * in.microbatches();
        }
        assertThat(m.activationsBytes()).isLessThanOrEqualTo(all + EPS);
      }
      assertThat(r.peakMemoryBytesPerGpu()).isEqualTo(worst);
      assertThat(r.memory().totalBytes()).isEqualTo(r.peakMemoryBytesPerGpu());
    });
  }

  @Test
  void inFlightCountsOfTheFlatSchedules() {
    forSeeds(23, 200, seed -> {
      SimulationInput in = random(seed);
      SimulationResult r = new PipelineSimulator(in).simulate();
      int p = in.groups();
      int m = in.microbatches();
      for (StageResult s : r.stages()) {
        int inFlight = s.timing().peakInFlightMicrobatches();
        if (in.schedule() instanceof Schedule.GPipe) {
          assertThat(inFlight).isEqualTo(m);
        } else if (in.schedule() instanceof Schedule.OneFOneB) {
          assertThat(inFlight).isEqualTo(Math.min(p - s.group(), m));
        } else {
          assertThat(inFlight).isBetween(1, m * in.schedule().chunks());
        }
      }
    });
  }

  @Test
  void outputIsDeterministic() {
    forSeeds(29, 100, seed -> {
      String a = SimulationJson.write(new PipelineSimulator(random(seed)).simulate(), true);
      String b = SimulationJson.write(new PipelineSimulator(random(seed)).simulate(), true);
      assertThat(a).isEqualTo(b);
    });
  }
}
