package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * How the routed experts of a mixture-of-experts layer are spread over the GPUs of a pipeline
 * stage, in Megatron-Core's terms (Megatron-Core MoE, "MoE parallel folding": the expert layers
 * re-divide the stage's {@code TP x DP} GPUs as {@code ETP x EP x expert-DP}, expert tensor
 * parallelism innermost): each GPU holds {@code E / EP} experts, each split {@code ETP} ways along
 * its inner dimension, and a token's copies travel by all-to-all over the expert-parallel group.
 *
 * <p>Rows per GPU. A replica of {@code t} GPUs runs {@code T} tokens per microbatch; with
 * sequence parallelism each of its GPUs dispatches {@code T / t} of them, {@code k} copies each.
 * Balanced over the stage, a GPU then receives {@code T k / t} copies, and with expert tensor
 * parallelism each copy visits the {@code ETP} GPUs of its expert, so a GPU processes {@code R =
 * T k ETP / t} rows, {@code R / (E / EP)} per local expert. The busiest GPU, which every other
 * waits for, processes {@link MoeShape#load()} times that.
 *
 * @param expertParallel EP, GPUs over which the experts are divided
 * @param expertTensorParallel ETP, GPUs over which each expert's inner dimension is divided
 * @param tensorParallel t, the replica's tensor-parallel size
 */
public record ExpertLayout(int expertParallel, int expertTensorParallel, int tensorParallel)
    implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** No expert parallelism on a replica of one GPU: every expert on every GPU. */
  public static final ExpertLayout NONE = new ExpertLayout(1, 1, 1);

  /** Validates the fields. */
  public ExpertLayout {
    Require.positive(expertParallel, "expert-parallel size");
    Require.positive(expertTensorParallel, "expert tensor-parallel size");
    Require.positive(tensorParallel, "tensor-parallel size");
  }

  /**
   * The rows one GPU exchanges in one all-to-all per microbatch, on average: {@code T k ETP / t
   * / ETP = T k / t} of its own tokens' copies go out (and as many come back).
   *
   * @param moe the layer
   * @param tokens the replica's tokens T per microbatch
   * @return rows
   */
  public double rowsSent(MoeShape moe, long tokens) {
    return (double) tokens * moe.topK() / tensorParallel;
  }

  /**
   * The busiest GPU's load over the balanced mean ({@link MoeShape#load}), at most the
   * expert-parallel size: the busiest of {@code EP} GPUs takes at most every token's rows, {@code
   * EP} times the mean, and one GPU holding every expert has no busier peer.
   *
   * @param moe the layer
   * @return the load factor, in [1, EP]
   */
  public double load(MoeShape moe) {
    return Math.min(moe.load(), expertParallel);
  }

  /**
   * The experts one GPU holds.
   *
   * @param moe the layer
   * @return {@code E / EP}
   */
  public int localExperts(MoeShape moe) {
    Require.that(moe.experts() % expertParallel == 0, () -> "expert parallelism " + expertParallel
        + " must divide the " + moe.experts() + " experts");
    return moe.experts() / expertParallel;
  }

  /**
   * The rows each local expert of the busiest GPU processes per microbatch.
   *
   * @param moe the layer
   * @param tokens the replica's tokens T per microbatch
   * @return {@code ceil(T k ETP load / (t E / EP))}, at least 1
   */
  public int rowsPerExpert(MoeShape moe, long tokens) {
    double rows = (double) tokens * moe.topK() * expertTensorParallel * load(moe)
        / tensorParallel / localExperts(moe);
    double up = Math.ceil(rows - 1e-9);
    if (up > Integer.MAX_VALUE) {
      throw new io.meshplan.util.InputException(String.format(java.util.Locale.ROOT,
          "the busiest expert would take %.0f token rows per microbatch, more than 2^31 - 1 in "
          + "one matrix product; use smaller microbatches or sequences", up));
    }
    return (int) Math.max(1, up);
  }

  /**
   * One expert's inner size on one GPU.
   *
   * @param moe the layer
   * @return {@code f_e / ETP}
   */
  public int localExpertFfn(MoeShape moe) {
    Require.that(moe.expertFfn() % expertTensorParallel == 0, () -> "expert tensor parallelism "
        + expertTensorParallel + " must divide the expert size " + moe.expertFfn());
    return moe.expertFfn() / expertTensorParallel;
  }
}
