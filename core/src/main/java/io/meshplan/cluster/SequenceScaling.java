package io.meshplan.cluster;

import io.meshplan.util.Require;
import java.util.List;

/**
 * How a fused attention kernel's speed moves with the sequence it attends over, relative to its
 * speed at {@link #REFERENCE} tokens, where {@link FusedAttentionKernels}' fractions are stated.
 * Short sequences run slower: each query tile walks fewer key tiles, so its prologue, epilogue
 * and softmax rescaling weigh more, and the causal diagonal's half-masked tiles are a larger
 * share of the work. The factors are ratios of a measured table's TFLOP/s at each length to the
 * same table's at {@link #REFERENCE}, at head dimension 128 and above ({@code forward}, {@code
 * backward}) and at 64 and below ({@code narrowForward}, {@code narrowBackward}). Between points
 * they are interpolated linearly in the logarithm of the length; outside, the nearer end holds.
 *
 * @param points the measured lengths in increasing order, one of them {@link #REFERENCE} with
 *     every factor 1; empty for a kernel with no length table (every factor 1)
 */
public record SequenceScaling(List<Point> points) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  /** The sequence length, in tokens, at which every factor is 1. */
  public static final int REFERENCE = 4096;
  /** No length table: the fractions hold at every length. */
  public static final SequenceScaling FLAT = new SequenceScaling(List.of());

  /**
   * One measured length.
   *
   * @param sequence the tokens of the sequence, >= 1
   * @param forward the forward's speed over its speed at {@link #REFERENCE}, head dimension 128
   * @param backward the backward's, head dimension 128
   * @param narrowForward the forward's at head dimension 64
   * @param narrowBackward the backward's at head dimension 64
   */
  public record Point(int sequence, double forward, double backward, double narrowForward,
      double narrowBackward) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** Checks the point. */
    public Point {
      Require.positive(sequence, "sequence length");
      for (double f : new double[] {forward, backward, narrowForward, narrowBackward}) {
        Require.that(f > 0 && f <= 2, "a sequence-length factor must be in (0, 2], got " + f);
      }
    }

    private double factor(boolean backward, boolean narrow) {
      return narrow ? (backward ? narrowBackward : narrowForward)
          : (backward ? this.backward : forward);
    }
  }

  /** Checks the table: increasing lengths, and factors of 1 at {@link #REFERENCE}. */
  public SequenceScaling {
    points = List.copyOf(points);
    boolean reference = points.isEmpty();
    for (int i = 0; i < points.size(); i++) {
      Point p = points.get(i);
      Require.that(i == 0 || points.get(i - 1).sequence() < p.sequence(),
          "sequence-length points must increase");
      if (p.sequence() == REFERENCE) {
        reference = p.forward() == 1 && p.backward() == 1 && p.narrowForward() == 1
            && p.narrowBackward() == 1;
      }
    }
    Require.that(reference, "a sequence-length table needs every factor 1 at " + REFERENCE);
  }

  /**
   * The factor at a sequence length.
   *
   * @param backward whether it is the backward kernel
   * @param narrow whether at head dimension 64 (else 128)
   * @param sequence the tokens of the sequence, >= 1
   * @return the kernel's speed over its speed at {@link #REFERENCE}, > 0
   */
  public double factor(boolean backward, boolean narrow, int sequence) {
    Require.positive(sequence, "sequence length");
    if (points.isEmpty()) {
      return 1;
    }
    Point first = points.get(0);
    if (sequence <= first.sequence()) {
      return first.factor(backward, narrow);
    }
    for (int i = 1; i < points.size(); i++) {
      Point hi = points.get(i);
      if (sequence <= hi.sequence()) {
        Point lo = points.get(i - 1);
        double t = Math.log((double) sequence / lo.sequence())
            / Math.log((double) hi.sequence() / lo.sequence());
        double a = lo.factor(backward, narrow);
        return a + (hi.factor(backward, narrow) - a) * t;
      }
    }
    return points.get(points.size() - 1).factor(backward, narrow);
  }

  /**
   * The largest factor of a kind over the table (1 when it is flat).
   *
   * @param backward whether of the backward kernel
   * @param narrow whether at head dimension 64
   * @return the largest factor, >= 1
   */
  public double max(boolean backward, boolean narrow) {
    double top = 1;
    for (Point p : points) {
      top = Math.max(top, p.factor(backward, narrow));
    }
    return top;
  }

  /**
   * The largest factor of any kind over the table (1 when it is flat).
   *
   * @return the largest factor, >= 1
   */
  public double max() {
    return Math.max(Math.max(max(false, false), max(true, false)),
        Math.max(max(false, true), max(true, true)));
  }
}
