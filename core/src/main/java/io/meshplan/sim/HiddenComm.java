package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The communication of a stage that runs under its compute (see {@link Overlap}), as the
 * simulator reports it beside the exposed part.
 *
 * @param perMicrobatchSeconds communication hidden under the forward and backward of one
 *     microbatch, seconds
 * @param slowdownPerMicrobatchSeconds the time one microbatch's compute loses to that
 *     communication, seconds; part of the stage's forward and backward seconds
 * @param perIterationSeconds communication per iteration hidden under the next iteration's first
 *     forward (the distributed optimizer's overlapped parameter gather), seconds
 */
public record HiddenComm(double perMicrobatchSeconds, double slowdownPerMicrobatchSeconds,
    double perIterationSeconds) {
  /** Nothing hidden. */
  public static final HiddenComm NONE = new HiddenComm(0, 0, 0);

  /** Checks the parts. */
  public HiddenComm {
    Require.nonNegative(perMicrobatchSeconds, "hidden seconds per microbatch");
    Require.nonNegative(slowdownPerMicrobatchSeconds, "slowdown seconds per microbatch");
    Require.nonNegative(perIterationSeconds, "hidden seconds per iteration");
  }
}
