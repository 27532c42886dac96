package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.Require;

/**
 * One measured row of a benchmark log.
 *
 * <p>{@code bytes} follows nccl-tests' {@code size} column, which is also the buffer that {@link
 * io.meshplan.cluster.CommModel} prices: the all-reduce buffer, the all-gather output, the
 * reduce-scatter input, the all-to-all buffer, the send/recv message. Then algbw = bytes / seconds
 * and busbw = algbw * {@link Collective#busFactor(int)} (nccl-tests {@code doc/PERFORMANCE.md}).
 *
 * @param file the file the row came from, as given on the command line
 * @param line 1-based line number in that file
 * @param collective the collective
 * @param gpus ranks in one group
 * @param groups groups that ran at once (Alpa profiles several groups together)
 * @param nodes distinct nodes one group spans
 * @param bytes buffer size in bytes, or {@link #UNKNOWN_BYTES} when the log gives only bandwidths
 * @param seconds time of one operation in seconds, or NaN when unknown
 * @param algbw algorithm bandwidth in bytes/s (10^9 bytes/s = 1 GB/s), or NaN
 * @param busbw bus bandwidth in bytes/s, or NaN
 */
public record MeasuredPoint(String file, int line, Collective collective, int gpus, int groups,
    int nodes, long bytes, double seconds, double algbw, double busbw) {
  /** Marks a point whose message size the log does not state. */
  public static final long UNKNOWN_BYTES = -1;

  /** Validates the fields. */
  public MeasuredPoint {
    Require.nonNull(file, "file");
    Require.that(line >= 1, "line must be >= 1, got " + line);
    Require.nonNull(collective, "collective");
    Require.positive(gpus, "gpus");
    Require.positive(groups, "groups");
    Require.positive(nodes, "nodes");
    Require.that(bytes >= 0 || bytes == UNKNOWN_BYTES, "bytes must be >= 0, got " + bytes);
    Require.that(Double.isNaN(seconds) || (seconds > 0 && Double.isFinite(seconds)),
        "seconds must be positive, got " + seconds);
    Require.that(Double.isNaN(algbw) || (algbw >= 0 && Double.isFinite(algbw)),
        "algbw must be >= 0, got " + algbw);
    Require.that(Double.isNaN(busbw) || (busbw >= 0 && Double.isFinite(busbw)),
        "busbw must be >= 0, got " + busbw);
    Require.that(bytes != UNKNOWN_BYTES || !Double.isNaN(busbw),
        "a point without a size needs a bus bandwidth");
    Require.that(bytes == UNKNOWN_BYTES || !Double.isNaN(seconds),
        "a point with a size needs a time");
  }

  /**
   * Whether the message size is known (and with it the time).
   *
   * @return true if {@code bytes} and {@code seconds} are set
   */
  public boolean sized() {
    return bytes != UNKNOWN_BYTES;
  }

  /**
   * The link level of the group.
   *
   * @return intra-node for one node
   */
  public LinkLevel level() {
    return LinkLevel.ofNodes(nodes);
  }

  /**
   * Where the row is, as {@code file:line}.
   *
   * @return the position
   */
  public String where() {
    return file + ":" + line;
  }
}
