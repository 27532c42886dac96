package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * DeepSpeed's and Megatron-DeepSpeed's own rules, restated as assertions on what {@code export
 * --to deepspeed} writes. Sources: DeepSpeed (deepspeedai/DeepSpeed) at commit edaa722 (2026-08-22)
 * and Megatron-DeepSpeed (deepspeedai/Megatron-DeepSpeed) at commit 4efb479 (2025-07-16); each
 * rule names its file and lines there.
 */
class DeepSpeedConformanceTest {
  private final Exporter exporter = new Exporter();

  /**
   * Top-level keys DeepSpeed's {@code DeepSpeedConfig._initialize_params} reads: {@code
   * deepspeed/runtime/constants.py}:19 ({@code train_batch_size}), 61-69 ({@code optimizer}, {@code
   * scheduler}), 81 ({@code steps_per_print}), 95 ({@code train_micro_batch_size_per_gpu}), 107
   * ({@code gradient_accumulation_steps}), 260 ({@code gradient_clipping}); {@code
   * precision_config.py}:34 and 95 ({@code bf16}, {@code fp16}); {@code zero/config.py}:57
   * ({@code zero_optimization}, read at {@code config.py}:813); {@code wall_clock_breakdown},
   * {@code config.py}:507-508.
   */
  private static final Set<String> TOP_KEYS = Set.of("train_batch_size",
      "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization",
      "bf16", "fp16", "optimizer", "scheduler", "gradient_clipping", "steps_per_print",
      "wall_clock_breakdown");
  /** {@code DEEPSPEED_OPTIMIZERS}, {@code config.py}:71-87; names are lower-cased (840-842). */
  private static final Set<String> OPTIMIZERS = Set.of("adagrad", "adam", "adamw", "lamb",
      "onebitadam", "zerooneadam", "onebitlamb", "muadam", "muadamw", "musgd", "lion", "muon");
  /** FusedAdam's keyword arguments, {@code deepspeed/ops/adam/fused_adam.py}:76-85. */
  private static final Set<String> FUSED_ADAM_PARAMS = Set.of("lr", "bias_correction", "betas",
      "eps", "adam_w_mode", "weight_decay", "amsgrad", "set_grad_none");
  /** {@code VALID_LR_SCHEDULES}, {@code deepspeed/runtime/lr_schedules.py}:19-24. */
  private static final Set<String> SCHEDULES = Set.of("LRRangeTest", "OneCycle", "WarmupLR",
      "WarmupDecayLR", "WarmupCosineLR");
  /** WarmupDecayLR's keyword arguments, {@code lr_schedules.py}:789-796. */
  private static final Set<String> WARMUP_DECAY_PARAMS = Set.of("total_num_steps",
      "warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type",
      "last_batch_iteration");
  /** DeepSpeedFP16Config's fields, {@code precision_config.py}:105-160. */
  private static final Set<String> FP16_KEYS = Set.of("enabled", "auto_cast", "loss_scale",
      "initial_scale_power", "loss_scale_window", "hysteresis", "consecutive_hysteresis",
      "min_loss_scale", "fp16_master_weights_and_grads");
  /**
   * Options Megatron-DeepSpeed's parser has ({@code megatron/arguments.py}, line of each {@code
   * add_argument}), plus {@code --deepspeed} and {@code --deepspeed_config} from DeepSpeed's
   * {@code add_config_arguments} ({@code deepspeed/__init__.py}:285-290), added at line 54.
   */
  private static final Map<String, Integer> MDS_OPTIONS = Map.ofEntries(
      Map.entry("--tensor-model-parallel-size", 1149),
      Map.entry("--ds-sequence-parallel-size", 974),
      Map.entry("--pipeline-model-parallel-size", 1154),
      Map.entry("--no-pipeline-parallel", 954), Map.entry("--micro-batch-size", 801),
      Map.entry("--global-batch-size", 808), Map.entry("--sequence-parallel", 972),
      Map.entry("--recompute-granularity", 830), Map.entry("--num-layers", 602),
      Map.entry("--hidden-size", 616), Map.entry("--ffn-hidden-size", 618),
      Map.entry("--num-attention-heads", 621), Map.entry("--num-key-value-heads", 623),
      Map.entry("--seq-length", 1278), Map.entry("--max-position-embeddings", 630),
      Map.entry("--use-rotary-position-embeddings", 633),
      Map.entry("--no-position-embedding", 640), Map.entry("--swiglu", 670),
      Map.entry("--normalization", 647), Map.entry("--untie-embeddings-and-output-weights", 680),
      Map.entry("--disable-bias-linear", 937), Map.entry("--attention-dropout", 768),
      Map.entry("--hidden-dropout", 770),
      Map.entry("--rotary-position-embeddings-theta", 635), Map.entry("--rotary-percent", 638),
      Map.entry("--layernorm-epsilon", 652), Map.entry("--make-vocab-size-divisible-by", 644),
      Map.entry("--use-flash-attn-v2", 930), Map.entry("--no-gradient-accumulation-fusion", 986),
      Map.entry("--fp16", 1111), Map.entry("--bf16", 1113), Map.entry("--zero-stage", 1487),
      Map.entry("--optimizer", 940), Map.entry("--adam-beta1", 783),
      Map.entry("--adam-beta2", 786), Map.entry("--adam-eps", 789),
      Map.entry("--weight-decay", 772), Map.entry("--clip-grad", 781), Map.entry("--lr", 1017),
      Map.entry("--min-lr", 1048), Map.entry("--lr-decay-style", 1021),
      Map.entry("--lr-warmup-iters", 1036), Map.entry("--train-iters", 873),
      Map.entry("--deepspeed", 54), Map.entry("--deepspeed_config", 54));

