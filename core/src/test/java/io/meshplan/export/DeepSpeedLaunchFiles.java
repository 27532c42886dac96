package io.meshplan.export;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a DeepSpeed launch file back as the shell would: the JSON heredoc, with {@code ${LR}},
 * {@code ${WARMUP_ITERS}} and {@code ${TRAIN_ITERS}} expanded to fixed values, and the {@code
 * DS_ARGS} array as words.
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
   * The JSON as sourcing the file writes it.
   *
   * @param launchFile the file's text
   * @return the parsed configuration
   * @throws IOException if the expanded heredoc is not JSON
   */
  public static JsonNode json(String launchFile) throws IOException {
    return new ObjectMapper().readTree(heredoc(launchFile).replace("${LR}", LR)
        .replace("${WARMUP_ITERS}", WARMUP_ITERS).replace("${TRAIN_ITERS}", TRAIN_ITERS));
  }

  /**
   * The words of {@code DS_ARGS}, split on spaces (the writer quotes none it needs quoted here).
   *
   * @param launchFile the file's text
   * @return the words, shell quotes of {@code "$X"} removed
   */
  public static List<String> args(String launchFile) {
    int start = launchFile.indexOf("DS_ARGS=(\n") + "DS_ARGS=(\n".length();
    int end = launchFile.indexOf("\n)\n", start);
    List<String> words = new ArrayList<>();
    for (String w : launchFile.substring(start, end).strip().split("\\s+")) {
      words.add(w.replace("\"", ""));
    }
    return words;
  }
}
