package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Reads a DeepSpeed launch file back by sourcing it in bash: the JSON it writes to {@code
 * $DS_CONFIG}, with {@code LR}, {@code WARMUP_ITERS} and {@code TRAIN_ITERS} set, and the {@code
 * DS_ARGS} array as words. Each read also runs shellcheck on the file.
 */
public final class DeepSpeedLaunchFiles {
  /** The values the tests give the launch file's variables. */
  public static final String LR = "0.0003";
  /** The warm-up iterations, the launch file's default. */
  public static final String WARMUP_ITERS = "2000";
  /** The training iterations. */
  public static final String TRAIN_ITERS = "10000";

  private DeepSpeedLaunchFiles() {}

  /**
   * The heredoc's text, unexpanded.
   *
   * @param launchFile the file's text
   * @return the JSON text with its {@code ${...}} expansions
   */
  public static String heredoc(String launchFile) {
    int start = launchFile.indexOf("<<JSON\n") + "<<JSON\n".length();
    int end = launchFile.indexOf("\nJSON\n", start);
    if (start < "<<JSON\n".length() || end < 0) {
      throw new AssertionError("no JSON heredoc in:\n" + launchFile);
    }
    return launchFile.substring(start, end + 1);
  }

  /**
   * The JSON that sourcing the file in bash writes, with {@code LR}, {@code TRAIN_ITERS} and
   * {@code WARMUP_ITERS} set to this class's values.
   *
   * @param launchFile the file's text
   * @return the parsed configuration
   * @throws IOException if bash fails or the file it writes is not JSON
   */
  public static JsonNode json(String launchFile) throws IOException {
    return new ObjectMapper().readTree(source(launchFile, "cat \"$DS_CONFIG\"").get(0));
  }

  /**
   * The words of {@code DS_ARGS} after sourcing the file in bash.
   *
   * @param launchFile the file's text
   * @return the words
   * @throws IOException if bash fails
   */
  public static List<String> args(String launchFile) throws IOException {
    return source(launchFile, "printf '%s\\0' \"${DS_ARGS[@]}\"");
  }

  /**
   * Sources the file under {@code set -eu} in a fresh directory, runs {@code then}, and returns
   * its output split at NUL characters; shellcheck must find nothing in the file.
   */
  private static List<String> source(String launchFile, String then) throws IOException {
    Path dir = Files.createTempDirectory("ds-launch-");
    Path f = dir.resolve("ds_launch.sh");
    try {
      Files.writeString(f, launchFile);
      ProcessBuilder pb = new ProcessBuilder("bash", "-c", "set -eu; source ./ds_launch.sh; "
          + then).directory(dir.toFile()).redirectErrorStream(true);
      pb.environment().putAll(Map.of("LR", LR, "TRAIN_ITERS", TRAIN_ITERS,
          "WARMUP_ITERS", WARMUP_ITERS));
      pb.environment().remove("DS_CONFIG");
      String out = run(pb);
      String sc = run(new ProcessBuilder("shellcheck", "--shell=bash", "--severity=style",
          f.toString()).redirectErrorStream(true));
      assertThat(sc).isEmpty();
      List<String> words = new ArrayList<>(List.of(out.split("\0", -1)));
      if (words.size() > 1) {
        words.remove(words.size() - 1);
      }
      return words;
    } finally {
      try (Stream<Path> s = Files.walk(dir)) {
        for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(q);
        }
      }
    }
  }

  private static String run(ProcessBuilder pb) throws IOException {
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      assertThat(p.waitFor()).as(out).isZero();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    return out;
  }
}
