package io.meshplan.interop.dp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The stage options the filter keeps, against a brute-force reference on seeded random options
 * drawn from few values, so that ties in every field are common.
 */
class ParetoFilterTest {
  /** Whether {@code p} comes before {@code o}: latency, static, activation memory, then tag. */
  private static boolean before(StageOption p, StageOption o) {
    if (p.latencySeconds() != o.latencySeconds()) {
      return p.latencySeconds() < o.latencySeconds();
    }
    if (p.staticBytes() != o.staticBytes()) {
      return p.staticBytes() < o.staticBytes();
    }
    if (p.activationBytes() != o.activationBytes()) {
      return p.activationBytes() < o.activationBytes();
    }
    return p.tag() < o.tag();
  }

  /**
   * An option is kept when no option before it needs as little memory of both kinds; the kept
   * come in the order of {@link #before}, found by counting the options before each.
   */
  private static List<StageOption> reference(List<StageOption> all) {
    List<StageOption> kept = new ArrayList<>();
    for (StageOption o : all) {
      boolean dominated = false;
      for (StageOption p : all) {
        if (p != o && before(p, o) && p.staticBytes() <= o.staticBytes()
            && p.activationBytes() <= o.activationBytes()) {
          dominated = true;
        }
      }
      if (!dominated) {
        kept.add(o);
      }
    }
    kept.sort((a, b) -> before(a, b) ? -1 : before(b, a) ? 1 : 0);
    return kept;
  }

  @Test
  void keepsWhatNoEarlierOptionDominatesInOrder() {
    SplittableRandom r = new SplittableRandom(6151);
    for (int round = 0; round < 3000; round++) {
      int n = r.nextInt(30);
      List<StageOption> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        // Tags are unique, as the search's are.
        all.add(new StageOption(r.nextInt(4) * 0.5, r.nextInt(4) * 1e9,
            r.nextBoolean() ? 0.0 : r.nextInt(3) * 2e8, r.nextInt(1000) * 100 + i));
      }
      assertThat(ParetoFilter.nonDominated(all)).as("round %d: %s", round, all)
          .containsExactlyElementsOf(reference(all));
    }
  }

  @Test
  void anOptionBeatenInAllThreeIsDroppedAndEqualOnesKeepTheFirst() {
    StageOption fast = new StageOption(1, 10, 5, 0);
    StageOption slowSmall = new StageOption(2, 5, 5, 1);
    StageOption beaten = new StageOption(3, 10, 5, 2);
    StageOption twin = new StageOption(1, 10, 5, 3);
    assertThat(ParetoFilter.nonDominated(List.of(beaten, twin, slowSmall, fast)))
        .containsExactly(fast, slowSmall);
  }
}
