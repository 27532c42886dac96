package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class IsotonicRegressionTest {
  private static double[] ones(int n) {
    double[] w = new double[n];
    Arrays.fill(w, 1.0);
    return w;
  }

  @Test
  void poolsAViolatingPair() {
    // 3 > 2 violates: pooled to (3+2)/2 = 2.5.
    double[] y = new IsotonicRegression().fit(new double[] {1, 3, 2, 4}, ones(4));
    assertThat(y).containsExactly(1, 2.5, 2.5, 4);
  }

  @Test
  void poolsBackwardsWithWeights() {
    // 5, 1 (weight 3) pool to (5 + 3)/4 = 2, then 2 > 1.5 pools again:
    // (5 + 3 + 1.5) / 5 = 1.9 for all three.
    double[] y = new IsotonicRegression().fit(new double[] {5, 1, 1.5}, new double[] {1, 3, 1});
    assertThat(y[0]).isCloseTo(1.9, within(1e-12));
    assertThat(y[1]).isCloseTo(1.9, within(1e-12));
    assertThat(y[2]).isCloseTo(1.9, within(1e-12));
  }

  @Property(tries = 300)
  void resultIsNonDecreasingAndKeepsTheWeightedSum(
      @ForAll @Size(min = 1, max = 40) List<@DoubleRange(min = -1e3, max = 1e3) Double> values) {
    double[] y = values.stream().mapToDouble(Double::doubleValue).toArray();
    double[] w = new double[y.length];
    for (int i = 0; i < w.length; i++) {
      w[i] = 1 + (i % 3);
    }
    double[] fit = new IsotonicRegression().fit(y, w);
    double before = 0;
    double after = 0;
    for (int i = 0; i < y.length; i++) {
      if (i > 0) {
        assertThat(fit[i]).isGreaterThanOrEqualTo(fit[i - 1]);
      }
      before += w[i] * y[i];
      after += w[i] * fit[i];
    }
    assertThat(after).isCloseTo(before, within(1e-6 * (1 + Math.abs(before))));
  }

  @Property(tries = 300)
  void monotoneDataIsLeftAlone(
      @ForAll @Size(min = 1, max = 40) List<@DoubleRange(min = 0, max = 1e3) Double> values) {
    double[] y = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    assertThat(new IsotonicRegression().fit(y, ones(y.length))).containsExactly(y);
  }
}
