package io.meshplan.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.InputException;
import io.meshplan.util.ShellQuote;
import java.util.List;
import java.util.Optional;

/**
 * A DeepSpeed launch file (Rajbhandari et al., "ZeRO", SC'20): a bash file to source that writes
 * the DeepSpeed configuration JSON (batch sizes, gradient accumulation, ZeRO stage, precision,
 * optimizer, scheduler, gradient clipping) to {@code $DS_CONFIG} and sets {@code DS_ARGS}, the
 * Megatron-DeepSpeed arguments of {@link MegatronDeepSpeedArgs}. The JSON alone carries no tensor
 * or pipeline size, and DeepSpeed then takes the whole world as data parallel and refuses the
 * batch ({@code deepspeed/runtime/config.py}:724 and 937, DeepSpeed commit edaa722); the
 * arguments give it the model-parallel unit under which {@code train_batch_size = micro batch *
 * gradient accumulation * data-parallel size} holds.
 *
 * <p>The JSON's keys are those DeepSpeed's config readers take: {@code bf16.enabled} ({@code
 * deepspeed/runtime/precision_config.py}:41-47) or {@code fp16} with dynamic loss scaling and its
 * defaults spelled out ({@code precision_config.py}:100-160), never both ({@code
 * config.py}:826-828); {@code optimizer} {@code AdamW} with the betas, epsilon and weight decay
 * meshplan prices ({@link TrainingGraphBuilder}; {@code config.py}:444-456, the name lower-cased
 * against {@code DEEPSPEED_OPTIMIZERS}, {@code config.py}:84-87 and 840-842); {@code scheduler}
 * {@code WarmupDecayLR} ({@code deepspeed/runtime/lr_schedules.py}:22 and 766-797, looked up by
 * name in {@code engine.py}:1598-1610) with linear warm-up from 0; {@code gradient_clipping} 1.0
 * ({@code config.py}:257, {@code constants.py}:260). The learning rate, warm-up and training
 * iterations are shell variables the file asks for ({@code LR}, {@code TRAIN_ITERS}) or defaults
 * ({@code WARMUP_ITERS} 2000), so the heredoc is expanded when sourced.
 *
 * <p>Overlaps follow the plan: ZeRO-1 reduces gradients under the backward only with {@code
 * overlap_comm} (the plan's {@code --overlap-grad-reduce}); DeepSpeed's engine without ZeRO has no
 * such overlap, and no optimizer gathers weights under the next forward or overlaps tensor-parallel
 * communication with GEMMs, so plans priced with those exit 3.
 *
 * <p>ZeRO stages map one to one ({@code zero_optimization.stage} 0, 1, 2 or 3; Megatron-LM's
 * distributed optimizer is stage 1). Two limits of DeepSpeed's pipeline engine ({@code
 * deepspeed/runtime/pipe/engine.py}:76-77) make configurations inexpressible: it has no interleaved
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
  /**
   * The gradient clipping norm written ({@code gradient_clipping}, DeepSpeed's default, {@code
   * deepspeed/runtime/constants.py}:260) and Megatron-DeepSpeed's {@code --clip-grad} default.
   */
  public static final double GRADIENT_CLIPPING = 1.0;

  /** The warm-up iterations written when {@code WARMUP_ITERS} is unset. */
  public static final int DEFAULT_WARMUP_ITERS = 2000;

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** Creates the writer; it holds no state. */
  public DeepSpeedConfig() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    Optional<String> loss = input.fusedLoss("Megatron-DeepSpeed's vocab_parallel_cross_entropy"
        + " converts the logits to fp32");
    if (loss.isPresent()) {
      return loss;
    }
    Optional<String> op = input.perOpRecompute("DeepSpeed's activation checkpointing");
    if (op.isPresent()) {
      return op;
    }
    ParallelConfig c = input.config();
    Optional<String> model = missingModel(input.model());
    if (model.isPresent()) {
      return model;
    }
    Optional<String> split = MegatronDeepSpeedArgs.missingSplit(input);
    if (split.isPresent()) {
      return split;
    }
    if (!c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT)) {
      return Optional.of("DeepSpeed's activation checkpointing wraps whole layers the training "
          + "script chooses; its configuration has no list of modules like --recompute-modules "
          + io.meshplan.model.RecomputeModule.labels(c.recomputeModules()));
    }
    if (Fp8Training.on(input.model().dtype())) {
      // Its configuration JSON switches fp16, bf16 and amp; FP8 GEMMs come only from
      // Transformer Engine modules in the model code, which a config cannot turn on.
      return Optional.of("DeepSpeed's configuration has no FP8 training switch (fp16, bf16 or"
          + " amp only)");
    }
    if (c.contextParallel() > 1
        && c.cpExchange() != io.meshplan.plan.ContextExchange.ALL_TO_ALL) {
      return Optional.of("DeepSpeed's context parallelism is Ulysses' all-to-alls (--cp-comm-type"
          + " a2a, Megatron-DeepSpeed's --ds-sequence-parallel-size); it has no "
          + c.cpExchange().word() + " exchange of keys and values");
    }
    if (c.contextParallel() > 1 && c.sequenceParallel()) {
      // megatron/initialize.py:247-252 (Megatron-DeepSpeed 4efb479) raises on both.
      return Optional.of("Megatron-DeepSpeed refuses its sequence parallelism"
          + " (--ds-sequence-parallel-size) beside Megatron-LM's (--sequence-parallel)");
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
    return missingOverlap(c, input.overlaps());
  }

  /** What Megatron-DeepSpeed's GPT model cannot build ({@code megatron/arguments.py}). */
  private static Optional<String> missingModel(ModelSpec m) {
    if (m.family() == ModelSpec.Family.ALPA_MLP) {
      return Optional.of("Megatron-DeepSpeed trains transformer language models; " + m.name()
          + " (Alpa's MLP test model) is not one");
    }
    if (m.arch().mlp() == Architecture.Mlp.RELU) {
      return Optional.of("Megatron-DeepSpeed has no ReLU MLP (GeLU, SwiGLU or squared ReLU); "
          + m.name() + " uses ReLU");
    }
    if (m.arch().positions() == Architecture.Positions.LEARNED
        && m.arch().positionRows() < m.seq()) {
      return Optional.of("Megatron-DeepSpeed's learned position table needs a row per position; "
          + m.name() + " has " + m.arch().positionRows() + " rows for " + m.seq() + " positions");
    }
    return Optional.empty();
  }

  /** The overlaps the plan was priced with that DeepSpeed cannot run. */
  private static Optional<String> missingOverlap(ParallelConfig c, Overlaps o) {
    if (o.gradReduce() && c.zeroStage() == 0) {
      return Optional.of("DeepSpeed's engine without ZeRO all-reduces gradients after the"
          + " backward pass (overlap_comm is a ZeRO setting); the plan overlaps the gradient"
          + " reduction (--overlap-grad-reduce)");
    }
    if (o.gradReduce() && o.paramGather() && c.zeroStage() == 1) {
      return Optional.of("DeepSpeed's ZeRO-1 gathers the updated weights after the optimizer"
          + " step; the plan overlaps the gather with the next forward pass"
          + " (--overlap-param-gather)");
    }
    if (o.tensorComm() && c.sequenceParallel()) {
      return Optional.of("Megatron-DeepSpeed has no tensor-parallel communication overlap; the"
          + " plan overlaps it with the GEMMs (--tp-comm-overlap)");
    }
    if (o.bf16GradReduce()) {
      return Optional.of("this export writes DeepSpeed's bf16 training with its fp32 gradient "
          + "accumulation and reduction; the plan reduces gradients in bf16 "
          + "(--grad-reduce-in-bf16)");
    }
    return Optional.empty();
  }

  /**
   * The nearest expressible input: one model chunk per stage instead of the interleaved schedule,
   * 1F1B instead of GPipe, and, with a pipeline, ZeRO-1 instead of ZeRO-2 or ZeRO-3 (the layout stays; only the weights
   * and gradients are no longer sharded); uneven stages become even ones when the layers divide;
   * the loss is the fp32 one (the overlaps are rebuilt without its fusion); torchtitan's per-op
   * recomputation becomes full recomputation.
   */
  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    if (missingModel(input.model()).isPresent()) {
      return Optional.empty();
    }
    // Ulysses' all-to-alls stay, without Megatron-LM's sequence parallelism beside them; the
    // ring and the all-gather fold into data parallelism.
    boolean ulysses = input.config().contextParallel() > 1
        && input.config().cpExchange() == io.meshplan.plan.ContextExchange.ALL_TO_ALL;
    ParallelConfig c = ulysses ? input.config() : ContextFold.fold(input.config());
    boolean sp = c.sequenceParallel() && !ulysses;
    int zero = c.zeroStage() >= 2 && c.pipelineParallel() > 1 ? 1 : c.zeroStage();
    ModelSpec m = input.model();
    Overlaps o = input.overlaps();
    // Each overlap DeepSpeed lacks is turned off; the gradient reduction stays under ZeRO-1. The
    // nearest runs 1F1B, DeepSpeed's pipeline schedule.
    Overlaps runnable = new Overlaps(o.gradReduce() && zero >= 1,
        o.paramGather() && zero != 1, o.tensorComm() && !sp, o.fsdpPrefetch(),
        o.gradAccumFusion());
    try {
      ParallelConfig near = new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
          c.dataParallel(), 1, c.microBatchSize(), c.globalBatchSize(), c.recompute().layerwise(),
          sp, zero);
      if (ulysses) {
        near = near.withContext(c.contextParallel(), io.meshplan.plan.ContextExchange.ALL_TO_ALL);
      }
      input = new ExportInput(Fp8Training.on(m.dtype()) ? m.withTraining(m.batch(), DType.BF16)
          : m, input.cluster(), near, input.attention(), runnable, false);
      return Optional.of(input);
    } catch (InputException e) {
      // Uneven stages whose layers do not split evenly over the pipeline, or a global batch that
      // the folded data-parallel size does not divide.
      return Optional.empty();
    }
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    ParallelConfig c = input.config();
    StringBuilder sb = new StringBuilder();
    sb.append("# DeepSpeed configuration and Megatron-DeepSpeed arguments written by meshplan"
        + " export\n");
    sb.append("# model ").append(ShellQuote.commentText(input.model().name())).append(" on ")
        .append(input.cluster().toShortString()).append(": tensor ").append(c.tensorParallel())
        .append(" x pipeline ").append(c.pipelineParallel())
        .append(c.contextParallel() > 1 ? " x sequence " + c.contextParallel() : "")
        .append(" x data ")
        .append(c.dataParallel()).append(" = ").append(io.meshplan.util.Words.count(c.gpus(), "GPU")).append("\n");
    sb.append("# DeepSpeed checks train_batch_size ").append(c.globalBatchSize())
        .append(" = micro ").append(c.microBatchSize()).append(" x gradient accumulation ")
        .append(c.microbatches()).append(" x data-parallel ").append(c.dataParallel())
        .append(", the data-parallel size\n# coming from the ")
        .append(c.contextParallel() > 1 ? "tensor, pipeline and sequence" : "tensor and pipeline")
        .append(" sizes in DS_ARGS; with the JSON alone it would take ").append(c.gpus() == 1 ? "the"
            : "all").append(" ").append(io.meshplan.util.Words.count(c.gpus(), "GPU")).append(" as data parallel.\n");
    sb.append("# Use: export TRAIN_ITERS=... LR=... [WARMUP_ITERS=...]; source this file; then\n"
        + "#   deepspeed --hostfile HOSTFILE --num_nodes ").append(input.cluster().hosts())
        .append(" --num_gpus ").append(input.cluster().hostGpus())
        .append(" pretrain_gpt.py \"${DS_ARGS[@]}\" <tokenizer and data arguments>\n");
    java.util.OptionalLong iterations = input.bound().config().iterations(input.model().seq());
    sb.append(iterations.isPresent() ? ": \"${TRAIN_ITERS:=" + iterations.getAsLong()
        + "}\"  # --train-tokens over the global batch's tokens\n"
        : ": \"${TRAIN_ITERS:?set TRAIN_ITERS, the iterations to train}\"\n");
    sb.append(": \"${LR:?set LR, the peak learning rate}\"\n");
    sb.append("WARMUP_ITERS=${WARMUP_ITERS:-").append(DEFAULT_WARMUP_ITERS).append("}\n");
    sb.append("DS_CONFIG=${DS_CONFIG:-ds_config.json}\n");
    if (c.sequenceParallel()) {
      sb.append("# Megatron-DeepSpeed refuses sequence parallelism without it"
          + " (megatron/arguments.py:402-406).\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    }
    sb.append("cat > \"$DS_CONFIG\" <<JSON\n").append(json(input)).append("JSON\n");
    sb.append("# shellcheck disable=SC2034\nDS_ARGS=(\n");
    for (List<String> a : MegatronDeepSpeedArgs.of(input, "\"$DS_CONFIG\"")) {
      sb.append("  ").append(String.join(" ", a.stream().map(w -> w.startsWith("\"$") ? w
          : ShellQuote.quote(w)).toList())).append('\n');
    }
    return sb.append(")\n").toString();
  }

  /**
   * The DeepSpeed configuration JSON, with the shell expansions {@code ${LR}}, {@code
   * ${WARMUP_ITERS}} and {@code ${TRAIN_ITERS}} in place of the learning-rate numbers.
   *
   * @param input an input this writer expresses
   * @return the JSON text, ending in a newline
   */
  public static String json(ExportInput input) {
    ParallelConfig c = input.config();
    ObjectNode root = JSON.createObjectNode();
    root.put("train_batch_size", c.globalBatchSize());
    root.put("train_micro_batch_size_per_gpu", c.microBatchSize());
    root.put("gradient_accumulation_steps", c.microbatches());
    root.set("zero_optimization", zero(c, input.overlaps()));
    precision(root, input.model().dtype());
    ObjectNode opt = root.putObject("optimizer").put("type", "AdamW").putObject("params");
    opt.putRawValue("lr", new RawValue("${LR}"));
    opt.putArray("betas").add(TrainingGraphBuilder.BETA1).add(TrainingGraphBuilder.BETA2);
    opt.put("eps", TrainingGraphBuilder.ADAM_EPS);
    opt.put("weight_decay", TrainingGraphBuilder.WEIGHT_DECAY);
    ObjectNode sched = root.putObject("scheduler").put("type", "WarmupDecayLR")
        .putObject("params");
    sched.put("warmup_min_lr", 0);
    sched.putRawValue("warmup_max_lr", new RawValue("${LR}"));
    sched.putRawValue("warmup_num_steps", new RawValue("${WARMUP_ITERS}"));
    sched.put("warmup_type", "linear");
    sched.putRawValue("total_num_steps", new RawValue("${TRAIN_ITERS}"));
    root.put("gradient_clipping", GRADIENT_CLIPPING);
    root.put("steps_per_print", 10);
    root.put("wall_clock_breakdown", false);
    try {
      return JSON.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    }
  }

  private static ObjectNode zero(ParallelConfig c, Overlaps o) {
    ObjectNode zero = JSON.createObjectNode().put("stage", c.zeroStage());
    if (c.zeroStage() == 1) {
      // DeepSpeed's default for stages below 3 is false (zero/config.py:383-385).
      zero.put("overlap_comm", o.gradReduce());
    }
    if (c.zeroStage() >= 2) {
      zero.put("overlap_comm", o.fsdpPrefetch());
      zero.put("contiguous_gradients", true);
      zero.put("reduce_bucket_size", 500_000_000L);
    }
    if (c.zeroStage() == 3) {
      zero.put("stage3_prefetch_bucket_size", 50_000_000L);
      zero.put("stage3_param_persistence_threshold", 100_000L);
      zero.put("stage3_max_live_parameters", 1_000_000_000L);
      zero.put("stage3_max_reuse_distance", 1_000_000_000L);
      zero.put("stage3_gather_16bit_weights_on_model_save", true);
    }
    return zero;
  }

  /** bf16, or fp16 with dynamic loss scaling and DeepSpeed's defaults; fp32 writes neither. */
  private static void precision(ObjectNode root, DType dtype) {
    if (dtype == DType.BF16) {
      root.putObject("bf16").put("enabled", true);
    } else if (dtype == DType.F16) {
      // loss_scale 0 selects dynamic loss scaling, starting at 2^16.
      root.putObject("fp16").put("enabled", true).put("loss_scale", 0)
          .put("initial_scale_power", 16).put("loss_scale_window", 1000).put("hysteresis", 2)
          .put("min_loss_scale", 1);
    }
  }
}
