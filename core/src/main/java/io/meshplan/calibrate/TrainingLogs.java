package io.meshplan.calibrate;

import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a training log of either framework ({@link MegatronLog}, {@link TorchtitanLog}), with the
 * caps that keep a wrong file from hanging or exhausting the process: regular files only (a FIFO
 * or a device such as /dev/zero is refused before it is opened), at most {@link #MAX_BYTES} bytes,
 * lines of at most {@link #MAX_LINE} characters.
 *
 * <p>Warm-up: the iteration time is the median of the logged iteration lines after the first. The
 * first line of either framework covers the first iterations of the job, which pay for CUDA
 * context and NCCL communicator set-up, allocator growth, autotuning and (torchtitan) compilation;
 * the median of the rest is robust to an occasional slow interval (a checkpoint save, an
 * evaluation).
 */
public final class TrainingLogs {
  /** The largest log read, bytes (64 MiB). */
  public static final long MAX_BYTES = InputFiles.LOG_MAX_BYTES;
  /** The longest line read, characters. */
  public static final int MAX_LINE = 64 * 1024;

  private static final Pattern GPU = Pattern.compile("NVIDIA (A100|H100|H200|B200|V100)");

  private TrainingLogs() {}

  /**
   * Reads and parses one log; its framework is told by its content.
   *
   * @param file the log
   * @param config torchtitan's job config (TOML), empty when none was given
   * @return the run
   * @throws InputException in one line naming the file and what is missing
   */
  public static TrainingRun read(Path file, Optional<Path> config) {
    List<String> lines = lines(file, InputFiles.readString(file, MAX_BYTES, "training log"));
    String name = file.toString();
    for (Reader r : READERS) {
      if (r.recognizes().test(lines)) {
        return r.parser().parse(name, lines, config);
      }
    }
    throw new InputException(name + ": neither " + String.join(" nor ",
        READERS.stream().map(Reader::unlike).toList()));
  }

  /**
   * One framework's log reader: how its logs are told apart and read.
   *
   * @param framework the framework's name, as {@link TrainingRun#framework} says it
   * @param recognizes whether a log's lines are the framework's
   * @param parser reads the run from the lines, with the job config when one was given
   * @param unlike what a log that is not the framework's lacks, for the refusal of an unknown log
   */
  record Reader(String framework, java.util.function.Predicate<List<String>> recognizes,
      Parser parser, String unlike) {}

  /** Reads one run from a log's lines. */
  @FunctionalInterface
  interface Parser {
    /**
     * Reads the run.
     *
     * @param file the log's name for messages
     * @param lines its lines
     * @param config the job config given with it, if any
     * @return the run
     */
    TrainingRun parse(String file, List<String> lines, Optional<Path> config);
  }

  /** The log readers, registered once, tried in this order. */
  static final List<Reader> READERS = List.of(
      new Reader("megatron", MegatronLog::recognizes, (f, l, c) -> MegatronLog.parse(f, l),
          "a Megatron-LM log (no '---- arguments ----' block)"),
      new Reader("torchtitan", TorchtitanLog::recognizes, TrainingLogs::torchtitan,
          "a torchtitan log (no 'step: N ... tps: N' lines)"));

  /** A torchtitan log, read with its TOML job config, which the log does not restate. */
  private static TrainingRun torchtitan(String name, List<String> lines, Optional<Path> config) {
    if (config.isEmpty()) {
      throw new InputException(name + ": a torchtitan log does not state its job; give its "
          + "TOML job config with --config");
    }
    String toml = InputFiles.readString(config.get(), InputFiles.CLUSTER_MAX_BYTES,
        "torchtitan job config");
    return TorchtitanLog.parse(name, lines, TomlSubset.parse(config.get().toString(), toml));
  }

  /** The text's lines, refused when one is longer than {@link #MAX_LINE}. */
  static List<String> lines(Path file, String text) {
    if (text.indexOf('\0') >= 0) {
      throw new InputException(file + ": contains NUL bytes; a training log is text");
    }
    List<String> lines = Arrays.asList(text.split("\r?\n", -1));
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).length() > MAX_LINE) {
        throw new InputException(file + ":" + (i + 1) + ": line longer than " + MAX_LINE
            + " characters; is this a training log?");
      }
    }
    return lines;
  }

  /**
   * The GPU architecture a log names ({@code NVIDIA H100 80GB HBM3} gives {@code h100}).
   *
   * @param lines the log
   * @return the lower-case architecture, empty when no line names one
   */
  static Optional<String> gpu(List<String> lines) {
    for (String l : lines) {
      Matcher m = GPU.matcher(l);
      if (m.find()) {
        return Optional.of(m.group(1).toLowerCase(java.util.Locale.ROOT));
      }
    }
    return Optional.empty();
  }

  /**
   * The median of the values after the first (see the class comment).
   *
   * @param file the log, for messages
   * @param values the values in log order
   * @param what what the lines are, for messages
   * @return the median
   */
  static double steadyMedian(String file, List<Double> values, String what) {
    if (values.size() < 2) {
      throw new InputException(file + ": " + values.size() + " usable " + what + " line(s); "
          + "need at least 2, as the first covers the warm-up (log a longer run)");
    }
    double[] v = values.subList(1, values.size()).stream().mapToDouble(Double::doubleValue)
        .sorted().toArray();
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
