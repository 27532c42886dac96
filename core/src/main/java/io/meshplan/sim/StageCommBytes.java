package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The communication volume of one pipeline stage (or model chunk) on one GPU, by mesh axis, in
 * bytes the GPU sends. Bytes follow the nccl-tests bus-bandwidth convention ({@code
 * doc/PERFORMANCE.md}): a collective of size {@code S} over {@code n} GPUs sends {@code
 * busFactor(n) * S} per GPU, with {@code busFactor} {@code 2(n-1)/n} for all-reduce and {@code (n-1)/n} for
 * all-gather and reduce-scatter. Pipeline send/recv is not here: the simulator counts it from
 * {@link StageCost#sendBytes()}.
 *
 * @param tensorPerMicrobatch tensor-axis bytes of forward plus backward of one microbatch
 *     (collectives and reshardings inside the layers, recomputation included)
 * @param tensorPerIteration tensor-axis bytes once per iteration (the all-gather of weights whose
 *     gradients are split more finely than the weights)
 * @param dataPerMicrobatch data-parallel-axis bytes of one microbatch (ZeRO-3/FSDP weight
 *     all-gathers and gradient reduce-scatter)
 * @param dataPerIteration data-parallel-axis bytes once per iteration (gradient all-reduce or
 *     reduce-scatter, ZeRO-1 parameter all-gather)
 * @param expertPerMicrobatch bytes of the expert-parallel exchange of one microbatch (the
 *     mixture-of-experts dispatches and combines, forward, backward and replayed)
 * @param contextPerMicrobatch bytes of the context-parallel exchange of one microbatch (keys and
 *     values passed or gathered around each attention, the head all-to-alls around each scan)
 */
public record StageCommBytes(double tensorPerMicrobatch, double tensorPerIteration,
    double dataPerMicrobatch, double dataPerIteration, double expertPerMicrobatch,
    double contextPerMicrobatch) {
  /** No communication. */
  public static final StageCommBytes NONE = new StageCommBytes(0, 0, 0, 0);

  /** Checks that every size is finite and not negative. */
  public StageCommBytes {
    Require.nonNegative(tensorPerMicrobatch, "tensorPerMicrobatch");
    Require.nonNegative(tensorPerIteration, "tensorPerIteration");
    Require.nonNegative(dataPerMicrobatch, "dataPerMicrobatch");
    Require.nonNegative(dataPerIteration, "dataPerIteration");
    Require.nonNegative(expertPerMicrobatch, "expertPerMicrobatch");
    Require.nonNegative(contextPerMicrobatch, "contextPerMicrobatch");
  }

  /**
   * A stage without expert or context parallelism.
   *
   * @param tensorPerMicrobatch tensor-axis bytes of one microbatch
   * @param tensorPerIteration tensor-axis bytes once per iteration
   * @param dataPerMicrobatch data-parallel-axis bytes of one microbatch
   * @param dataPerIteration data-parallel-axis bytes once per iteration
   */
  public StageCommBytes(double tensorPerMicrobatch, double tensorPerIteration,
      double dataPerMicrobatch, double dataPerIteration) {
    this(tensorPerMicrobatch, tensorPerIteration, dataPerMicrobatch, dataPerIteration, 0, 0);
  }
}
