package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * ZeRO stages through every target: a ZeRO-3 plan of LLaMA2-70B on 128 x 8 GPUs pinned in each
 * framework's terms, the limits that make ZeRO-3 inexpressible (DeepSpeed's pipeline engine), and
 * plans whose stages mix ZeRO stages.
 */
class ZeroStageExportTest {
  private final Exporter exporter = new Exporter();

  /** One stage of all 80 layers on 128 nodes as a 128 x 8 mesh, weights sharded (ZeRO-3). */
  private static PipelinePlan zero3OneStage() {
    return Plans.plan(new int[][] {{0, 79, 128, 128, 8}}, new int[] {3});
  }

  /** Four stages of 20 layers, each on 32 nodes as a 32 x 8 mesh, with these ZeRO stages. */
  private static PipelinePlan fourStages(int... zero) {
    return Plans.plan(new int[][] {{0, 19, 32, 32, 8}, {20, 39, 32, 32, 8}, {40, 59, 32, 32, 8},
        {60, 79, 32, 32, 8}}, zero);
  }

  /**
   * A plan of {@link Plans#LLAMA31_70B} (torchtitan's flavor, RoPE included) with the stages of
   * {@code plan}.
   */
  private static PipelinePlan titan(PipelinePlan plan) {
    int[][] stages = plan.stages().stream().map(s -> new int[] {s.firstLayer(), s.lastLayer(),
        s.submeshNodes(), s.dataParallel(), s.tensorParallel()}).toArray(int[][]::new);
    return Plans.plan(Plans.LLAMA31_70B, stages, plan.stages().stream()
        .mapToInt(io.meshplan.plan.StagePlan::zeroStage).toArray());
  }

  private String exported(ExportTarget t, PipelinePlan plan) {
    ExportResult r = exporter.export(t, plan, Plans.CLUSTER);
    assertThat(r).isInstanceOf(ExportResult.Exported.class);
    return ((ExportResult.Exported) r).text();
  }

  private ExportResult.NotExpressible notExpressible(ExportTarget t, PipelinePlan plan) {
    ExportResult r = exporter.export(t, plan, Plans.CLUSTER);
    assertThat(r).isInstanceOf(ExportResult.NotExpressible.class);
    return (ExportResult.NotExpressible) r;
  }

  @Test
  void theZero3PlanIsOneConfiguration() {
    // tp 8 x pp 1 x dp 128 = 1024 GPUs; a microbatch is 128 sequences, one per replica, so
    // 1024 / 128 = 8 microbatches.
    assertThat(zero3OneStage().asParallelConfig()).contains(
        new ParallelConfig(8, 1, 128, 1, 1, 1024, Recompute.FULL, true, 3));
  }

  @Test
  void megatronWritesMegatronFsdpForZero3() {
    String text = exported(ExportTarget.MEGATRON, zero3OneStage());
    assertThat(text).contains("# model llama3-70b on 128x8:h100-80gb:ib-ndr400: tensor 8 x"
        + " pipeline 1 x data 128 = 1024 GPUs,\n# 8 microbatches of 1 per pipeline per iteration\n",
        "# ZeRO-3 is Megatron-FSDP.\n", "\nunset CUDA_DEVICE_MAX_CONNECTIONS\n");
    String args = text.substring(text.indexOf("MEGATRON_ARGS=(\n"),
        text.indexOf("\n)\n") + 3);
    assertThat(args).isEqualTo("""
        MEGATRON_ARGS=(
          --tensor-model-parallel-size 8
          --pipeline-model-parallel-size 1
          --micro-batch-size 1
          --global-batch-size 1024
          --sequence-parallel
          --recompute-granularity full
          --recompute-method uniform
          --recompute-num-layers 1
          --use-distributed-optimizer
          --use-megatron-fsdp
          --data-parallel-sharding-strategy optim_grads_params
          --ckpt-format fsdp_dtensor
          --init-model-with-meta-device
          --num-layers 80
          --hidden-size 8192
          --ffn-hidden-size 28672
          --num-attention-heads 64
          --seq-length 4096
          --max-position-embeddings 4096
          --swiglu
          --normalization RMSNorm
          --norm-epsilon 1e-5
          --position-embedding-type rope
          --rotary-base 500000
          --untie-embeddings-and-output-weights
          --disable-bias-linear
          --group-query-attention
          --num-query-groups 8
          --attention-dropout 0
          --hidden-dropout 0
          --padded-vocab-size 128256
          --attention-backend flash
          --bf16
        )
        """);
  }

