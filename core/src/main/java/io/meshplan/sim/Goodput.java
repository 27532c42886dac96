package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The expected wall-clock time of a training run that is interrupted at random, checkpoints
 * every {@code k} iterations and restarts from its last checkpoint (Daly, "A higher order
 * estimate of the optimum checkpoint interval for restart dumps", Future Generation Computer
 * Systems 22(3):303-312, 2006). Interruptions form a Poisson process of mean time between them
 * {@code M}; each costs a restart of {@code R} seconds, during which another may strike; a
 * checkpoint blocks training for {@code delta} seconds and may itself be interrupted.
 *
 * <p>A segment of {@code L = k t + delta} seconds (k iterations of t seconds and their
 * checkpoint) completes, in expectation, after {@code (M + D) e^{R/M} (e^{L/M} - 1)} seconds
 * (Daly's equation 13 per segment: the first attempt needs L, every later one R + L; with a
 * downtime D after each interruption during which no other strikes, the renewal argument adds D
 * to each of the expected M e^{R/M} (e^{L/M} - 1) / M interruptions). The run is its
 * full segments and a last one of the remaining iterations, each checkpointed. The interval that
 * minimizes the expected time is searched over whole iterations; Young's first-order interval
 * {@code sqrt(2 delta M)} (Young, "A first order approximation to the optimum checkpoint interval",
 * CACM 17(9):530-531, 1974) and Daly's higher-order one are reported beside it.
 *
 * @param iterationSeconds one iteration without failures, seconds, > 0
 * @param iterations the run's iterations, >= 1
 * @param mtbfSeconds the job's mean time between interruptions, seconds, > 0
 * @param checkpointSeconds the time a checkpoint blocks training, seconds, >= 0
 * @param restartSeconds the time from an interruption to training again, seconds, >= 0
 * @param downtimeSeconds the mean time an interruption also waits before the restart with no
 *     further interruption possible (a lost node's repair when no spare stands by), seconds, >= 0
 */
public record Goodput(double iterationSeconds, long iterations, double mtbfSeconds,
    double checkpointSeconds, double restartSeconds, double downtimeSeconds) {

  /** Validates the inputs. */
  public Goodput {
    Require.that(iterationSeconds > 0 && Double.isFinite(iterationSeconds),
        "iteration time must be > 0");
    Require.that(iterations >= 1, "iterations must be >= 1");
    Require.that(mtbfSeconds > 0 && Double.isFinite(mtbfSeconds), "MTBF must be > 0");
    Require.that(checkpointSeconds >= 0 && Double.isFinite(checkpointSeconds),
        "checkpoint time must be >= 0");
    Require.that(restartSeconds >= 0 && Double.isFinite(restartSeconds),
        "restart time must be >= 0");
    Require.that(downtimeSeconds >= 0 && Double.isFinite(downtimeSeconds),
        "downtime must be >= 0");
  }

  /**
   * A run without downtime.
   *
   * @param iterationSeconds one iteration, seconds
   * @param iterations the run's iterations
   * @param mtbfSeconds the mean time between interruptions, seconds
   * @param checkpointSeconds the checkpoint's blocking time, seconds
   * @param restartSeconds the restart, seconds
   */
  public Goodput(double iterationSeconds, long iterations, double mtbfSeconds,
      double checkpointSeconds, double restartSeconds) {
    this(iterationSeconds, iterations, mtbfSeconds, checkpointSeconds, restartSeconds, 0);
  }

  /**
   * The productive time: every iteration once, seconds.
   *
   * @return {@code iterations * iterationSeconds}
   */
  public double productiveSeconds() {
    return iterations * iterationSeconds;
  }

  /**
   * The expected time to complete one segment of L seconds.
   *
   * @param seconds L
   * @return {@code (M + D) e^{R/M} (e^{L/M} - 1)}, or infinity past double range
   */
  public double segmentSeconds(double seconds) {
    double m = mtbfSeconds;
    return (m + downtimeSeconds) * Math.exp(restartSeconds / m) * Math.expm1(seconds / m);
  }

  /**
   * The expected wall-clock time with a checkpoint every {@code k} iterations (and after the
   * last).
   *
   * @param k iterations per checkpoint, in [1, iterations]
   * @return seconds, possibly infinite (a run that all but never finishes)
   */
  public double expectedSeconds(long k) {
    Require.that(k >= 1 && k <= iterations, "checkpoint interval must be in [1, iterations]");
    long full = iterations / k;
    long rest = iterations % k;
    double t = full * segmentSeconds(k * iterationSeconds + checkpointSeconds);
    if (rest > 0) {
      t += segmentSeconds(rest * iterationSeconds + checkpointSeconds);
    }
    return t;
  }

  /**
   * The checkpoint interval, in iterations, that minimizes the expected wall-clock time. The
   * expected time of whole segments, {@code (iterations / k) * segment(k t + delta)}, is convex
   * in k and found by a ternary search over real k; the last, shorter segment makes the exact
   * time ripple around it, so every whole interval within 10% of that optimum (at most 100,001
   * of them around it) is then evaluated exactly and the best kept.
   *
   * @return the best interval
   */
  public long optimalInterval() {
    double lo = 1;
    double hi = iterations;
    for (int i = 0; i < 200 && hi - lo > 1e-3; i++) {
      double m1 = lo + (hi - lo) / 3;
      double m2 = hi - (hi - lo) / 3;
      if (steady(m1) <= steady(m2)) {
        hi = m2;
      } else {
        lo = m1;
      }
    }
    double center = (lo + hi) / 2;
    long span = Math.min(50_000, Math.max(2, (long) Math.ceil(0.1 * center)));
    long from = Math.max(1, (long) Math.floor(center) - span);
    long to = Math.min(iterations, (long) Math.ceil(center) + span);
    long best = from;
    double bestTime = expectedSeconds(from);
    for (long k = from + 1; k <= to; k++) {
      double t = expectedSeconds(k);
      if (t < bestTime) {
        best = k;
        bestTime = t;
      }
    }
    return best;
  }

  /** The expected time of whole segments of k iterations, k real. */
  private double steady(double k) {
    return iterations / k * segmentSeconds(k * iterationSeconds + checkpointSeconds);
  }

  /**
   * Young's first-order optimum interval of compute between checkpoints.
   *
   * @return {@code sqrt(2 delta M)} seconds
   */
  public double youngSeconds() {
    return Math.sqrt(2 * checkpointSeconds * mtbfSeconds);
  }

  /**
   * Daly's higher-order optimum interval of compute between checkpoints (his equation 37).
   *
   * @return {@code sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta} for
   *     {@code delta < 2M}, else {@code M}, seconds
   */
  public double dalySeconds() {
    double d = checkpointSeconds;
    double m = mtbfSeconds;
    if (d >= 2 * m) {
      return m;
    }
    double x = d / (2 * m);
    return Math.sqrt(2 * d * m) * (1 + Math.sqrt(x) / 3 + x / 9) - d;
  }

  /**
   * The expected number of interruptions over a wall-clock time: each takes, in expectation, M of
   * time at risk and then D of downtime in which none strikes (the renewal argument of the
   * class comment), so the count is the wall-clock time over M + D. Without downtime this is the
   * Poisson rate times the time; with a 1,000 h repair and M = 0.5 h it is about 1 a repair, not
   * the 2,000 the rate alone would count over it.
   *
   * @param wallSeconds the wall-clock time
   * @return the expected count
   */
  public double interruptions(double wallSeconds) {
    return wallSeconds / (mtbfSeconds + downtimeSeconds);
  }
}
