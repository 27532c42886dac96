package io.meshplan.interop;

import io.meshplan.util.Require;
import java.util.function.IntConsumer;

/**
 * The share of a pipeline search done, told as a percentage that only grows and reaches 100 only
 * at the end. Every task counts one unit: each layer priced before the search, each microbatch
 * size searched, and each interleaved search (one per size, counted before it is known how many
 * sizes found a plan; the sizes without one are skipped at the end). The executors report each
 * finished task from their worker threads, possibly out of order; the percentage is the largest
 * seen.
 */
final class SearchProgress {
  private final IntConsumer percent;
  private final long total;
  private long finished;
  private int told = -1;

  /**
   * Starts at 0%.
   *
   * @param percent told the percentage done, 0 to 100
   * @param total the units of the whole search, at least 1
   */
  SearchProgress(IntConsumer percent, long total) {
    this.percent = Require.nonNull(percent, "percent");
    this.total = Math.max(1, total);
    tell(0);
  }

  /**
   * A listener for one phase's executor: told how many of its tasks are done.
   *
   * @return the listener
   */
  synchronized IntConsumer phase() {
    long base = finished;
    return n -> tell(base + n);
  }

  /**
   * Ends a phase of {@code units} tasks.
   *
   * @param units the phase's tasks
   */
  synchronized void finish(int units) {
    finished += units;
    tell(finished);
  }

  /** Tells 100%: the search is over. */
  synchronized void done() {
    told = 100;
    percent.accept(100);
  }

  private synchronized void tell(long units) {
    // 99 at most until done(): the phases' counts are estimates until the last one ends.
    int p = (int) Math.min(99, units * 100 / total);
    if (p > told) {
      told = p;
      percent.accept(p);
    }
  }
}
