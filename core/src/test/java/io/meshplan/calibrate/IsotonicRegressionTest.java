package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.testing.Cases;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class IsotonicRegressionTest {
  private static double[] ones(int n) {
    double[] w = new double[n];
    Arrays.fill(w, 1.0);
    return w;
  }

  /**
   * Lists of values in [min, max]: one value (zero and each end), the two ends descending, and
   * the longest lists: all zero, all one end, the ends alternating, and stepping from max to min.
   */
  private static List<List<Double>> edges(double min, double max) {
    List<List<Double>> edges = new ArrayList<>();
    edges.add(List.of(0.0));
    edges.add(List.of(min));
    edges.add(List.of(max));
    edges.add(List.of(max, min));
    edges.add(Collections.nCopies(40, 0.0));
    edges.add(Collections.nCopies(40, min));
    edges.add(Collections.nCopies(40, max));
    List<Double> alternating = new ArrayList<>();
    List<Double> descending = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      alternating.add(i % 2 == 0 ? max : min);
      descending.add(max - (max - min) * i / 39);
    }
    edges.add(alternating);
    edges.add(descending);
    return edges;
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

  @Test
  void resultIsNonDecreasingAndKeepsTheWeightedSum() {
    Cases.check(41, 300, edges(-1e3, 1e3), g -> g.list(1, 40, e -> e.between(-1e3, 1e3)),
        values -> {
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
        });
  }

  @Test
  void monotoneDataIsLeftAlone() {
    Cases.check(43, 300, edges(0, 1e3), g -> g.list(1, 40, e -> e.between(0, 1e3)), values -> {
      double[] y = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      assertThat(new IsotonicRegression().fit(y, ones(y.length))).containsExactly(y);
    });
  }
}
