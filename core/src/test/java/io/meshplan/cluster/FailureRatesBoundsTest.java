package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Percentage.withPercentage;

import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failure-rates file's exposure and counts lie in ranges that keep a job's mean time between
 * interruptions finite and above 0: "above 0" and "finite" let days 1e-300 and a count of 1e300
 * through, whose rate, 1e300 / 1e-300, is Infinity per GPU-day and whose MTBF is 0 (an internal
 * error).
 */
class FailureRatesBoundsTest {
  @TempDir Path dir;

  private Path file(String gpus, String days, String causes) throws Exception {
    Path f = dir.resolve("fr.yaml");
    Files.writeString(f, "source: x\ngpus: " + gpus + "\ndays: " + days + "\ncauses: " + causes
        + "\n");
    return f;
  }

  @Test
  void aFigureOutsideItsRangeIsRefusedNamingTheFileFieldAndRange() throws Exception {
    String[][] cases = {
        {"1", "1e-300", "{gpu: 1e300}", "days must be a number from 0.01 to 36,525 days"},
        {"1", "36526", "{gpu: 1}", "days must be a number from 0.01 to 36,525 days"},
        {"1e-300", "1", "{gpu: 1}", "gpus must be a number from 1 to 100,000,000 GPUs"},
        {"1e9", "1", "{gpu: 1}", "gpus must be a number from 1 to 100,000,000 GPUs"},
        {"1", "1", "{gpu: 1e300}", "causes.gpu must be a whole count >= 0, at most 1,000,000"},
        // 1e-300 interruptions over 1e8 x 36,525 GPU-days would be a rate of 2.7e-313,
        // subnormal, an MTBF of 86,400 / 2.7e-313 = 3e317 s, Infinity; interruptions are
        // counted, so it, and 1.5, are not counts at all.
        {"1e8", "36525", "{gpu: 1e-300}", "causes.gpu must be a whole count"},
        {"1", "1", "{gpu: 1.5}", "causes.gpu must be a whole count"},
        {"1e8", "36525", "{gpu: 0}", "causes must count at least 1 interruption in all"}};
    for (String[] c : cases) {
      Path f = file(c[0], c[1], c[2]);
      assertThatThrownBy(() -> FailureRates.read(f)).as(String.join(" ", c))
          .isInstanceOf(InputException.class).hasMessageStartingWith(f + ": ")
          .hasMessageContaining(c[3]);
    }
  }

  /** A cause the nodes are lost to is named once, as a name. */
  @Test
  void nodeLossNamesEachCauseOnce() throws Exception {
    Path f = dir.resolve("loss.yaml");
    for (String[] c : new String[][] {{"[gpu, gpu]", "nodeLoss names 'gpu' twice"},
        {"[1]", "nodeLoss lists cause names, got 1"}}) {
      Files.writeString(f, "source: x\ngpus: 1\ndays: 1\ncauses: {gpu: 2, nic: 1}\nnodeLoss: "
          + c[0] + "\n");
      assertThatThrownBy(() -> FailureRates.read(f)).as(c[0]).isInstanceOf(InputException.class)
          .hasMessage(f + ": " + c[1]);
    }
  }

  /** A field the format does not have is refused; a misspelled 'nodeloss' was ignored. */
  @Test
  void anUnknownFieldIsRefused() throws Exception {
    Path f = dir.resolve("extra.yaml");
    Files.writeString(f, "source: x\ngpus: 1\ndays: 1\ncauses: {gpu: 2}\nnodeloss: [gpu]\n");
    assertThatThrownBy(() -> FailureRates.read(f)).isInstanceOf(InputException.class)
        .hasMessage(f + ": unknown field 'nodeloss'; a failure-rates file has source, gpus, "
            + "days, causes and nodeLoss");
  }

  @Test
  void theCornersOfTheRangesGiveAFiniteMtbfAboveZero() throws Exception {
    // The highest rate: 10^6 interruptions over 1 x 0.01 GPU-days = 1e8 per GPU-day; on 2^20
    // GPUs the MTBF is 86,400 / (1e8 x 2^20) = 8.2e-10 s.
    FailureRates most = FailureRates.read(file("1", "0.01", "{gpu: 1000000}"));
    assertThat(most.jobMtbfSeconds(Checked.MAX_DEVICES)).isPositive()
        .isCloseTo(86_400 / (1e8 * (1 << 20)), withPercentage(1e-9));
    // The lowest: 1 over 1e8 x 36,525 GPU-days; on one GPU, 86,400 x 3.6525e12 = 3.2e17 s.
    FailureRates least = FailureRates.read(file("1e8", "36525", "{gpu: 1}"));
    assertThat(least.jobMtbfSeconds(1)).isFinite()
        .isCloseTo(86_400 * 3.6525e12, withPercentage(1e-9));
  }
}
