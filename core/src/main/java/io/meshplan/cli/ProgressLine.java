package io.meshplan.cli;

import java.util.Locale;

/**
 * The one line {@link Progress} draws: the phase, how much is done of how much, the time spent
 * and, once something is done, the time left at the rate so far. For example {@code sweep:
 * 17/200 points (8%), 1:02 spent, about 11:10 left}; a phase of unknown length shows the time
 * spent only. A pure function of its arguments, so it is
 * tested without a clock or a terminal.
 */
final class ProgressLine {
  private ProgressLine() {}

  /**
   * Renders the line.
   *
   * @param phase what is being done, e.g. {@code planning}
   * @param done units done, 0 to {@code total}
   * @param total units in all, or 0 or less when unknown (then only the time spent is shown)
   * @param unit the unit's plural, e.g. {@code points}, or {@code %} when {@code total} is 100
   *     percent
   * @param elapsedNanos time since the start, nanoseconds
   * @return the line, without a line break
   */
  static String render(String phase, long done, long total, String unit, long elapsedNanos) {
    long spentSeconds = Math.max(0, elapsedNanos) / 1_000_000_000L;
    if (total <= 0) {
      return phase + ": " + clock(spentSeconds) + " spent";
    }
    long d = Math.max(0, Math.min(done, total));
    long percent = d * 100 / total;
    StringBuilder sb = new StringBuilder(phase).append(": ");
    if (unit.equals("%")) {
      sb.append(percent).append('%');
    } else {
      sb.append(d).append('/').append(total).append(' ').append(unit).append(" (")
          .append(percent).append("%)");
    }
    sb.append(", ").append(clock(spentSeconds)).append(" spent");
    if (d > 0 && d < total) {
      long left = (long) Math.ceil((double) Math.max(0, elapsedNanos) * (total - d) / d / 1e9);
      sb.append(", about ").append(clock(left)).append(" left");
    }
    return sb.toString();
  }

  /** Seconds as m:ss, or h:mm:ss from an hour on. */
  static String clock(long seconds) {
    long h = seconds / 3600;
    long m = seconds / 60 % 60;
    long s = seconds % 60;
    return h > 0 ? String.format(Locale.ROOT, "%d:%02d:%02d", h, m, s)
        : String.format(Locale.ROOT, "%d:%02d", m, s);
  }
}
