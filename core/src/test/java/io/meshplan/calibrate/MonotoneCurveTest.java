package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MonotoneCurveTest {
  // (1 KiB, 10 us), (1 MiB, 20 us), tail slope 1e-11 s/B (100 GB/s)
  private final MonotoneCurve curve =
      new MonotoneCurve(new double[] {1024, 1048576}, new double[] {10e-6, 20e-6}, 1e-11);

  @Test
  void interpolatesLinearly() {
    // halfway in bytes: (1024 + 1048576) / 2 = 524800 -> 15 us
    assertThat(curve.secondsAt(524800)).isCloseTo(15e-6, within(1e-15));
    assertThat(curve.secondsAt(1048576)).isCloseTo(20e-6, within(1e-15));
  }

  @Test
  void extrapolatesWithTheLatencyFloorBelowAndTheTailSlopeAbove() {
    assertThat(curve.secondsAt(8)).isEqualTo(10e-6);
    // 20 us + 1e-11 * (2^21 - 2^20) = 20 us + 10.48576 us = 30.48576 us
    assertThat(curve.secondsAt(2097152)).isCloseTo(30.48576e-6, within(1e-15));
  }

  @Test
  void rejectsDecreasingTimes() {
    assertThatThrownBy(() -> new MonotoneCurve(new double[] {1, 2}, new double[] {2, 1}, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
