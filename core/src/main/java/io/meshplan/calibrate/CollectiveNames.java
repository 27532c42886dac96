package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Maps the names tools give collectives onto {@link Collective}, and back. */
public final class CollectiveNames {
  private static final Pattern PERF = Pattern.compile(
      "(?<![A-Za-z])(all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast|reduce)_perf");
  private static final Pattern LOOSE = Pattern.compile(
      "(all[_-]?reduce|all[_-]?gather|reduce[_-]?scatter|all[_-]?to[_-]?all|send[_-]?recv)",
      Pattern.CASE_INSENSITIVE);

  private CollectiveNames() {}

  /**
   * Finds an nccl-tests binary name such as {@code all_gather_perf} in a text.
   *
   * @param text the text
   * @return the collective
   */
  static Optional<Collective> fromPerfBinary(String text) {
    Matcher m = PERF.matcher(text);
    return m.find() ? Optional.of(of(m.group(1))) : Optional.empty();
  }

  /**
   * Finds a collective named loosely ({@code allreduce}, {@code all-gather}, ...) in a text.
   *
   * @param text the text
   * @return the collective
   */
  static Optional<Collective> fromLooseName(String text) {
    Matcher m = LOOSE.matcher(text);
    return m.find() ? Optional.of(of(m.group(1))) : Optional.empty();
  }

  /**
   * Parses a collective name in any of the usual spellings ({@code all_reduce}, {@code AllReduce},
   * {@code all-reduce}, {@code alltoall}).
   *
   * @param name the name
   * @return the collective
   * @throws IllegalArgumentException if the name is none of them
   */
  public static Collective of(String name) {
    String k = name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
    return switch (k) {
      case "allreduce" -> Collective.ALL_REDUCE;
      case "allgather" -> Collective.ALL_GATHER;
      case "reducescatter" -> Collective.REDUCE_SCATTER;
      case "alltoall" -> Collective.ALL_TO_ALL;
      case "sendrecv" -> Collective.SEND_RECV;
      case "broadcast" -> Collective.BROADCAST;
      case "reduce" -> Collective.REDUCE;
      default -> throw new IllegalArgumentException("not a collective: " + name);
    };
  }

  /**
   * The snake-case name used in profiles and JSON, e.g. {@code all_reduce}.
   *
   * @param c the collective
   * @return the name
   */
  public static String label(Collective c) {
    return c.name().toLowerCase(Locale.ROOT);
  }
}
