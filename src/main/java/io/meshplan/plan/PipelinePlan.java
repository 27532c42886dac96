package io.meshplan.plan;

import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;

/**
 * A whole-cluster training plan: pipeline stages (layer ranges on submeshes with logical meshes),
 * the batch split and schedule, and the predicted performance. This value is the only contract
 * between the planner and what comes after it (simulation, reports, exports, launch manifests); its
 * JSON form is {@link PlanJson}.
 *
 * @param model the model, with the sequence length trained
 * @param cluster the cluster string, e.g. {@code 128x8:h100-80gb:ib-ndr400}
 * @param globalBatchSize sequences per iteration
 * @param microBatchSize sequences per microbatch on one replica
 * @param microbatches microbatches each pipeline runs per iteration
 * @param virtualStages model chunks per stage (1 = 1F1B; more = interleaved 1F1B)
 * @param recompute activation recomputation
 * @param sequenceParallel sequence parallelism inside tensor-parallel groups
 * @param distributedOptimizer optimizer state sharded over data-parallel groups
 * @param zeroStage the ZeRO stage (Rajbhandari et al. SC'20) over data-parallel groups: 0 none, 1
 *     optimizer state sharded (Megatron-LM's distributed optimizer), 3 weights, gradients and
 *     optimizer state sharded (FSDP)
 * @param stages the pipeline stages in order; blocks are numbered 0..layers-1, the embedding runs
 *     on the first stage and the LM head on the last
 * @param prediction the simulator's figures for this plan
 */
public record PipelinePlan(
    ModelSpec model,
    String cluster,
    int globalBatchSize,
    int microBatchSize,
    int microbatches,
    int virtualStages,
    Recompute recompute,
    boolean sequenceParallel,
    boolean distributedOptimizer,
    int zeroStage,
    List<StagePlan> stages,
    Prediction prediction) {

  /**
   * What the simulator predicts for a plan.
   *
   * @param iterationSeconds one training iteration, seconds
   * @param tokensPerSecond tokens trained per second over the cluster
   * @param tflopsPerGpu model TFLOP/s per GPU (10^12 FLOP/s)
   * @param mfu model FLOPs utilization: model FLOP/s over the GPUs' dense peak
   * @param peakMemoryBytesPerGpu the largest peak memory of any GPU, bytes
   */
  public record Prediction(double iterationSeconds, double tokensPerSecond, double tflopsPerGpu,
      double mfu, double peakMemoryBytesPerGpu) {
    /** Validates the figures. */
    public Prediction {
      Require.nonNegative(iterationSeconds, "iteration seconds");
      Require.nonNegative(tokensPerSecond, "tokens per second");
      Require.nonNegative(tflopsPerGpu, "TFLOP/s per GPU");
      Require.nonNegative(mfu, "MFU");
      Require.nonNegative(peakMemoryBytesPerGpu, "peak memory");
    }
  }

  /** Validates the plan's shape. */
  public PipelinePlan {
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.positive(globalBatchSize, "global batch");
    Require.positive(microBatchSize, "micro batch");
    Require.positive(microbatches, "microbatches");
    Require.positive(virtualStages, "virtual stages");
    Require.nonNull(recompute, "recompute");
    Require.nonNull(prediction, "prediction");
    Require.that(zeroStage == 0 || zeroStage == 1 || zeroStage == 3, "ZeRO stage must be 0, 1 or 3,"
        + " got " + zeroStage);
    Require.that(distributedOptimizer == (zeroStage == 1), "the distributed optimizer is ZeRO "
        + "stage 1");
    stages = List.copyOf(stages);
    Require.that(!stages.isEmpty(), "a plan needs at least one stage");
    int next = 0;
    for (StagePlan s : stages) {
      Require.that(s.firstLayer() == next, "stages must cover the layers in order: expected a "
          + "stage starting at layer " + next + ", got " + s.firstLayer());
      next = s.lastLayer() + 1;
    }
    Require.that(next == model.layers(), "stages cover " + next + " layers but the model has "
        + model.layers());
  }

  /**
   * The GPUs the plan uses.
   *
   * @return the sum of the stages' devices
   */
  public int gpus() {
    int n = 0;
    for (StagePlan s : stages) {
      n = Math.addExact(n, s.devices());
    }
    return n;
  }

  /**
   * The Megatron-LM configuration this plan is, if it is one: every stage has the same logical
   * mesh and the same number of layers.
   *
   * @return the configuration, or empty with {@link #whyNotUniform} saying why
   */
  public Optional<ParallelConfig> asParallelConfig() {
    if (whyNotUniform().isPresent()) {
      return Optional.empty();
    }
    StagePlan s0 = stages.get(0);
    return Optional.of(new ParallelConfig(s0.tensorParallel(), stages.size() / virtualStages,
        s0.dataParallel(), virtualStages, microBatchSize, globalBatchSize, recompute,
        sequenceParallel, distributedOptimizer));
  }

  /**
   * Why the plan is not a Megatron-LM configuration.
   *
   * @return a sentence, or empty when it is one
   */
  public Optional<String> whyNotUniform() {
    StagePlan s0 = stages.get(0);
    if (zeroStage == 3) {
      return Optional.of("weights and gradients are sharded over data-parallel groups (ZeRO-3/"
          + "FSDP); Megatron-LM shards only the optimizer state (--use-distributed-optimizer)");
    }
    for (StagePlan s : stages) {
      if (s.dataParallel() != s0.dataParallel() || s.tensorParallel() != s0.tensorParallel()) {
        return Optional.of("stages use different logical meshes (" + s0.dataParallel() + "x"
            + s0.tensorParallel() + " and " + s.dataParallel() + "x" + s.tensorParallel()
            + "); Megatron-LM uses one tensor and data-parallel size for all stages");
      }
      if (s.layerCount() != s0.layerCount()) {
        return Optional.of("stages hold different numbers of layers (" + s0.layerCount() + " and "
            + s.layerCount() + "); Megatron-LM gives every stage the same number");
      }
    }
    return Optional.empty();
  }
}