  private static List<ExportInput> inputs() {
    ModelSpec fp16 = Plans.LLAMA70B.withTraining(Plans.LLAMA70B.batch(), DType.F16);
    ModelSpec fp32 = Plans.LLAMA70B.withTraining(Plans.LLAMA70B.batch(), DType.F32);
    ParallelConfig noPipe = new ParallelConfig(8, 1, 128, 1, 1, 1024, Recompute.FULL, true, 3);
    return List.of(Plans.input(1, Recompute.SELECTIVE, true, true),
        Plans.input(1, Recompute.FULL, false, false),
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER, noPipe),
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER, noPipe.withZeroStage(2)),
        new ExportInput(fp16, Plans.CLUSTER, Plans.config(1, Recompute.FULL, true, true)),
        new ExportInput(fp32, Plans.CLUSTER, new ParallelConfig(2, 2, 256, 1, 2, 2048,
            Recompute.NONE, false, 0)),
        // DeepSpeed-Ulysses: 4 GPUs split each 32,768-token sequence by all-to-alls (each tensor
        // rank's 32 query and 4 key/value heads over 4), TP 2 without Megatron-LM's sequence
        // parallelism, PP 2: 1,024 = 2 x 2 x 4 x 64.
        new ExportInput(Plans.LLAMA70B.withSequence(32_768), Plans.CLUSTER,
            new ParallelConfig(2, 2, 64, 1, 1, 256, Recompute.FULL, false, 1)
                .withContext(4, io.meshplan.plan.ContextExchange.ALL_TO_ALL)));
  }

  private String launchFile(ExportInput in) {
    ExportResult r = exporter.export(ExportTarget.DEEPSPEED, in);
    assertThat(r).as(r.toString()).isInstanceOf(ExportResult.Exported.class);
    return ((ExportResult.Exported) r).text();
  }

  private static int option(List<String> args, String name) {
    return Integer.parseInt(args.get(args.indexOf(name) + 1));
  }

  @Test
  void theBatchPassesDeepSpeedsCheckOnlyWithTheModelParallelUnit() throws Exception {
    for (ExportInput in : inputs()) {
      String text = launchFile(in);
      JsonNode j = DeepSpeedLaunchFiles.json(text);
      List<String> args = DeepSpeedLaunchFiles.args(text);
      int world = in.cluster().gpuCount();
      int tp = option(args, "--tensor-model-parallel-size");
      int pp = option(args, "--pipeline-model-parallel-size");
      int sp = args.contains("--ds-sequence-parallel-size")
          ? option(args, "--ds-sequence-parallel-size") : 1;
      assertThat(sp).isEqualTo(in.config().contextParallel());
      // Megatron-DeepSpeed, arguments.py:101-108: dp = world / (pp * tp * ds_sequence_parallel),
      // world divisible; that group is DeepSpeed's mpu (config.py:711-716, __init__.py:242-244).
      assertThat(world % (tp * pp * sp)).isZero();
      int dp = world / (tp * pp * sp);
      if (sp > 1) {
        // initialize.py:247-252 raises beside Megatron-LM's sequence parallelism;
        // model/transformer.py:618 asserts num_attention_heads % sequence parallel size == 0.
        assertThat(args).doesNotContain("--sequence-parallel");
        assertThat(option(args, "--num-attention-heads") % sp).isZero();
      }
      assertThat(dp).isEqualTo(in.config().dataParallel());
      long train = j.path("train_batch_size").asLong();
      long micro = j.path("train_micro_batch_size_per_gpu").asLong();
      long gas = j.path("gradient_accumulation_steps").asLong();
      // config.py:931-940 (_batch_assertion): all positive, train == micro * gas * world_size.
      assertThat(train).isPositive();
      assertThat(micro).isPositive();
      assertThat(gas).isPositive();
      assertThat(train).isEqualTo(micro * gas * dp);
      // Megatron-DeepSpeed's own batch sizes are the JSON's (arguments.py:164-171).
      assertThat(option(args, "--micro-batch-size")).isEqualTo(micro);
      assertThat(option(args, "--global-batch-size")).isEqualTo(train);
      // Without the unit DeepSpeed takes the world (config.py:724) and the check fails.
      if (tp * pp > 1) {
        assertThat(train).isNotEqualTo(micro * gas * world);
      }
    }
  }

  @Test
  void everyKeyAndArgumentIsOneTheConsumersHave() throws Exception {
    for (ExportInput in : inputs()) {
      String text = launchFile(in);
      JsonNode j = DeepSpeedLaunchFiles.json(text);
      assertThat(j.fieldNames()).toIterable().isSubsetOf(TOP_KEYS);
      assertThat(OPTIMIZERS).contains(j.at("/optimizer/type").asText().toLowerCase());
      assertThat(j.at("/optimizer/params").fieldNames()).toIterable()
          .isSubsetOf(FUSED_ADAM_PARAMS);
      // engine.py:2090-2093 refuses max_grad_norm among the optimizer's parameters.
      assertThat(j.at("/optimizer/params").has("max_grad_norm")).isFalse();
      assertThat(SCHEDULES).contains(j.at("/scheduler/type").asText());
      assertThat(j.at("/scheduler/params").fieldNames()).toIterable()
          .isSubsetOf(WARMUP_DECAY_PARAMS);
      // total_num_steps has no default (lr_schedules.py:791); warmup_num_steps > 0 (708-709).
      assertThat(j.at("/scheduler/params/total_num_steps").isIntegralNumber()).isTrue();
      assertThat(j.at("/scheduler/params/warmup_num_steps").asInt()).isPositive();
      // warmup_type is 'log' or 'linear' (lr_schedules.py:52-53).
      assertThat(j.at("/scheduler/params/warmup_type").asText()).isIn("log", "linear");
      assertThat(j.path("gradient_clipping").asDouble()).isEqualTo(1.0);
      List<String> args = DeepSpeedLaunchFiles.args(text);
      for (String w : args) {
        if (w.startsWith("--")) {
          assertThat(MDS_OPTIONS).as(w).containsKey(w);
        }
      }
      // LLaMA's block: SwiGLU, RMSNorm (choices layernorm, rmsnorm: arguments.py:647-648) and
      // rotary positions without the learned table.
      assertThat(args).contains("--swiglu", "--use-rotary-position-embeddings",
          "--no-position-embedding", "--untie-embeddings-and-output-weights",
          "--disable-bias-linear");
      assertThat(args.get(args.indexOf("--normalization") + 1)).isEqualTo("rmsnorm");
      assertThat(option(args, "--num-key-value-heads")).isEqualTo(in.model().kvHeads());
      assertThat(args.get(args.indexOf("--hidden-dropout") + 1)).isEqualTo("0.0");
      assertThat(args.get(args.indexOf("--deepspeed_config") + 1)).isEqualTo("ds_config.json");
      assertThat(args.get(args.indexOf("--lr") + 1)).isEqualTo(DeepSpeedLaunchFiles.LR);
    }
  }

  @Test
  void zeroStagesAreDeepSpeedsAndMatchMegatronDeepSpeedsZeroStage() throws Exception {
    for (ExportInput in : inputs()) {
      String text = launchFile(in);
      int stage = DeepSpeedLaunchFiles.json(text).at("/zero_optimization/stage").asInt();
      List<String> args = DeepSpeedLaunchFiles.args(text);
      // ZeroStageEnum, zero/config.py:81-87: 0 to 3.
      assertThat(stage).isBetween(0, 3).isEqualTo(in.config().zeroStage());
      // pretrain_gpt.py:46-49 partitions the model at construction only for --zero-stage 3.
      assertThat(option(args, "--zero-stage")).isEqualTo(stage);
      int pp = option(args, "--pipeline-model-parallel-size");
      // The pipeline engine takes stages below 2 (pipe/engine.py:76-77); without a pipeline,
      // --no-pipeline-parallel (asserted with pp 1 only, arguments.py:94-96) keeps it out.
      assertThat(stage < 2 || pp == 1).isTrue();
      assertThat(args.contains("--no-pipeline-parallel")).isEqualTo(pp == 1);
    }
  }

  @Test
  void theDtypeBlockIsThePlansAndFp16AndBf16AreExclusive() throws Exception {
    List<String> seen = new ArrayList<>();
    for (ExportInput in : inputs()) {
      String text = launchFile(in);
      JsonNode j = DeepSpeedLaunchFiles.json(text);
      List<String> args = DeepSpeedLaunchFiles.args(text);
      boolean fp16 = j.at("/fp16/enabled").asBoolean(false);
      boolean bf16 = j.at("/bf16/enabled").asBoolean(false);
      // config.py:826-828: not both; Megatron-DeepSpeed asserts the same (arguments.py:187-192).
      assertThat(fp16 && bf16).isFalse();
      assertThat(args.contains("--fp16") && args.contains("--bf16")).isFalse();
      DType d = in.model().dtype();
      assertThat(bf16).isEqualTo(d == DType.BF16).isEqualTo(args.contains("--bf16"));
      assertThat(fp16).isEqualTo(d == DType.F16).isEqualTo(args.contains("--fp16"));
      if (fp16) {
        // Dynamic loss scaling (loss_scale 0, precision_config.py:115) with DeepSpeed's defaults.
        assertThat(j.path("fp16").fieldNames()).toIterable().isSubsetOf(FP16_KEYS);
        assertThat(j.at("/fp16/loss_scale").asDouble()).isZero();
        assertThat(j.at("/fp16/initial_scale_power").asInt()).isEqualTo(16);
      }
      seen.add(d.name());
    }
    assertThat(seen).contains("BF16", "F16", "F32");
  }

  @Test
  void overlapsFollowThePlanOrTheExportSaysWhichItLacks() throws Exception {
    ExportInput z1 = Plans.input(1, Recompute.FULL, true, true);
    ExportInput overlapped = new ExportInput(z1.model(), z1.cluster(), z1.config(),
        z1.attention(), Overlaps.DEFAULTS.withGradReduce(true));
    // ZeRO-1's overlap_comm is the plan's --overlap-grad-reduce; DeepSpeed's default for stages
    // below 3 is false (zero/config.py:383-385), so it is written either way.
    assertThat(DeepSpeedLaunchFiles.json(launchFile(overlapped))
        .at("/zero_optimization/overlap_comm").asBoolean()).isTrue();
    assertThat(DeepSpeedLaunchFiles.json(launchFile(z1))
        .at("/zero_optimization/overlap_comm").asBoolean()).isFalse();
    // Without ZeRO DeepSpeed has no overlapped gradient reduction: exit 3, nearest without it.
    ExportInput z0 = overlapped.withConfig(overlapped.config().withZeroStage(0));
    ExportResult r = exporter.export(ExportTarget.DEEPSPEED, z0);
    assertThat(r).isInstanceOf(ExportResult.NotExpressible.class);
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) r;
    assertThat(n.missing()).contains("--overlap-grad-reduce");
    assertThat(n.nearest().orElseThrow().overlaps()).isEqualTo(Overlaps.DEFAULTS);
    assertThat(n.nearest().orElseThrow().config()).isEqualTo(z0.config());
  }
}
