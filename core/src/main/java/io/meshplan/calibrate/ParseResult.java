package io.meshplan.calibrate;

import java.util.List;

/**
 * What a parser got out of one file.
 *
 * @param points the measured rows, in file order
 * @param warnings positioned warnings, in file order
 */
public record ParseResult(List<MeasuredPoint> points, List<ParseWarning> warnings) {
  /** Copies the lists. */
  public ParseResult {
    points = List.copyOf(points);
    warnings = List.copyOf(warnings);
  }
}
