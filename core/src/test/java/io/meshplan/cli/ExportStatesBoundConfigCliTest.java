package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.export.TorchtitanPythonFile;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.BoundConfig;
import io.meshplan.plan.ContextExchange;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.TrainingConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Issue 37, step 1: every export states what {@code simulate} priced, read from the written file
 * and compared with the configuration the library binds for the same flags ({@link
 * TrainingConfig#bind}, the binding both commands use): the precision, the attention kernel, the
 * recomputation, the overlaps and every degree. Seeded configurations of Llama 3.1 8B (a flavor
 * torchtitan has) on one or two H100 nodes go to Megatron-LM, DeepSpeed (Megatron-DeepSpeed
 * arguments and its JSON) and torchtitan's main config; a target that cannot express a case says
 * so (exit 3) and is skipped.
 */
class ExportStatesBoundConfigCliTest {
  private static final int CASES = 8;

  /** A configuration: its flags and its binding. */
  private record Case(List<String> flags, BoundConfig bound) {}

  @Test
  void everyExportStatesTheBoundConfiguration() {
    Random rnd = new Random(3702);
    Map<String, Integer> checked = new java.util.TreeMap<>();
    for (int i = 0; i < CASES; i++) {
      long seed = rnd.nextLong();
      for (String to : List.of("megatron", "deepspeed", "torchtitan")) {
        Case c = randomCase(new Random(seed), to);
        List<String> args = new ArrayList<>(List.of("export", "--to", to));
        args.addAll(c.flags());
        CliRun r = CliRun.of(args.toArray(String[]::new));
        if (r.code() == ExitCodes.INFEASIBLE) {
          continue;
        }
        assertThat(r.code()).as(to + " " + c.flags() + ": " + r.err()).isZero();
        switch (to) {
          case "megatron" -> megatron(r.out(), c);
          case "deepspeed" -> deepspeed(r.out(), c);
          default -> torchtitan(r.out(), c);
        }
        checked.merge(to, 1, Integer::sum);
      }
    }
    // The seed's mix: every target writes some of the cases.
    assertThat(checked).as(checked.toString()).containsKeys("megatron", "deepspeed",
        "torchtitan");
    assertThat(checked.values().stream().mapToInt(Integer::intValue).sum()).isGreaterThan(8);
  }

  private static void megatron(String file, Case c) {
    Map<String, String> a = ExportRoundTripCliTest.arguments(file, "MEGATRON_ARGS=(");
    BoundConfig b = c.bound();
    ParallelConfig p = b.parallel();
    String as = "megatron " + c.flags();
    degrees(a, p, as);
    assertThat(a.getOrDefault("--context-parallel-size", "1")).as(as)
        .isEqualTo(String.valueOf(p.contextParallel()));
    assertThat(precision(a)).as(as).isEqualTo(b.dtype());
    assertThat(a.get("--attention-backend")).as(as).isEqualTo(b.attention().label());
    assertThat(a.containsKey("--use-distributed-optimizer")).as(as).isEqualTo(p.zeroStage() == 1);
    for (String f : p.megatronOverlapFlags(b.overlaps())) {
      assertThat(a).as(as).containsKey(f);
    }
  }

  private static void deepspeed(String file, Case c) {
    Map<String, String> a = ExportRoundTripCliTest.arguments(file, "DS_ARGS=(");
    BoundConfig b = c.bound();
    ParallelConfig p = b.parallel();
    String as = "deepspeed " + c.flags();
    degrees(a, p, as);
    assertThat(precision(a)).as(as).isEqualTo(b.dtype());
    String json = b.dtype() == DType.BF16 ? "\"bf16\" : {\n    \"enabled\" : true"
        : "\"fp16\" : {\n    \"enabled\" : true";
    assertThat(file.contains(json)).as(as).isEqualTo(b.dtype() != DType.F32);
    assertThat(a.containsKey("--use-flash-attn-v2")).as(as)
        .isEqualTo(b.attention() == Attention.FLASH);
    assertThat(a.getOrDefault("--zero-stage", "0")).as(as)
        .isEqualTo(String.valueOf(p.zeroStage()));
    assertThat(file.contains("\"overlap_comm\" : true")).as(as)
        .isEqualTo(b.overlaps().gradReduce());
  }

  private static void torchtitan(String file, Case c) {
    TorchtitanPythonFile t = TorchtitanPythonFile.parse(file);
    BoundConfig b = c.bound();
    ParallelConfig p = b.parallel();
    String as = "torchtitan " + c.flags();
    assertThat(t.integer("parallelism.tensor_parallel_degree")).as(as)
        .isEqualTo(p.tensorParallel());
    assertThat(t.integer("parallelism.pipeline_parallel_degree")).as(as)
        .isEqualTo(p.pipelineParallel());
    assertThat(t.integer("parallelism.context_parallel_degree")).as(as)
        .isEqualTo(p.contextParallel());
    assertThat(t.integer("parallelism.data_parallel_replicate_degree")
        * t.integer("parallelism.data_parallel_shard_degree")).as(as)
        .isEqualTo(p.dataParallel());
    assertThat(t.text("training.mixed_precision_param")).as(as).isEqualTo(
        switch (b.dtype()) {
          case BF16 -> "bfloat16";
          case F16 -> "float16";
          default -> "float32";
        });
    // Full recomputation is torchtitan's full activation checkpointing; Megatron-LM's selective
    // mode recomputes nothing under fused attention, and none is none.
    assertThat(t.text("activation_checkpoint")).as(as).isEqualTo(
        p.recompute() == Recompute.FULL ? "FullAC.Config()" : "None");
    assertThat(t.integer("training.num_tokens_per_train_step")).as(as)
        .isEqualTo((long) p.globalBatchSize() * b.model().seq());
  }

  /** The degrees and batch that Megatron-LM and Megatron-DeepSpeed spell alike. */
  private static void degrees(Map<String, String> a, ParallelConfig p, String as) {
    assertThat(a.get("--tensor-model-parallel-size")).as(as)
        .isEqualTo(String.valueOf(p.tensorParallel()));
    assertThat(a.get("--pipeline-model-parallel-size")).as(as)
        .isEqualTo(String.valueOf(p.pipelineParallel()));
    assertThat(a.get("--micro-batch-size")).as(as).isEqualTo(String.valueOf(p.microBatchSize()));
    assertThat(a.get("--global-batch-size")).as(as)
        .isEqualTo(String.valueOf(p.globalBatchSize()));
    assertThat(a.containsKey("--sequence-parallel")).as(as).isEqualTo(p.sequenceParallel());
    assertThat(a.getOrDefault("--recompute-granularity", "none")).as(as)
        .isEqualTo(p.recompute().label());
  }

  /** The precision Megatron-style arguments state: a bf16 or fp16 switch, else fp32. */
  private static DType precision(Map<String, String> a) {
    return a.containsKey("--bf16") ? DType.BF16 : a.containsKey("--fp16") ? DType.F16 : DType.F32;
  }

  /**
   * A random configuration as a target takes it: Llama 3 8B for DeepSpeed (Megatron-DeepSpeed
   * has no RoPE scaling), Llama 3.1 8B elsewhere (a torchtitan flavor), and for torchtitan
   * sequence parallelism with any tensor parallelism and the weights sharded (FSDP).
   */
  private static Case randomCase(Random rnd, String to) {
    String cluster = rnd.nextBoolean() ? "1x8:h100-80gb" : "2x8:h100-80gb";
    ClusterSpec cs = ClusterSpec.parse(cluster);
    int tp = new int[] {2, 4}[rnd.nextInt(2)];
    int pp = new int[] {1, 2}[rnd.nextInt(2)];
    int cp = new int[] {1, 1, 2}[rnd.nextInt(3)];
    int dp = cs.gpuCount() / (tp * pp * cp);
    int global = 4 * dp;
    Recompute recompute = new Recompute[] {Recompute.NONE, Recompute.SELECTIVE,
        Recompute.FULL}[rnd.nextInt(3)];
    boolean titan = to.equals("torchtitan");
    boolean sp = titan || rnd.nextBoolean();
    int zero = titan ? 3 : dp > 1 && rnd.nextBoolean() ? 1 : 0;
    String model = to.equals("deepspeed") ? "llama3-8b" : "llama3.1-8b";
    boolean f32 = rnd.nextInt(4) == 0;
    boolean gradReduce = rnd.nextBoolean();
    List<String> f = new ArrayList<>(List.of("--model", model, "--seq", "2048", "--cluster",
        cluster,
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp", String.valueOf(dp),
        "--micro-batch", "1", "--global-batch", String.valueOf(global), "--recompute",
        recompute.label(), "--zero-stage", String.valueOf(zero)));
    if (cp > 1) {
      f.addAll(List.of("--cp", String.valueOf(cp), "--cp-comm-type", "all_gather"));
    }
    if (sp) {
      f.add("--sequence-parallel");
    }
    if (f32) {
      f.addAll(List.of("--dtype", "f32"));
    }
    if (gradReduce) {
      f.add("--overlap-grad-reduce");
    }
    ParallelConfig layout = new ParallelConfig(tp, pp, dp, 1, 1, global, recompute, sp, zero)
        .withContext(cp, ContextExchange.ALL_GATHER);
    TrainingConfig config = TrainingConfig.of(layout, false)
        .withOverlaps(Overlaps.DEFAULTS.withGradReduce(gradReduce));
    if (f32) {
      config = config.withDtype(DType.F32);
    }
    ModelSpec m = Presets.get(model).withSequence(2048);
    return new Case(f, config.withAttention(Optional.empty()).bind(m, cs));
  }
}
