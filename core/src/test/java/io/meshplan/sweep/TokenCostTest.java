package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class TokenCostTest {
  @Test
  void costPerMillionTokens() {
    // 64 GPUs * 10 s / 3600 = 0.177778 GPU-hours; * 2 USD = 0.355556 USD per iteration;
    // 1024 * 4096 = 4,194,304 tokens = 4.194304 million; 0.355556 / 4.194304 = 0.0847711.
    assertThat(TokenCost.usdPerMillionTokens(2.0, 64, 10.0, 1024L * 4096))
        .isCloseTo(0.0847711, within(1e-7));
    // Twice the GPUs at half the time cost the same; twice the price costs twice as much.
    assertThat(TokenCost.usdPerMillionTokens(2.0, 128, 5.0, 1024L * 4096))
        .isCloseTo(0.0847711, within(1e-7));
    assertThat(TokenCost.usdPerMillionTokens(4.0, 64, 10.0, 1024L * 4096))
        .isCloseTo(0.1695421, within(1e-7));
    assertThat(TokenCost.usdPerMillionTokens(0.0, 64, 10.0, 1024L * 4096)).isZero();
  }
}
