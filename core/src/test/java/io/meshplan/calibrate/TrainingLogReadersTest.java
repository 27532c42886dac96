package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training-log readers are registered once ({@link TrainingLogs#READERS}): each framework
 * once, a log is read by the reader that recognizes it, and a log no reader recognizes is refused
 * naming what each framework's log would have.
 */
class TrainingLogReadersTest {
  @TempDir Path dir;

  @Test
  void eachFrameworkIsRegisteredOnceAndReadsItsOwnLogs() throws Exception {
    assertThat(TrainingLogs.READERS.stream().map(TrainingLogs.Reader::framework))
        .containsExactly("megatron", "torchtitan");
    Path log = Path.of(TrainingLogReadersTest.class
        .getResource("/calibrate/train/megatron_gpt_interleaved.log").toURI());
    assertThat(TrainingLogs.read(log, Optional.empty()).framework()).isEqualTo("megatron");
  }

  @Test
  void anUnknownLogNamesEveryRegisteredFramework() throws IOException {
    Path f = Files.writeString(dir.resolve("x.log"), "hello\n");
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .isInstanceOf(InputException.class)
        .hasMessage(f + ": neither a Megatron-LM log (no '---- arguments ----' block) nor a "
            + "torchtitan log (no 'step: N ... tps: N' lines)");
  }
}
