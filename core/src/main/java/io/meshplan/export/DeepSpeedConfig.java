package io.meshplan.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A DeepSpeed configuration JSON (Rajbhandari et al., "ZeRO", SC'20): batch sizes, gradient
 * accumulation, ZeRO stage and precision. DeepSpeed takes its data-parallel size from the world
 * size over the model-parallel group that the model code (Megatron-DeepSpeed, with the arguments of
 * {@link MegatronArgs}) sets up, so {@code train_batch_size = micro batch * gradient accumulation *
 * data-parallel size} holds for the same configuration. Megatron-LM's distributed optimizer is ZeRO
 * stage 1. DeepSpeed's pipeline engine has no interleaved schedule.
 */
public final class DeepSpeedConfig implements FrameworkWriter {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** Creates the writer; it holds no state. */
  public DeepSpeedConfig() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    if (input.config().virtualStages() > 1) {
      return Optional.of("DeepSpeed's pipeline engine has no interleaved schedule (virtual"
          + " pipeline stages)");
    }
    return Optional.empty();
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ParallelConfig c = input.config();
    return Optional.of(new ExportInput(input.model(), input.cluster(), new ParallelConfig(
        c.tensorParallel(), c.pipelineParallel(), c.dataParallel(), 1, c.microBatchSize(),
        c.globalBatchSize(), c.recompute(), c.sequenceParallel(), c.distributedOptimizer())));
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
    root.putObject("zero_optimization").put("stage", c.distributedOptimizer() ? 1 : 0);
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
