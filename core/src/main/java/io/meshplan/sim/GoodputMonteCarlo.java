package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.SplittableRandom;

/**
 * A seeded simulation of the process {@link Goodput} describes, to check its closed form: for
 * every segment, interruptions arrive with exponential gaps of mean M; an attempt that an
 * interruption cuts costs the time until it and the downtime, and every later attempt needs the
 * restart and the whole segment again.
 */
public final class GoodputMonteCarlo {
  private GoodputMonteCarlo() {}

  /**
   * The sample mean and its standard error.
   *
   * @param mean mean wall-clock seconds over the runs
   * @param standardError the standard error of the mean, seconds
   * @param runs simulated runs
   */
  public record Estimate(double mean, double standardError, int runs) {}

  /**
   * Simulates whole runs.
   *
   * @param g the run
   * @param k iterations per checkpoint
   * @param runs simulated runs, >= 2
   * @param seed the random seed
   * @return the estimate
   */
  public static Estimate simulate(Goodput g, long k, int runs, long seed) {
    Require.that(runs >= 2, "runs must be >= 2");
    Require.that(k >= 1 && k <= g.iterations(), "checkpoint interval must be in [1, iterations]");
    SplittableRandom rnd = new SplittableRandom(seed);
    long full = g.iterations() / k;
    long rest = g.iterations() % k;
    double fullLen = k * g.iterationSeconds() + g.checkpointSeconds();
    double restLen = rest * g.iterationSeconds() + g.checkpointSeconds();
    double sum = 0;
    double sumSq = 0;
    for (int r = 0; r < runs; r++) {
      double t = 0;
      for (long s = 0; s < full; s++) {
        t += segment(rnd, fullLen, g.mtbfSeconds(), g.restartSeconds(), g.downtimeSeconds());
      }
      if (rest > 0) {
        t += segment(rnd, restLen, g.mtbfSeconds(), g.restartSeconds(), g.downtimeSeconds());
      }
      sum += t;
      sumSq += t * t;
    }
    double mean = sum / runs;
    double var = Math.max(0, (sumSq - runs * mean * mean) / (runs - 1));
    return new Estimate(mean, Math.sqrt(var / runs), runs);
  }

  /** One segment: attempts until one runs its whole length without an interruption. */
  private static double segment(SplittableRandom rnd, double length, double mtbf,
      double restart, double downtime) {
    double t = 0;
    double need = length;
    while (true) {
      double gap = -mtbf * Math.log(1 - rnd.nextDouble());
      if (gap >= need) {
        return t + need;
      }
      // The interruption, then its downtime (nothing strikes then), then the restart and the
      // whole segment again.
      t += gap + downtime;
      need = restart + length;
    }
  }
}
