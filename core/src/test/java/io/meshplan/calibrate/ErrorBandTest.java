package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class ErrorBandTest {
  @Test
  void aBandIsTheStudentTPredictionIntervalOfTheLogResiduals() {
    // Four runs off by x1.1 and /1.1: rms of ln ratio = ln 1.1 = 0.095310; t(0.95, 3) = 2.353;
    // sqrt(1 + 1/4) = 1.118034; w = 2.353 * 0.095310 * 1.118034 = 0.250735;
    // low = exp(-w) = 0.77822, high = exp(w) = 1.28496.
    ErrorBand b = ErrorBand.of(List.of(1.1, 1 / 1.1, 1.1, 1 / 1.1), ErrorBand.IN_SAMPLE)
        .orElseThrow();
    assertThat(b.low()).isCloseTo(0.77822, within(1e-5));
    assertThat(b.high()).isCloseTo(1.28497, within(2e-5));
    assertThat(b.residuals()).isEqualTo(4);
    assertThat(b.covers(10, 12.8)).isTrue();
    assertThat(b.covers(10, 12.9)).isFalse();
    assertThat(b.covers(10, 7.7)).isFalse();
  }

  @Test
  void aBiasWidensTheBandInsteadOfMovingIt() {
    // Three runs all 10% slower than predicted: rms = ln 1.1 even though they agree.
    ErrorBand b = ErrorBand.of(List.of(1.1, 1.1, 1.1), ErrorBand.LEAVE_ONE_STACK_OUT)
        .orElseThrow();
    assertThat(b.high()).isGreaterThan(1.1);
    assertThat(b.low() * b.high()).isCloseTo(1.0, within(1e-12));
  }

  @Test
  void fewerThanThreeResidualsGiveNoBand() {
    assertThat(ErrorBand.of(List.of(1.2, 0.9), ErrorBand.IN_SAMPLE)).isEmpty();
  }

  @Test
  void theTQuantileFollowsTheTableAndTheNormalBeyondIt() {
    assertThat(ErrorBand.t95(1)).isEqualTo(6.314);
    assertThat(ErrorBand.t95(30)).isEqualTo(1.697);
    // t(0.95, 40) = 1.684 (Abramowitz and Stegun 26.10); the correction gives
    // 1.64485 + (1.64485^3 + 1.64485) / 160 = 1.68300.
    assertThat(ErrorBand.t95(40)).isCloseTo(1.684, within(0.002));
    assertThat(ErrorBand.t95(1_000_000)).isCloseTo(1.6449, within(1e-3));
  }
}