  @Test
  void torchtitanWritesFsdpOverTheDataParallelRanksForZero3() {
    // local batch: no pipeline, so the microbatch (1); 1024 / (1 x 128) = 8 accumulation steps.
    assertThat(exported(ExportTarget.TORCHTITAN_V022, titan(zero3OneStage()))).isEqualTo("""
        # torchtitan job configuration written by meshplan export
        # model llama3.1-70b (layers 80, hidden 8192, heads 64, kv heads 8, ffn 28672, vocab \
        128256) on 128x8:h100-80gb:ib-ndr400: torchtitan v0.2.2 (its last TOML release), llama3 \
        flavor 70B
        # 1024 GPUs = tensor 8 x pipeline 1 x data 128; launch with torchrun over all of them
        # data parallelism: FSDP (ZeRO-3) over 128 ranks, weights gathered for every \
        microbatch's forward and backward
        # placeholders to edit: [training] steps and dataset, [checkpoint] folder and interval, \
        [model] hf_assets_path (scripts/download_hf_assets.py fetches the tokenizer)

        [model]
        name = 'llama3'
        flavor = '70B'
        hf_assets_path = './assets/hf/Llama-3.1-70B'

        [parallelism]
        data_parallel_replicate_degree = 1
        data_parallel_shard_degree = 128
        fsdp_reshard_after_forward = 'always'
        tensor_parallel_degree = 8
        context_parallel_degree = 1
        pipeline_parallel_degree = 1

        [training]
        local_batch_size = 1
        global_batch_size = 1024
        seq_len = 4096
        mixed_precision_param = 'bfloat16'
        steps = 1000
        dataset = 'c4'

        [checkpoint]
        enable = true
        folder = 'checkpoint'
        interval = 500

        [activation_checkpoint]
        mode = 'full'
        """);
  }

  @Test
  void deepSpeedWritesStage3WithItsTuningKeysSpelledOut() {
    // train_batch_size 1024 = micro 1 x gradient accumulation 8 x data-parallel 128.
    assertThat(DeepSpeedLaunchFiles.heredoc(exported(ExportTarget.DEEPSPEED, zero3OneStage())))
        .isEqualTo("""
        {
          "train_batch_size" : 1024,
          "train_micro_batch_size_per_gpu" : 1,
          "gradient_accumulation_steps" : 8,
          "zero_optimization" : {
            "stage" : 3,
            "overlap_comm" : true,
            "contiguous_gradients" : true,
            "reduce_bucket_size" : 500000000,
            "stage3_prefetch_bucket_size" : 50000000,
            "stage3_param_persistence_threshold" : 100000,
            "stage3_max_live_parameters" : 1000000000,
            "stage3_max_reuse_distance" : 1000000000,
            "stage3_gather_16bit_weights_on_model_save" : true
          },
          "bf16" : {
            "enabled" : true
          },
          "optimizer" : {
            "type" : "AdamW",
            "params" : {
              "lr" : ${LR},
              "betas" : [ 0.9, 0.95 ],
              "eps" : 1.0E-8,
              "weight_decay" : 0.1
            }
          },
          "scheduler" : {
            "type" : "WarmupDecayLR",
            "params" : {
              "warmup_min_lr" : 0,
              "warmup_max_lr" : ${LR},
              "warmup_num_steps" : ${WARMUP_ITERS},
              "warmup_type" : "linear",
              "total_num_steps" : ${TRAIN_ITERS}
            }
          },
          "gradient_clipping" : 1.0,
          "steps_per_print" : 10,
          "wall_clock_breakdown" : false
        }
        """);
  }

