package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.FailureRates;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class GoodputTest {
  @Test
  void oneSegmentCostsTheExpectedTimeOfItsAttempts() {
    // M = 1000 s, no restart, no checkpoint, one iteration of 1000 s: 1000 (e - 1) = 1718.28 s.
    Goodput g = new Goodput(1000, 1, 1000, 0, 0);
    assertThat(g.expectedSeconds(1)).isCloseTo(1718.2818, within(1e-3));
    // A restart of 1000 s multiplies it by e^(R/M) = e: 4670.77 s.
    assertThat(new Goodput(1000, 1, 1000, 0, 1000).expectedSeconds(1))
        .isCloseTo(4670.7743, within(1e-3));
    // A downtime of 500 s after each interruption: (1000 + 500) (e - 1) = 2577.42 s.
    assertThat(new Goodput(1000, 1, 1000, 0, 0, 500).expectedSeconds(1))
        .isCloseTo(2577.4227, within(1e-3));
    // Its interruptions: e - 1 = 1.71828 attempts fail, and over the 2577.42 s each took M + D
    // = 1500 s, 2577.42 / 1500 = 1.71828; the rate alone, 2577.42 / 1000, counted 2.577.
    Goodput down = new Goodput(1000, 1, 1000, 0, 0, 500);
    assertThat(down.interruptions(down.expectedSeconds(1))).isCloseTo(Math.E - 1, within(1e-9));
    // Without downtime the count is the rate times the time: 1718.28 / 1000.
    Goodput plain = new Goodput(1000, 1, 1000, 0, 0);
    assertThat(plain.interruptions(plain.expectedSeconds(1))).isCloseTo(Math.E - 1,
        within(1e-9));
  }

  @Test
  void dalysWorkedExamplesGiveHisOptimumIntervals() {
    // Daly 2006, figures 3-5: Ts = 500 h, R = 10 min, delta = 5 min; tau_opt = 117, 57 and
    // 9.1 min for M = 24 h, 6 h and 15 min. Equation 37: sqrt(2 * 300 * 86400) = 7200 s,
    // x = 300 / 172800, 7200 (1 + sqrt(x) / 3 + x / 9) - 300 = 7001.4 s = 116.7 min.
    double[][] cases = {{86400, 117}, {21600, 57}, {900, 9.1}};
    for (double[] c : cases) {
      // One-second iterations, so the searched interval is in seconds.
      Goodput g = new Goodput(1, 500 * 3600, c[0], 300, 600);
      assertThat(g.dalySeconds() / 60).as("M = %s s", c[0]).isCloseTo(c[1], within(0.1 * c[1]
          / 10 + 0.05));
      // The exact optimum of the same expected time lies within 2% of Daly's estimate.
      long k = g.optimalInterval();
      assertThat((double) k).as("M = %s s", c[0]).isCloseTo(g.dalySeconds(),
          within(0.02 * g.dalySeconds()));
      assertThat(g.expectedSeconds(k)).isLessThanOrEqualTo(g.expectedSeconds(k + 1))
          .isLessThanOrEqualTo(g.expectedSeconds(k - 1));
    }
  }

  @Test
  void youngIsTheFirstOrderInterval() {
    // sqrt(2 * 30 * 10000) = 774.6 s.
    assertThat(new Goodput(1, 100, 10000, 30, 0).youngSeconds()).isCloseTo(774.597,
        within(1e-3));
  }

  @Test
  void llama3sRecordIs466InterruptionsIn54DaysOn16384Gpus() {
    FailureRates r = FailureRates.llama3();
    // 466 / (16,384 * 54) = 5.2671e-4 per GPU-day; 86,400 / (5.2671e-4 * 16,384) = 10,012 s.
    assertThat(r.perGpuDay()).isCloseTo(5.2671e-4, within(1e-8));
    assertThat(r.jobMtbfSeconds(16384) / 3600).isCloseTo(2.781, within(1e-3));
    assertThat(r.causes()).hasSize(19).containsEntry("faulty-gpu", 148.0)
        .containsEntry("planned-maintenance", 47.0);
  }

  @Test
  void theMonteCarloAgreesWithTheClosedFormFromOneGpuTo16384() {
    // Llama 3's rates, 10 s iterations, a 30 s checkpoint and a 10 min restart; seeded.
    FailureRates r = FailureRates.llama3();
    SplittableRandom seeds = new SplittableRandom(41);
    for (long gpus : new long[] {1, 8, 64, 512, 2048, 16384}) {
      // Every other case waits an hour of downtime after each interruption.
      double downtime = gpus % 2 == 0 && gpus > 8 ? 3600 : 0;
      Goodput g = new Goodput(10, 20_000, r.jobMtbfSeconds(gpus), 30, 600, downtime);
      long k = g.optimalInterval();
      double exact = g.expectedSeconds(k);
      GoodputMonteCarlo.Estimate mc = GoodputMonteCarlo.simulate(g, k, 400, seeds.nextLong());
      assertThat(mc.mean()).as("%d GPUs", gpus).isCloseTo(exact, within(0.02 * exact));
      assertThat(Math.abs(mc.mean() - exact)).as("%d GPUs", gpus)
          .isLessThanOrEqualTo(4 * mc.standardError() + 1e-9 * exact);
    }
  }
}
