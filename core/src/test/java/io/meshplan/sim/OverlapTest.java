package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Communication under compute: the two regimes, their seam, and bounds on random windows. */
class OverlapTest {
  private static final double S = Overlap.SLOWDOWN;

  @Test
  void shortCommunicationIsHiddenAndSlowsTheCompute() {
    // K = 10 ms, C = 4 ms < K (1 + 0.189) = 11.89 ms: hidden; the window takes
    // 10 + 4 * 0.189 / 1.189 = 10.63583 ms.
    Overlap o = Overlap.under(0.010, 0.004);
    assertThat(o.seconds()).isCloseTo(0.010 + 0.004 * 0.189 / 1.189, within(1e-15));
    assertThat(o.seconds()).isCloseTo(0.01063583, within(1e-8));
    assertThat(o.hiddenSeconds()).isEqualTo(0.004);
    assertThat(o.exposedSeconds()).isZero();
    assertThat(o.addedSeconds()).isCloseTo(0.00063583, within(1e-8));
  }

  @Test
  void longCommunicationIsExposedBeyondTheSlowedCompute() {
    // K = 10 ms, C = 20 ms: the compute runs slowed to 11.89 ms; 8.11 ms of C are exposed; the
    // window is C; the compute lost 1.89 ms.
    Overlap o = Overlap.under(0.010, 0.020);
    assertThat(o.seconds()).isEqualTo(0.020);
    assertThat(o.exposedSeconds()).isCloseTo(0.00811, within(1e-12));
    assertThat(o.hiddenSeconds()).isCloseTo(0.01189, within(1e-12));
    assertThat(o.slowdownSeconds()).isCloseTo(0.00189, within(1e-12));
  }

  @Test
  void theRegimesMeetWhereTheCommunicationEqualsTheSlowedCompute() {
    double k = 0.5;
    double c = k * (1 + S);
    assertThat(Overlap.under(k, c - 1e-12).seconds())
        .isCloseTo(Overlap.under(k, c + 1e-12).seconds(), within(1e-9));
    assertThat(Overlap.under(k, c).seconds()).isCloseTo(c, within(1e-15));
  }

  @Test
  void randomWindowsLieBetweenTheLongerPartAndTheSum() {
    Random r = new Random(20261126);
    for (int i = 0; i < 2000; i++) {
      double k = r.nextDouble() * (r.nextBoolean() ? 1 : 1e-3);
      double c = r.nextDouble() * (r.nextBoolean() ? 1 : 1e-3);
      Overlap o = Overlap.under(k, c);
      assertThat(o.seconds()).isGreaterThanOrEqualTo(Math.max(k, c) - 1e-15)
          .isLessThanOrEqualTo(k + c + 1e-15);
      assertThat(o.hiddenSeconds() + o.exposedSeconds()).isCloseTo(c, within(1e-12));
      assertThat(k + o.addedSeconds()).isCloseTo(o.seconds(), within(1e-12));
      // Serial communication is never faster.
      assertThat(Overlap.serial(k, c).seconds()).isGreaterThanOrEqualTo(o.seconds() - 1e-15);
    }
  }
}
