package io.meshplan.report;

import io.meshplan.sim.Goodput;
import io.meshplan.util.Require;

/**
 * A plan's whole training run with interruptions, for the report's time-to-train section.
 *
 * @param goodput the run's expected-time model
 * @param interval iterations between checkpoints
 * @param gpus the plan's GPUs
 * @param checkpointPerNode whether the checkpoint bandwidth was given per node (it then grows with
 *     the nodes in the chart of other cluster sizes; an aggregate bandwidth stays fixed)
 */
public record TrainingRun(Goodput goodput, long interval, int gpus, boolean checkpointPerNode) {
  /** Validates the fields. */
  public TrainingRun {
    Require.nonNull(goodput, "goodput");
    Require.that(interval >= 1 && interval <= goodput.iterations(), "interval out of range");
    Require.positive(gpus, "gpus");
  }

  /**
   * The same run on {@code factor} times the GPUs, for the chart: the iteration time divided by
   * the factor (ideal scaling), interruptions that many times as frequent, the checkpoint (and
   * reading it back) as fast as the bandwidth allows, and the best interval there.
   *
   * @param factor GPUs relative to the plan's, > 0
   * @return productive over expected wall-clock time
   */
  public double ettrAt(double factor) {
    Goodput g = goodput;
    double ckpt = checkpointPerNode ? g.checkpointSeconds() / factor : g.checkpointSeconds();
    Goodput s = new Goodput(g.iterationSeconds() / factor, g.iterations(),
        g.mtbfSeconds() / factor, ckpt, g.restartSeconds() - g.checkpointSeconds() + ckpt,
        g.downtimeSeconds());
    return s.productiveSeconds() / s.expectedSeconds(s.optimalInterval());
  }
}
