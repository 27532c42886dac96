package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * A measured point next to what the calibrated profile predicts for it.
 *
 * @param point the measurement
 * @param curveSeconds the profile entry's prediction (its curve, or its alpha-beta line when it has
 *     no curve), in seconds; NaN when the point has no size
 * @param alphaBetaSeconds the alpha-beta prediction, in seconds; NaN when the point has no size
 */
public record FittedPoint(MeasuredPoint point, double curveSeconds, double alphaBetaSeconds) {
  /** Validates the fields. */
  public FittedPoint {
    Require.nonNull(point, "point");
  }

  /**
   * The relative error of the profile's prediction.
   *
   * @return (fitted - measured) / measured, NaN when unknown
   */
  public double curveError() {
    return (curveSeconds - point.seconds()) / point.seconds();
  }

  /**
   * The relative error of the alpha-beta prediction.
   *
   * @return (fitted - measured) / measured, NaN when unknown
   */
  public double alphaBetaError() {
    return (alphaBetaSeconds - point.seconds()) / point.seconds();
  }
}
