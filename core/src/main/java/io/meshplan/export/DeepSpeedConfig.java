package io.meshplan.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.graph.DType;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A DeepSpeed configuration JSON (Rajbhandari et al., "ZeRO", SC'20): batch sizes, gradient
 * accumulation, ZeRO stage and precision. DeepSpeed takes its data-parallel size from the world
 * size over the model-parallel group that the model code (Megatron-DeepSpeed, with the arguments of
 * {@link MegatronArgs}) sets up, so {@code train_batch_size = micro batch * gradient accumulation *
 * data-parallel size} holds for the same configuration.
 *
 * <p>ZeRO stages map one to one ({@code zero_optimization.stage} 0, 1, 2 or 3; Megatron-LM's
 * distributed optimizer is stage 1). Two limits of DeepSpeed's pipeline engine ({@code
 * deepspeed/runtime/pipe/engine.py}) make configurations inexpressible: it has no interleaved
 * schedule, and it refuses ZeRO stages 2 and 3 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
 * parallelism"), so ZeRO-2 and ZeRO-3 need a pipeline of one stage.
 *
 * <p>Stage 2 writes the keys the simulator's price rests on: {@code overlap_comm} as the plan was
 * priced (true unless {@code --no-fsdp-prefetch}: the per-microbatch reduce-scatter runs under the
 * backward, with a second bucket), {@code contiguous_gradients} true and {@code reduce_bucket_size} 5e8 elements (the bucket
 * {@link io.meshplan.interop.cost.StageCostBuilder#REDUCE_BUCKET_ELEMENTS} counts as memory).
 *
 * <p>Stage 3 writes DeepSpeed's tuning keys explicitly, with the values DeepSpeed itself uses
 * when they are absent ({@code deepspeed/runtime/zero/config.py}; documented at
 * https://www.deepspeed.ai/docs/config-json/#zero-optimizations-for-fp16-training), so that the
 * file shows what runs: {@code overlap_comm} true (DeepSpeed's default for stage 3: reduce-scatter
 * gradients during the backward pass), {@code contiguous_gradients} true, {@code
 * reduce_bucket_size} 5e8 elements, {@code stage3_prefetch_bucket_size} 5e7 elements, {@code
 * stage3_param_persistence_threshold} 1e5 elements (smaller parameters, norms and biases, stay
 * whole on every GPU), {@code stage3_max_live_parameters} and {@code stage3_max_reuse_distance}
 * 1e9 elements. One key departs from the default: {@code
 * stage3_gather_16bit_weights_on_model_save} true, so that {@code save_16bit_model()} writes the
 * whole model rather than this rank's shard.
 */
public final class DeepSpeedConfig implements FrameworkWriter {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** Creates the writer; it holds no state. */
  public DeepSpeedConfig() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    ParallelConfig c = input.config();
    if (Fp8Training.on(input.model().dtype())) {
      // Its configuration JSON switches fp16, bf16 and amp; FP8 GEMMs come only from
      // Transformer Engine modules in the model code, which a config cannot turn on.
      return Optional.of("DeepSpeed's configuration has no FP8 training switch (fp16, bf16 or"
          + " amp only)");
    }
    if (c.virtualStages() > 1) {
      return Optional.of("DeepSpeed's pipeline engine has no interleaved schedule (virtual"
          + " pipeline stages)");
    }
    if (input.gpipe()) {
      // deepspeed/runtime/pipe/schedule.py: TrainSchedule is 1F1B; gradient accumulation
      // without a pipeline runs each microbatch's forward and backward in turn.
      return Optional.of("DeepSpeed has no GPipe schedule (its pipeline engine's TrainSchedule"
          + " is 1F1B)");
    }
    if (c.unevenStages()) {
      return Optional.of("the DeepSpeed configuration has no per-stage layer count (the split is"
          + " the training script's PipelineModule partition_method); this export gives every"
          + " stage the same number of layers");
    }
    if (c.zeroStage() >= 2 && c.pipelineParallel() > 1) {
      return Optional.of("DeepSpeed's pipeline engine refuses ZeRO-" + c.zeroStage()
          + " (\"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\"); "
          + (c.zeroStage() == 2 ? "gradients" : "weights")
          + " can be sharded only without a pipeline");
    }
    return Optional.empty();
  }

  /**
   * The nearest expressible input: one model chunk per stage instead of the interleaved schedule,
   * 1F1B instead of GPipe, and, with a pipeline, ZeRO-1 instead of ZeRO-2 or ZeRO-3 (the layout stays; only the weights
   * and gradients are no longer sharded); uneven stages become even ones when the layers divide.
   */
  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ParallelConfig c = input.config();
    int zero = c.zeroStage() >= 2 && c.pipelineParallel() > 1 ? 1 : c.zeroStage();
    ModelSpec m = input.model();
    input = input.withGpipe(false);
    if (Fp8Training.on(m.dtype())) {
      input = new ExportInput(m.withTraining(m.batch(), DType.BF16), input.cluster(),
          input.config(), input.attention(), input.overlaps(), false);
    }
    try {
      return Optional.of(input.withConfig(new ParallelConfig(
          c.tensorParallel(), c.pipelineParallel(), c.dataParallel(), 1, c.microBatchSize(),
          c.globalBatchSize(), c.recompute(), c.sequenceParallel(), zero)));
    } catch (InputException e) {
      // Uneven stages whose layers do not split evenly over the pipeline.
      return Optional.empty();
    }
  }

  @Override
  public String write(ExportInput input) {
    Require.that(missing(input).isEmpty(), missing(input).orElse(""));
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    ObjectNode root = JSON.createObjectNode();
    root.put("train_batch_size", c.globalBatchSize());
    root.put("train_micro_batch_size_per_gpu", c.microBatchSize());
    root.put("gradient_accumulation_steps", c.microbatches());
    ObjectNode zero = root.putObject("zero_optimization").put("stage", c.zeroStage());
    if (c.zeroStage() == 2) {
      zero.put("overlap_comm", input.overlaps().fsdpPrefetch());
      zero.put("contiguous_gradients", true);
      zero.put("reduce_bucket_size", 500_000_000L);
    }
    if (c.zeroStage() == 3) {
      zero.put("overlap_comm", input.overlaps().fsdpPrefetch());
      zero.put("contiguous_gradients", true);
      zero.put("reduce_bucket_size", 500_000_000L);
      zero.put("stage3_prefetch_bucket_size", 50_000_000L);
      zero.put("stage3_param_persistence_threshold", 100_000L);
      zero.put("stage3_max_live_parameters", 1_000_000_000L);
      zero.put("stage3_max_reuse_distance", 1_000_000_000L);
      zero.put("stage3_gather_16bit_weights_on_model_save", true);
    }
    if (m.dtype() == DType.BF16) {
      root.putObject("bf16").put("enabled", true);
    } else if (m.dtype() == DType.F16) {
      // loss_scale 0 selects dynamic loss scaling.
      root.putObject("fp16").put("enabled", true).put("loss_scale", 0);
    }
    root.put("steps_per_print", 10);
    root.put("wall_clock_breakdown", false);
    try {
      return JSON.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    }
  }
}
