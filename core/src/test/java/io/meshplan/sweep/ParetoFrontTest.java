package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ParetoFrontTest {
  private static PointResult ok(int index, String model, int nodes, double tokensPerSecond) {
    SweepPoint p = new SweepPoint(index, model, 2048, nodes, 8, "h100-80gb", "ib-ndr400", 512, 0,
        false);
    return new PointResult(p, PointStatus.OK, 1.0, tokensPerSecond, 1, 0.5, 1, Double.NaN,
        Double.NaN, "", "");
  }

  @Test
  void keepsPointsNoOtherBeats() {
    List<PointResult> rs = List.of(ok(0, "a", 1, 100), ok(1, "a", 2, 90), ok(2, "a", 2, 150),
        ok(3, "a", 4, 150), ok(4, "a", 8, 400), ok(5, "b", 4, 10),
        PointResult.failed(new SweepPoint(6, "a", 2048, 16, 8, "h100-80gb", "ib-ndr400", 512, 0,
            false), PointStatus.INFEASIBLE, 9e10, Double.NaN, "no"));
    Map<String, List<PointResult>> f = ParetoFront.of(rs);
    // Point 1 loses to 2 (same GPUs, fewer tokens/s), 3 to 2 (more GPUs, no faster), 6 is not
    // planned; model b has its own front.
    assertThat(f.keySet()).containsExactly("a, seq 2048", "b, seq 2048");
    assertThat(f.get("a, seq 2048")).extracting(r -> r.point().index()).containsExactly(0, 2, 4);
    assertThat(f.get("b, seq 2048")).extracting(r -> r.point().index()).containsExactly(5);
  }

  /** Brute force on random points: kept exactly when no other point dominates it. */
  @Test
  void matchesBruteForce() {
    Random rnd = new Random(11);
    for (int trial = 0; trial < 200; trial++) {
      List<PointResult> rs = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        rs.add(ok(i, "m", 1 + rnd.nextInt(5), 10 * (1 + rnd.nextInt(6))));
      }
      List<Integer> expected = new ArrayList<>();
      for (PointResult r : rs) {
        boolean dominated = false;
        for (PointResult o : rs) {
          boolean noWorse = o.point().gpus() <= r.point().gpus()
              && o.tokensPerSecond() >= r.tokensPerSecond();
          boolean better = o.point().gpus() < r.point().gpus()
              || o.tokensPerSecond() > r.tokensPerSecond();
          // Equal points: the earlier one stays.
          boolean earlierTwin = !better && o.point().gpus() == r.point().gpus()
              && o.tokensPerSecond() == r.tokensPerSecond() && o.point().index() < r.point().index();
          if (noWorse && (better || earlierTwin)) {
            dominated = true;
          }
        }
        if (!dominated) {
          expected.add(r.point().index());
        }
      }
      assertThat(ParetoFront.of(rs).get("m, seq 2048")).extracting(r -> r.point().index())
          .containsExactlyInAnyOrderElementsOf(expected);
    }
  }
}
