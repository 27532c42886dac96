package io.meshplan.interop.space;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The global batches a refusal offers ({@link SearchRules#nearest}) against a brute-force walk
 * from the batch down and up to the first one that some microbatch size divides in 1 to {@link
 * SearchRules#MAX_MICROBATCHES} microbatches.
 */
class NearestGlobalBatchTest {

  @Test
  void theOfferedBatchesAreTheNearestValidOnesOnEitherSide() {
    Random r = new Random(20261130L);
    for (int trial = 0; trial < 300; trial++) {
      List<Long> sizes = new ArrayList<>();
      int n = 1 + r.nextInt(5);
      for (int i = 0; i < n; i++) {
        // Microbatch sizes as the search makes them: 1, 2, 4 or 8 sequences on each of a
        // stage's replicas, replicas from 1 to 700 (odd factors included).
        sizes.add((long) (1 << r.nextInt(4)) * (1 + r.nextInt(700)));
      }
      // Batches past 65,536 single sequences too, where a size's largest multiple below is
      // 65,536 of it.
      long gb = 1 + r.nextInt(trial % 3 == 0 ? 300_000 : 20_000);
      long below = 0;
      for (long x = gb; x >= 1 && below == 0; x--) {
        if (valid(x, sizes)) {
          below = x;
        }
      }
      long above = 0;
      for (long x = gb + 1; above == 0; x++) {
        if (valid(x, sizes)) {
          above = x;
        }
      }
      String expected = below > 0 ? "such as " + below + " or " + above + " sequences"
          : "such as " + above + " sequences";
      assertThat(SearchRules.nearest(gb, sizes)).as("gb %d, sizes %s", gb, sizes)
          .endsWith(expected);
    }
  }

  @Test
  void aPrimeBatchOnOneNodeIsOfferedTheMultiplesOfItsLargestMicrobatch() {
    // On 8 GPUs the largest microbatch is 8 replicas x 8 sequences = 64; 4,194,301 is prime and
    // 4,194,301 single sequences are more than 65,536 microbatches, so 65,535 x 64 = 4,194,240
    // and 65,536 x 64 = 4,194,304 are nearest.
    List<Long> sizes = List.of(1L, 2L, 4L, 8L, 16L, 32L, 64L);
    assertThat(SearchRules.nearest(4_194_301, sizes))
        .isEqualTo("that its microbatches divide, such as 4194240 or 4194304 sequences");
  }

  private static boolean valid(long x, List<Long> sizes) {
    for (long g : sizes) {
      if (x % g == 0 && x / g >= 1 && x / g <= SearchRules.MAX_MICROBATCHES) {
        return true;
      }
    }
    return false;
  }
}
