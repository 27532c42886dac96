package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * Communication run on its own stream under compute, as frameworks overlap collectives with the
 * kernels of a pass. While a collective runs, its kernels take streaming multiprocessors and memory
 * bandwidth from the compute kernels beside it, so the compute runs slower for that time: on A100,
 * H100, MI250 and MI210 running GPT and LLaMA layers, compute that overlaps a collective is 18.9%
 * slower on average (40.0% at most) than alone (Hassan et al., "Characterizing Compute-Communication
 * Overlap in GPU-Accelerated Distributed Deep Learning: Performance and Power Implications",
 * arXiv:2507.03114, 2025, abstract and section 5). {@link #SLOWDOWN} is that mean.
 *
 * <p>With {@code K} seconds of compute alone, {@code C} seconds of communication alone, and
 * compute slowed by the factor {@code 1 + σ} while both run:
 * <ul>
 *   <li>when {@code C < K(1 + σ)} the communication ends first: it slows {@code C / (1 + σ)}
 *       seconds of compute work by {@code σ}, so the window takes {@code K + C σ / (1 + σ)} and
 *       nothing of the communication is exposed;
 *   <li>otherwise the compute runs slowed throughout, ending at {@code K(1 + σ)}, and the rest of
 *       the communication, {@code C - K(1 + σ)}, is exposed; the window takes {@code C}.
 * </ul>
 * The two cases meet at {@code C = K(1 + σ)}, so the time is continuous and never below either
 * part alone or above their sum.
 *
 * @param seconds the window: compute and communication together, seconds
 * @param hiddenSeconds the communication that ran under compute, seconds
 * @param exposedSeconds the communication left after the compute ended, seconds
 * @param slowdownSeconds the time the compute lost to the communication beside it, seconds
 */
public record Overlap(double seconds, double hiddenSeconds, double exposedSeconds,
    double slowdownSeconds) {
  /** The mean slowdown of compute that overlaps a collective, σ (arXiv:2507.03114). */
  public static final double SLOWDOWN = 0.189;

  /** No communication. */
  public static final Overlap NONE = new Overlap(0, 0, 0, 0);

  /** Checks the parts. */
  public Overlap {
    Require.nonNegative(seconds, "seconds");
    Require.nonNegative(hiddenSeconds, "hidden seconds");
    Require.nonNegative(exposedSeconds, "exposed seconds");
    Require.nonNegative(slowdownSeconds, "slowdown seconds");
  }

  /**
   * Communication overlapped with compute, as in the class comment.
   *
   * @param compute the compute the communication runs under, alone, seconds
   * @param comm the communication, alone, seconds
   * @return the window
   */
  public static Overlap under(double compute, double comm) {
    Require.nonNegative(compute, "compute seconds");
    Require.nonNegative(comm, "communication seconds");
    double slowed = compute * (1 + SLOWDOWN);
    if (comm < slowed) {
      double slow = comm * SLOWDOWN / (1 + SLOWDOWN);
      return new Overlap(compute + slow, comm, 0, slow);
    }
    return new Overlap(comm, slowed, comm - slowed, compute * SLOWDOWN);
  }

  /**
   * Communication that runs after the compute, nothing hidden.
   *
   * @param compute the compute, seconds
   * @param comm the communication, seconds
   * @return the window
   */
  public static Overlap serial(double compute, double comm) {
    return new Overlap(compute + comm, 0, comm, 0);
  }

  /**
   * The communication and slowdown the window adds to its compute.
   *
   * @return {@code exposedSeconds + slowdownSeconds}, seconds
   */
  public double addedSeconds() {
    return exposedSeconds + slowdownSeconds;
  }

  /**
   * Two windows one after the other.
   *
   * @param o the other window
   * @return the sums
   */
  public Overlap plus(Overlap o) {
    return new Overlap(seconds + o.seconds, hiddenSeconds + o.hiddenSeconds,
        exposedSeconds + o.exposedSeconds, slowdownSeconds + o.slowdownSeconds);
  }
}
