package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link MoeShape#expectedParts}: the distinct GPUs or nodes a token's experts fall in under
 * uniform routing, against exhaustive enumeration on small layers and pinned on real ones.
 */
class ExpectedPartsTest {
  /**
   * The exact expectation by enumerating every choice a token can make: each set of {@code M}
   * groups with equal chance, then each set of {@code k} experts among the chosen groups' experts
   * with equal chance; the parts are {@code E/P} consecutive experts each.
   */
  private static double enumerate(int experts, int k, int groups, int topGroups, int parts) {
    int perGroup = experts / groups;
    int perPart = experts / parts;
    double total = 0;
    int groupSets = 0;
    for (int gm = 0; gm < 1 << groups; gm++) {
      if (Integer.bitCount(gm) != topGroups) {
        continue;
      }
      groupSets++;
      int[] allowed = new int[topGroups * perGroup];
      int n = 0;
      for (int e = 0; e < experts; e++) {
        if ((gm >> (e / perGroup) & 1) == 1) {
          allowed[n++] = e;
        }
      }
      double sum = 0;
      int sets = 0;
      for (int em = 0; em < 1 << n; em++) {
        if (Integer.bitCount(em) != k) {
          continue;
        }
        sets++;
        long touched = 0;
        for (int i = 0; i < n; i++) {
          if ((em >> i & 1) == 1) {
            touched |= 1L << (allowed[i] / perPart);
          }
        }
        sum += Long.bitCount(touched);
      }
      total += sum / sets;
    }
    return total / groupSets;
  }

  @Test
  void seededRandomLayersMatchEnumeration() {
    Random rnd = new Random(20261129);
    int checked = 0;
    for (int i = 0; i < 300 && checked < 60; i++) {
      int experts = new int[] {4, 6, 8, 12, 16}[rnd.nextInt(5)];
      int k = 1 + rnd.nextInt(Math.min(4, experts));
      int[] divisors = java.util.stream.IntStream.rangeClosed(1, experts)
          .filter(d -> experts % d == 0).toArray();
      int groups = divisors[rnd.nextInt(divisors.length)];
      int topGroups = 1 + rnd.nextInt(groups);
      if (topGroups * (experts / groups) < k || (groups == 1 && topGroups != 1)) {
        continue;
      }
      int parts = divisors[rnd.nextInt(divisors.length)];
      if (groups > 1 && groups % parts != 0 && parts % groups != 0) {
        continue;
      }
      MoeShape moe = new MoeShape(experts, k, 64, 0, false).withGroupLimit(groups, topGroups);
      assertThat(moe.expectedParts(parts))
          .as("E %d k %d groups %d of %d parts %d", experts, k, topGroups, groups, parts)
          .isCloseTo(enumerate(experts, k, groups, topGroups, parts), within(1e-9));
      checked++;
    }
    assertThat(checked).isEqualTo(60);
  }

  /**
   * Qwen3-30B-A3B (128 experts, top 8) over 2 nodes: a token misses a node when all 8 experts lie
   * on the other, C(64, 8) / C(128, 8) = prod_{i<8} (64 - i) / (128 - i) = 0.003096, so it
   * reaches 2 (1 - 0.003096) = 1.99381 nodes. DeepSeek-V3 (256 experts, top 8 of 4 of 8 groups)
   * over 8 nodes, one group each: a node is picked with chance 4/8 and then missed with chance
   * C(96, 8) / C(128, 8) = 0.09275, so 8 x 0.5 x 0.90725 = 3.629 nodes (at most 4: DeepSeek-V3's
   * node-limited routing); without the limit 8 (1 - C(224, 8) / C(256, 8)) = 5.295.
   */
  @Test
  void realLayersArePinned() {
    MoeShape qwen = new MoeShape(128, 8, 768, 0, false);
    assertThat(qwen.expectedParts(2)).isCloseTo(1.99381, within(1e-5));
    assertThat(qwen.expectedParts(1)).isEqualTo(1.0);
    MoeShape v3 = Presets.get("deepseek-v3").arch().moe();
    assertThat(v3.groups()).isEqualTo(8);
    assertThat(v3.groupTopK()).isEqualTo(4);
    assertThat(v3.expectedParts(8)).isCloseTo(3.629, within(1e-3));
    assertThat(v3.withGroupLimit(1, 1).expectedParts(8)).isCloseTo(5.295, within(1e-3));
    // Every expert on its own part: each of the k experts is a distinct part.
    assertThat(qwen.expectedParts(128)).isCloseTo(8.0, within(1e-12));
  }

  @Test
  void groupLimitsThatCannotHoldTheExpertsAreRefused() {
    MoeShape moe = new MoeShape(16, 8, 64, 0, false);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> moe.withGroupLimit(8, 3))
        .hasMessageContaining("router groups");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> moe.withGroupLimit(5, 5))
        .hasMessageContaining("router groups");
  }
}