  /**
   * The keys DeepSpeed documents (https://www.deepspeed.ai/docs/config-json/): the batch keys, the
   * precision tables, logging, and the {@code zero_optimization} block of "ZeRO Optimizations for
   * FP16 Training".
   */
  private static final Set<String> DOCUMENTED_TOP = Set.of("train_batch_size",
      "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization",
      "bf16", "fp16", "optimizer", "scheduler", "gradient_clipping", "steps_per_print",
      "wall_clock_breakdown");
  private static final Set<String> DOCUMENTED_ZERO = Set.of("stage", "allgather_partitions",
      "allgather_bucket_size", "overlap_comm", "reduce_scatter", "reduce_bucket_size",
      "contiguous_gradients", "offload_param", "offload_optimizer", "stage3_max_live_parameters",
      "stage3_max_reuse_distance", "stage3_prefetch_bucket_size",
      "stage3_param_persistence_threshold", "sub_group_size",
      "stage3_gather_16bit_weights_on_model_save", "ignore_unused_parameters",
      "round_robin_gradients", "zero_hpz_partition_size", "zero_quantized_weights",
      "zero_quantized_gradients", "log_trace_cache_warnings");
  private static final Set<String> BOOLEAN_ZERO = Set.of("overlap_comm", "contiguous_gradients",
      "stage3_gather_16bit_weights_on_model_save");

  @Test
  void everyDeepSpeedKeyIsADocumentedOneWithItsDocumentedType() throws Exception {
    List<JsonNode> files = new ArrayList<>();
    for (int zero : new int[] {0, 1}) {
      files.add(DeepSpeedLaunchFiles.json(exported(ExportTarget.DEEPSPEED,
          fourStages(zero, zero, zero, zero))));
    }
    files.add(DeepSpeedLaunchFiles.json(exported(ExportTarget.DEEPSPEED, zero3OneStage())));
    for (JsonNode j : files) {
      assertThat(j.fieldNames()).toIterable().isSubsetOf(DOCUMENTED_TOP);
      assertThat(j.path("gradient_clipping").isNumber()).isTrue();
      JsonNode z = j.path("zero_optimization");
      assertThat(z.fieldNames()).toIterable().isSubsetOf(DOCUMENTED_ZERO);
      assertThat(z.path("stage").asInt()).isIn(0, 1, 3);
      z.properties().forEach(e -> {
        if (BOOLEAN_ZERO.contains(e.getKey())) {
          assertThat(e.getValue().isBoolean()).as(e.getKey()).isTrue();
        } else {
          assertThat(e.getValue().isIntegralNumber()).as(e.getKey()).isTrue();
          assertThat(e.getValue().asLong()).as(e.getKey()).isNotNegative();
        }
      });
    }
    assertThat(files.get(0).at("/zero_optimization/stage").asInt()).isZero();
    assertThat(files.get(1).at("/zero_optimization/stage").asInt()).isEqualTo(1);
    assertThat(files.get(0).path("zero_optimization").size()).isEqualTo(1);
  }

