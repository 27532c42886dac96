package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * The calibrated cost of one collective on groups of one size at one link level.
 *
 * @param collective the collective
 * @param level intra-node or inter-node
 * @param gpus ranks in one group
 * @param fit alpha (seconds) and beta (seconds per bus byte)
 * @param points measured points behind the fit
 * @param curve the monotone curve, or empty when the logs gave bandwidths but no sizes
 */
public record ProfileEntry(Collective collective, LinkLevel level, int gpus, AlphaBeta fit,
    int points, Optional<MonotoneCurve> curve) {
  /** Validates the fields. */
  public ProfileEntry {
    Require.nonNull(collective, "collective");
    Require.nonNull(level, "level");
    Require.positive(gpus, "gpus");
    Require.nonNull(fit, "fit");
    Require.positive(points, "points");
    Require.nonNull(curve, "curve");
  }

  /**
   * The calibrated time of one operation.
   *
   * @param bytes the buffer, in bytes (see {@link MeasuredPoint})
   * @return seconds: from the curve if there is one, else from the alpha-beta fit
   */
  public double seconds(double bytes) {
    if (curve.isPresent()) {
      return curve.get().secondsAt(bytes);
    }
    return alphaBetaSeconds(bytes);
  }

  /**
   * The alpha-beta time of one operation.
   *
   * @param bytes the buffer, in bytes
   * @return alpha + beta * busFactor(gpus) * bytes, seconds
   */
  public double alphaBetaSeconds(double bytes) {
    return fit.seconds(collective.busFactor(gpus) * bytes);
  }

  /**
   * The calibrated bus bandwidth.
   *
   * @return 1/beta in bytes/s, or infinity when beta is 0
   */
  public double busBandwidth() {
    return fit.beta() > 0 ? 1.0 / fit.beta() : Double.POSITIVE_INFINITY;
  }
}
