package io.meshplan.cli;

import java.io.PrintWriter;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Progress on standard error while a long search runs: one line ({@link ProgressLine}) redrawn in
 * place with a carriage return, and erased at the end so that only the answer stays. Nothing at
 * all is written unless standard error is a terminal ({@code System.console()} is present) and
 * {@code --quiet} is absent, so scripts, pipes, CI logs and tests see no progress.
 *
 * <p>The line is redrawn when the work advances and once a second from a daemon thread, so the
 * time spent moves while a long phase reports nothing; the clock is injected for tests.
 */
final class Progress implements AutoCloseable {
  private static final long REDRAW_NANOS = 1_000_000_000L;

  private final PrintWriter err;
  private final boolean terminal;
  private final LongSupplier nanos;
  private final String phase;
  private final String unit;
  private final long total;
  private final long start;
  private ScheduledExecutorService ticker;
  private long done;
  private int drawnWidth;

  /**
   * A progress line.
   *
   * @param err where to draw it
   * @param terminal whether {@code err} is a terminal; when false nothing is ever written
   * @param nanos a monotonic clock, nanoseconds
   * @param phase what is being done
   * @param unit the units' plural, or {@code %} for a percentage ({@code total} 100)
   * @param total units in all, or 0 when unknown (only the time spent is shown)
   */
  Progress(PrintWriter err, boolean terminal, LongSupplier nanos, String phase, String unit,
      long total) {
    this.err = err;
    this.terminal = terminal;
    this.nanos = nanos;
    this.phase = phase;
    this.unit = unit;
    this.total = Math.max(0, total);
    this.start = nanos.getAsLong();
  }

  /**
   * Starts a progress line on a command's standard error, redrawn every second.
   *
   * @param err the command's standard error
   * @param quiet whether {@code --quiet} was given
   * @param phase what is being done
   * @param unit the units' plural, or {@code %} for a percentage
   * @param total units in all, or 0 when unknown
   * @return the line (inert without a terminal or with {@code --quiet})
   */
  static Progress start(PrintWriter err, boolean quiet, String phase, String unit, long total) {
    Progress p = new Progress(err, !quiet && System.console() != null, System::nanoTime, phase,
        unit, total);
    if (p.terminal) {
      p.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "meshplan-progress");
        t.setDaemon(true);
        return t;
      });
      p.ticker.scheduleAtFixedRate(p::redraw, REDRAW_NANOS, REDRAW_NANOS, TimeUnit.NANOSECONDS);
      p.redraw();
    }
    return p;
  }

  /**
   * Runs work of unknown length under a progress line that shows the time spent.
   *
   * @param err the command's standard error
   * @param quiet whether {@code --quiet} was given
   * @param phase what is being done
   * @param work the work
   * @param <T> its result's type
   * @return its result
   */
  static <T> T during(PrintWriter err, boolean quiet, String phase,
      java.util.function.Supplier<T> work) {
    try (Progress p = start(err, quiet, phase, "", 0)) {
      p.redraw();
      return work.get();
    }
  }

  /**
   * A line that draws nothing (when another component shows progress).
   *
   * @return the inert line
   */
  static Progress none() {
    return new Progress(new PrintWriter(java.io.Writer.nullWriter()), false, () -> 0, "", "%", 1);
  }

  /**
   * Records how much is done and redraws the line if it moved.
   *
   * @param units done so far (a percentage when the unit is {@code %})
   */
  synchronized void update(long units) {
    long d = Math.max(0, Math.min(total, units));
    if (d != done) {
      done = d;
      redraw();
    }
  }

  /** Draws the line again (the time spent moves even when nothing is done). */
  synchronized void redraw() {
    if (!terminal) {
      return;
    }
    String line = ProgressLine.render(phase, done, total, unit, nanos.getAsLong() - start);
    TerminalWriter.printVerbatim(err,
        "\r" + line + " ".repeat(Math.max(0, drawnWidth - line.length())));
    drawnWidth = line.length();
  }

  /** Stops the redraws and erases the line. */
  @Override
  public synchronized void close() {
    if (ticker != null) {
      ticker.shutdownNow();
    }
    if (terminal && drawnWidth > 0) {
      TerminalWriter.printVerbatim(err, "\r" + " ".repeat(drawnWidth) + "\r");
      drawnWidth = 0;
    }
  }
}
