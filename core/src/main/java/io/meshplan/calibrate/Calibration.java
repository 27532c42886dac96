package io.meshplan.calibrate;

import java.util.List;

/**
 * The outcome of fitting: the profile and every input point with its fitted time.
 *
 * @param profile the profile to write
 * @param points the points in input order, each with its predictions
 */
public record Calibration(Profile profile, List<FittedPoint> points) {
  /** Copies the list. */
  public Calibration {
    points = List.copyOf(points);
  }
}
