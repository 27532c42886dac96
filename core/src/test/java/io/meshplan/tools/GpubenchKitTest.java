package io.meshplan.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the Python tests of {@code tools/gpubench} (the GPU measurement kit) with the standard
 * library's unittest, from the repository root, which is surefire's working directory. The kit's
 * arguments, time plan, formulas and CSV writer need no torch and no GPU, so they are tested on
 * every build. Fails, never skips, when python3 is missing: {@code .ci/run} installs Debian's.
 */
class GpubenchKitTest {
  /** Fewer tests than this means discovery lost a file, not that the kit shrank. */
  private static final int LEAST_TESTS = 100;

  static Optional<Path> python3() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, "python3");
      if (Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  @Test
  void pythonUnitTestsPass(@TempDir Path dir) throws Exception {
    Optional<Path> python = python3();
    assertThat(python).as("python3 on PATH (apt-get install -y python3; .ci/run does it)")
        .isPresent();
    Path tests = Path.of("tools", "gpubench", "tests");
    assertThat(tests).as("tools/gpubench/tests under the working directory (the repository root)")
        .isDirectory();
    Path log = dir.resolve("unittest.log");
    ProcessBuilder pb = new ProcessBuilder(List.of(python.get().toString(), "-m", "unittest",
        "discover", "-s", tests.toString()));
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    pb.redirectErrorStream(true).redirectOutput(log.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    Process process = pb.start();
    boolean done = process.waitFor(300, TimeUnit.SECONDS);
    if (!done) {
      process.destroyForcibly();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(done).as("python3 -m unittest finished within 300 s:%n%s", output).isTrue();
    assertThat(process.exitValue()).as("python3 -m unittest exit code:%n%s", output).isZero();
    Matcher ran = Pattern.compile("(?m)^Ran (\\d+) tests? in ").matcher(output);
    assertThat(ran.find()).as("unittest's summary line:%n%s", output).isTrue();
    assertThat(Integer.parseInt(ran.group(1))).as("tests run:%n%s", output)
        .isGreaterThanOrEqualTo(LEAST_TESTS);
    assertThat(output).as("unittest's verdict").containsPattern("(?m)^OK( \\(.*\\))?$");
  }
}
