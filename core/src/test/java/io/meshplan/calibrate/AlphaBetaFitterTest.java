package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import org.junit.jupiter.api.Test;

class AlphaBetaFitterTest {
  private static final double ALPHA = 12e-6; // 12 us
  private static final double BETA = 1 / 200e9; // 200 GB/s bus bandwidth

  /** Bus bytes of an 8-rank all-reduce sweep 8 B .. 8 GiB: x = 2*7/8 * 2^k. */
  private static double[] sweep() {
    double[] x = new double[31];
    for (int k = 0; k < 31; k++) {
      x[k] = 1.75 * Math.pow(2, k + 3);
    }
    return x;
  }

  @Test
  void exactDataIsRecoveredExactly() {
    double[] x = sweep();
    double[] t = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      t[i] = ALPHA + BETA * x[i];
    }
    AlphaBeta ab = new AlphaBetaFitter().fit(x, t);
    assertThat(ab.alpha()).isCloseTo(ALPHA, within(ALPHA * 1e-9));
    assertThat(ab.beta()).isCloseTo(BETA, within(BETA * 1e-9));
  }

  @Test
  void noisyDataIsRecoveredWithinTolerance() {
    // Multiplicative noise uniform in +-3% (seed 42), as run-to-run jitter of nccl-tests.
    // Stated tolerance: alpha within 3%, beta within 2%.
    Random rnd = new Random(42);
    double[] x = sweep();
    double[] t = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      t[i] = (ALPHA + BETA * x[i]) * (1 + (rnd.nextDouble() * 2 - 1) * 0.03);
    }
    AlphaBeta ab = new AlphaBetaFitter().fit(x, t);
    assertThat(ab.alpha()).isCloseTo(ALPHA, within(0.03 * ALPHA));
    assertThat(ab.beta()).isCloseTo(BETA, within(0.02 * BETA));
  }

  @Test
  void negativeInterceptIsClampedToZero() {
    // t = 2x - 1 on x = 1, 2, 3: unconstrained alpha would be -1; through the origin
    // beta = sum(w x t) / sum(w x^2) with w = 1/t^2 = (1, 1/9, 1/25):
    // sum w x t = 1 + 2*3/9 + 3*5/25 = 1 + 0.6667 + 0.6 = 2.2667;
    // sum w x^2 = 1 + 4/9 + 9/25 = 1 + 0.4444 + 0.36 = 1.8044; beta = 1.2562.
    AlphaBeta ab = new AlphaBetaFitter().fit(new double[] {1, 2, 3}, new double[] {1, 3, 5});
    assertThat(ab.alpha()).isZero();
    assertThat(ab.beta()).isCloseTo(2.26667 / 1.80444, within(1e-4));
  }

  @Test
  void singleSizeGoesThroughTheOrigin() {
    // Alpa profiles one size: 2 GiB all-reduce on 8 GPUs in 0.01623 s.
    double x = 1.75 * 2147483648.0;
    AlphaBeta ab = new AlphaBetaFitter().fit(new double[] {x}, new double[] {0.01623});
    assertThat(ab.alpha()).isZero();
    // 1/beta = 1.75 * 2^31 / 0.01623 = 231.55e9 B/s
    assertThat(1 / ab.beta()).isCloseTo(231.55e9, within(0.01e9));
  }
}
