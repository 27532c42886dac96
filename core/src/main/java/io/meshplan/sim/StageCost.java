package io.meshplan.sim;

import io.meshplan.util.Require;

/**
 * The cost of one pipeline stage, or of one model chunk (virtual stage) under the interleaved
 * schedule, as the simulator needs it. Times are seconds, sizes bytes, work FLOPs. Per-microbatch
 * numbers are for one data-parallel replica of the stage ({@code tensorParallel} GPUs working
 * together); per-iteration numbers are for the whole stage.
 *
 * @param devices GPUs of the stage: {@code dataParallel * tensorParallel}
 * @param dataParallel data-parallel replicas of the stage
 * @param tensorParallel GPUs that share one replica (tensor parallelism)
 * @param forwardSeconds forward pass of one microbatch, seconds, including its exposed
 *     tensor-parallel communication
 * @param backwardSeconds backward pass of one microbatch, seconds, including recomputation and its
 *     exposed tensor-parallel communication
 * @param recomputeSeconds the recomputation inside {@code backwardSeconds}, seconds
 * @param tensorCommSeconds the exposed communication inside forward plus backward of one
 *     microbatch: tensor-parallel collectives, and the parts named by {@code exchangeSeconds} and
 *     {@code shardSeconds}, seconds
 * @param sendBytes activation bytes one GPU sends to the next stage per microbatch; the gradient of
 *     the same size flows back in the backward pass
 * @param gradSyncSeconds data-parallel gradient reduction (all-reduce or reduce-scatter) per
 *     iteration, seconds; 0 without data parallelism
 * @param gradSyncOverlappable whether the framework overlaps the reduction with the backward pass
 *     (bucketed reduction, as Megatron-LM's {@code overlap_grad_reduce} and PyTorch DDP do)
 * @param paramGatherSeconds all-gather of updated parameters per iteration with a distributed
 *     optimizer (ZeRO-1), seconds; 0 otherwise
 * @param optimizerSeconds the optimizer step per iteration, seconds
 * @param modelFlopsPerMicrobatch FLOPs of forward plus backward of one microbatch on one replica,
 *     without recomputation (the "model FLOPs" of MFU)
 * @param hardwareFlopsPerMicrobatch the same with recomputation (the FLOPs the GPUs execute)
 * @param memory memory per GPU by category
 * @param commBytes bytes one GPU sends on the tensor and data-parallel axes
 * @param hidden the communication that runs under compute (see {@link Overlap}): per microbatch
 *     the part hidden under forward and backward and the slowdown it causes (inside their
 *     seconds), per iteration the part hidden under the next iteration's first forward
 * @param exchangeSeconds the part of {@code tensorCommSeconds} that is the expert-parallel
 *     all-to-alls of mixture-of-experts blocks and the context-parallel K/V exchange, seconds
 * @param shardSeconds the part of {@code tensorCommSeconds} that is data-parallel work run every
 *     microbatch: ZeRO-2's gradient reduce-scatter, ZeRO-3's weight gathers and reduce-scatter
 *     (exposed), seconds; the breakdown counts it as data-parallel communication
 * @param gradSyncTailSeconds the part of {@code gradSyncSeconds} that reduces the last bucket of
 *     gradients, whose last gradient the last backward computes at its end: an overlapped
 *     reduction cannot hide it and runs it after that backward, seconds; 0 where nothing is
 *     bucketed
 */