  @Test
  void deepSpeedRefusesZero3WithAPipelineAndKeepsTheLayoutWithZero1() {
    // tp 8 x pp 4 x dp 32 with ZeRO-3: DeepSpeed's pipeline engine takes ZeRO 0 or 1 only.
    ExportResult.NotExpressible n = notExpressible(ExportTarget.DEEPSPEED,
        fourStages(3, 3, 3, 3));
    assertThat(n.missing()).contains("ZeRO-2 and ZeRO-3 are incompatible with pipeline"
        + " parallelism");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1));
    // Megatron-LM (Megatron-FSDP) expresses the same plan.
    assertThat(exported(ExportTarget.MEGATRON, fourStages(3, 3, 3, 3)))
        .contains("  --pipeline-model-parallel-size 4\n", "  --use-megatron-fsdp\n");
    // torchtitan neither: under the pipeline schedule its FSDP is ZeRO-1, which it writes for
    // the ZeRO-1 plan.
    ExportResult.NotExpressible t = notExpressible(ExportTarget.TORCHTITAN_V022,
        titan(fourStages(3, 3, 3, 3)));
    assertThat(t.nearest().orElseThrow().config())
        .isEqualTo(new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1));
    assertThat(exported(ExportTarget.TORCHTITAN_V022, titan(fourStages(1, 1, 1, 1)))).contains(
        "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 32\n"
            + "fsdp_reshard_after_forward = 'never'\n", "pipeline_parallel_degree = 4\n",
        "# data parallelism: FSDP over 32 ranks under the pipeline schedule: weights gathered"
            + " and gradients reduce-scattered once per step, optimizer state sharded (ZeRO-1)\n");
  }

  @Test
  void mixedZeroStagesAreNotExpressibleAndTheNearestShardsAsMuchAsTheMostShardedStage() {
    // Stages 1, 3, 1, 1: every framework applies one ZeRO stage to all stages. The nearest
    // keeps tp 8 x pp 4 x dp 32 and takes ZeRO-3, under which every stage still fits; DeepSpeed
    // and torchtitan cannot shard weights under a pipeline, so theirs is ZeRO-1.
    PipelinePlan mixed = fourStages(1, 3, 1, 1);
    ParallelConfig layout = new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 0);
    // (Alpa gives each stage its own ZeRO stage; it refuses ZeRO-3 itself, AlpaExportTest.)
    for (ExportTarget t : List.of(ExportTarget.MEGATRON, ExportTarget.TORCHTITAN,
        ExportTarget.TORCHTITAN_V022, ExportTarget.DEEPSPEED)) {
      boolean titan = t == ExportTarget.TORCHTITAN || t == ExportTarget.TORCHTITAN_V022;
      ExportResult.NotExpressible n = notExpressible(t, titan ? titan(mixed) : mixed);
      assertThat(n.missing()).as(t.label()).contains("optimizer sharding settings");
      assertThat(n.nearest().orElseThrow().config()).as(t.label())
          .isEqualTo(layout.withZeroStage(t == ExportTarget.MEGATRON ? 3 : 1));
    }
  }

  @Test
  void aZeroStageOutsideZeroToThreeIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Plans.config(1, Recompute.FULL,
        true, false).withZeroStage(4)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ZeRO stage must be 0, 1, 2 or 3, got 4");
  }

  /** One stage of all 80 layers on 128 nodes as a 128 x 8 mesh, gradients sharded (ZeRO-2). */
  private static PipelinePlan zero2OneStage() {
    return Plans.plan(new int[][] {{0, 79, 128, 128, 8}}, new int[] {2});
  }

  @Test
  void deepSpeedWritesStageTwoWithTheBucketThePriceAssumes() throws Exception {
    JsonNode z = DeepSpeedLaunchFiles.json(exported(ExportTarget.DEEPSPEED, zero2OneStage()))
        .path("zero_optimization");
    assertThat(z.path("stage").asInt()).isEqualTo(2);
    // The plan was priced with the reduce-scatter under the backward (the default prefetch).
    assertThat(z.path("overlap_comm").asBoolean(false)).isTrue();
    assertThat(z.path("contiguous_gradients").asBoolean()).isTrue();
    assertThat(z.path("reduce_bucket_size").asLong()).isEqualTo(500_000_000L);
    // Under a pipeline DeepSpeed refuses ZeRO-2; the nearest keeps the layout with ZeRO-1.
    ExportResult.NotExpressible n = notExpressible(ExportTarget.DEEPSPEED,
        fourStages(2, 2, 2, 2));
    assertThat(n.missing()).contains("refuses ZeRO-2 (\"ZeRO-2 and ZeRO-3 are incompatible");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1));
  }

  @Test
  void megatronWritesMegatronFsdpOptimGradsForZero2() {
    String text = exported(ExportTarget.MEGATRON, fourStages(2, 2, 2, 2));
    assertThat(text).contains("# ZeRO-2 is Megatron-FSDP.\n",
        "\nunset CUDA_DEVICE_MAX_CONNECTIONS\n",
        "  --use-megatron-fsdp\n  --data-parallel-sharding-strategy optim_grads\n");
  }

  @Test
  void torchtitanHasNoZero2() {
    ExportResult.NotExpressible n = notExpressible(ExportTarget.TORCHTITAN_V022,
        titan(zero2OneStage()));
    assertThat(n.missing()).startsWith("torchtitan has no ZeRO-2");
    // Without a pipeline torchtitan's FSDP is ZeRO-3.
    assertThat(n.nearest().orElseThrow().config().zeroStage()).isEqualTo(3);
  }
}