public record StageCost(int devices, int dataParallel, int tensorParallel, double forwardSeconds,
    double backwardSeconds, double recomputeSeconds, double tensorCommSeconds, double sendBytes,
    double gradSyncSeconds, boolean gradSyncOverlappable, double paramGatherSeconds,
    double optimizerSeconds, double modelFlopsPerMicrobatch, double hardwareFlopsPerMicrobatch,
    MemoryBreakdown memory, StageCommBytes commBytes, HiddenComm hidden, double exchangeSeconds,
    double shardSeconds, double gradSyncTailSeconds) {

  /** Checks every number and the relations between them. */
  public StageCost {
    Require.that(exchangeSeconds >= 0 && exchangeSeconds <= tensorCommSeconds * (1 + 1e-12)
        + 1e-15, () -> "exchangeSeconds (" + exchangeSeconds + ") must be part of "
        + "tensorCommSeconds (" + tensorCommSeconds + ")");
    Require.that(shardSeconds >= 0 && exchangeSeconds + shardSeconds <= tensorCommSeconds
        * (1 + 1e-12) + 1e-15, () -> "shardSeconds (" + shardSeconds + ") and exchangeSeconds ("
        + exchangeSeconds + ") must be parts of tensorCommSeconds (" + tensorCommSeconds + ")");
    Require.positive(devices, "devices");
    Require.positive(dataParallel, "dataParallel");
    Require.positive(tensorParallel, "tensorParallel");
    Require.that((long) dataParallel * tensorParallel == devices, () -> "devices (" + devices
        + ") must equal dataParallel (" + dataParallel + ") * tensorParallel (" + tensorParallel
        + ")");
    Require.nonNegative(forwardSeconds, "forwardSeconds");
    Require.nonNegative(backwardSeconds, "backwardSeconds");
    Require.nonNegative(recomputeSeconds, "recomputeSeconds");
    Require.nonNegative(tensorCommSeconds, "tensorCommSeconds");
    Require.nonNegative(sendBytes, "sendBytes");
    Require.nonNegative(gradSyncSeconds, "gradSyncSeconds");
    Require.that(gradSyncTailSeconds >= 0 && gradSyncTailSeconds <= gradSyncSeconds, () ->
        "gradSyncTailSeconds (" + gradSyncTailSeconds + ") must be part of gradSyncSeconds ("
        + gradSyncSeconds + ")");
    Require.nonNegative(paramGatherSeconds, "paramGatherSeconds");
    Require.nonNegative(optimizerSeconds, "optimizerSeconds");
    Require.nonNegative(modelFlopsPerMicrobatch, "modelFlopsPerMicrobatch");
    Require.nonNegative(hardwareFlopsPerMicrobatch, "hardwareFlopsPerMicrobatch");
    Require.nonNull(memory, "memory");
    Require.nonNull(commBytes, "commBytes");
    Require.nonNull(hidden, "hidden");
    Require.that(recomputeSeconds <= backwardSeconds, () -> "recomputeSeconds (" + recomputeSeconds
        + ") is part of backwardSeconds (" + backwardSeconds + ") and cannot exceed it");
    Require.that(tensorCommSeconds <= forwardSeconds + backwardSeconds, () -> "tensorCommSeconds ("
        + tensorCommSeconds + ") is part of forwardSeconds + backwardSeconds ("
        + (forwardSeconds + backwardSeconds) + ") and cannot exceed it");
    Require.that(modelFlopsPerMicrobatch <= hardwareFlopsPerMicrobatch, () ->
        "hardwareFlopsPerMicrobatch (" + hardwareFlopsPerMicrobatch
            + ") includes recomputation and cannot be below modelFlopsPerMicrobatch ("
            + modelFlopsPerMicrobatch + ")");
  }

  /**
   * A stage cost with no per-microbatch data-parallel work ({@code shardSeconds} 0).
   *
   * @param devices GPUs of the stage
   * @param dataParallel data-parallel replicas
   * @param tensorParallel GPUs per replica
   * @param forwardSeconds forward of one microbatch, seconds
   * @param backwardSeconds backward of one microbatch, seconds
   * @param recomputeSeconds recomputation inside the backward, seconds
   * @param tensorCommSeconds exposed communication inside the passes, seconds
   * @param sendBytes activation bytes sent on per microbatch
   * @param gradSyncSeconds gradient reduction per iteration, seconds
   * @param gradSyncOverlappable whether the reduction overlaps the backward pass
   * @param paramGatherSeconds parameter gather per iteration, seconds
   * @param optimizerSeconds optimizer step per iteration, seconds
   * @param modelFlopsPerMicrobatch model FLOPs of one microbatch
   * @param hardwareFlopsPerMicrobatch hardware FLOPs of one microbatch
   * @param memory memory per GPU
   * @param commBytes bytes sent per GPU
   * @param hidden communication under compute
   * @param exchangeSeconds the expert and context-parallel exchange inside the passes, seconds
   */
  public StageCost(int devices, int dataParallel, int tensorParallel, double forwardSeconds,
      double backwardSeconds, double recomputeSeconds, double tensorCommSeconds, double sendBytes,
      double gradSyncSeconds, boolean gradSyncOverlappable, double paramGatherSeconds,
      double optimizerSeconds, double modelFlopsPerMicrobatch, double hardwareFlopsPerMicrobatch,
      MemoryBreakdown memory, StageCommBytes commBytes, HiddenComm hidden,
      double exchangeSeconds) {
    this(devices, dataParallel, tensorParallel, forwardSeconds, backwardSeconds, recomputeSeconds,
        tensorCommSeconds, sendBytes, gradSyncSeconds, gradSyncOverlappable, paramGatherSeconds,
        optimizerSeconds, modelFlopsPerMicrobatch, hardwareFlopsPerMicrobatch, memory, commBytes,
        hidden, exchangeSeconds, 0, 0);
  }

  /**
   * Forward plus backward of one microbatch.
   *
   * @return seconds
   */
  public double computeSeconds() {
    return forwardSeconds + backwardSeconds;
  }

  /**
   * A stage cost with nothing overlapped beyond the gradient reduction.
   *
   * @param devices GPUs of the stage
   * @param dataParallel data-parallel replicas
   * @param tensorParallel GPUs per replica
   * @param forwardSeconds forward of one microbatch, seconds
   * @param backwardSeconds backward of one microbatch, seconds
   * @param recomputeSeconds recomputation inside the backward, seconds
   * @param tensorCommSeconds exposed tensor-parallel communication, seconds
   * @param sendBytes activation bytes sent on per microbatch
   * @param gradSyncSeconds gradient reduction per iteration, seconds
   * @param gradSyncOverlappable whether the reduction overlaps the backward pass
   * @param paramGatherSeconds parameter gather per iteration, seconds
   * @param optimizerSeconds optimizer step per iteration, seconds
   * @param modelFlopsPerMicrobatch model FLOPs of one microbatch
   * @param hardwareFlopsPerMicrobatch hardware FLOPs of one microbatch
   * @param memory memory per GPU
   * @param commBytes bytes sent per GPU
   */
  public StageCost(int devices, int dataParallel, int tensorParallel, double forwardSeconds,
      double backwardSeconds, double recomputeSeconds, double tensorCommSeconds, double sendBytes,
      double gradSyncSeconds, boolean gradSyncOverlappable, double paramGatherSeconds,
      double optimizerSeconds, double modelFlopsPerMicrobatch, double hardwareFlopsPerMicrobatch,
      MemoryBreakdown memory, StageCommBytes commBytes, HiddenComm hidden) {
    this(devices, dataParallel, tensorParallel, forwardSeconds, backwardSeconds, recomputeSeconds,
        tensorCommSeconds, sendBytes, gradSyncSeconds, gradSyncOverlappable, paramGatherSeconds,
        optimizerSeconds, modelFlopsPerMicrobatch, hardwareFlopsPerMicrobatch, memory, commBytes,
        hidden, 0);
  }

  /**
   * A stage with nothing overlapped.
   *
   * @param devices GPUs
   * @param dataParallel data-parallel size
   * @param tensorParallel tensor-parallel size
   * @param forwardSeconds forward seconds
   * @param backwardSeconds backward seconds
   * @param recomputeSeconds recompute seconds
   * @param tensorCommSeconds exposed tensor-parallel communication, seconds
   * @param sendBytes bytes sent to the next stage
   * @param gradSyncSeconds gradient reduction seconds
   * @param gradSyncOverlappable whether it overlaps the backward
   * @param paramGatherSeconds parameter gather seconds
   * @param optimizerSeconds optimizer step per iteration, seconds
   * @param modelFlopsPerMicrobatch model FLOPs of one microbatch
   * @param hardwareFlopsPerMicrobatch hardware FLOPs of one microbatch
   * @param memory memory per GPU
   * @param commBytes bytes sent per GPU
   */
  public StageCost(int devices, int dataParallel, int tensorParallel, double forwardSeconds,
      double backwardSeconds, double recomputeSeconds, double tensorCommSeconds, double sendBytes,
      double gradSyncSeconds, boolean gradSyncOverlappable, double paramGatherSeconds,
      double optimizerSeconds, double modelFlopsPerMicrobatch, double hardwareFlopsPerMicrobatch,
      MemoryBreakdown memory, StageCommBytes commBytes) {
    this(devices, dataParallel, tensorParallel, forwardSeconds, backwardSeconds, recomputeSeconds,
        tensorCommSeconds, sendBytes, gradSyncSeconds, gradSyncOverlappable, paramGatherSeconds,
        optimizerSeconds, modelFlopsPerMicrobatch, hardwareFlopsPerMicrobatch, memory, commBytes,
        HiddenComm.NONE);
  }
}
