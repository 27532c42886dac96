package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each framework's file for LLaMA2-70B on 128 x 8 GPUs, read back with the framework's own format
 * (bash for the Megatron-LM arguments, TOML, JSON) and compared with the configuration; and the
 * configurations each framework cannot express, with their nearest expressible neighbours.
 */
class ExporterTest {
  private final Exporter exporter = new Exporter();

  private String exported(ExportTarget t, io.meshplan.plan.PipelinePlan plan) {
    ExportResult r = exporter.export(t, plan, Plans.CLUSTER);
    assertThat(r).isInstanceOf(ExportResult.Exported.class);
    return ((ExportResult.Exported) r).text();
  }

  private String exported(ExportTarget t, ExportInput in) {
    ExportResult r = exporter.export(t, in);
    assertThat(r).isInstanceOf(ExportResult.Exported.class);
    return ((ExportResult.Exported) r).text();
  }

  private static ExportResult.NotExpressible notExpressible(ExportResult r) {
    assertThat(r).isInstanceOf(ExportResult.NotExpressible.class);
    return (ExportResult.NotExpressible) r;
  }

  /** Sources the file in bash and returns MEGATRON_ARGS word by word. */
  private static List<String> megatronWords(String text) throws IOException, InterruptedException {
    Path f = Files.createTempFile("megatron-", ".sh");
    try {
      Files.writeString(f, text);
      Process p = new ProcessBuilder("bash", "-c",
          "set -eu; source \"$1\"; printf '%s\\0' \"${MEGATRON_ARGS[@]}\"", "bash", f.toString())
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor()).as(out).isZero();
      List<String> words = new ArrayList<>(List.of(out.split("\0", -1)));
      words.remove(words.size() - 1);
      Process sc = new ProcessBuilder("shellcheck", "--shell=bash", "--severity=style",
          f.toString()).redirectErrorStream(true).start();
      String scOut = new String(sc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(sc.waitFor()).as(scOut).isZero();
      return words;
    } finally {
      Files.deleteIfExists(f);
    }
  }

  @Test
  void megatronArgumentsReadBackAsThePlan() throws Exception {
    List<String> w = megatronWords(exported(ExportTarget.MEGATRON,
        Plans.input(1, Recompute.SELECTIVE, true, true)));
    assertThat(w).containsExactly(
        "--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size", "4",
        "--micro-batch-size", "1", "--global-batch-size", "1024", "--sequence-parallel",
        "--recompute-granularity", "selective", "--use-distributed-optimizer",
        "--num-layers", "80", "--hidden-size", "8192", "--ffn-hidden-size", "28672",
        "--num-attention-heads", "64", "--seq-length", "4096", "--max-position-embeddings", "4096",
        "--swiglu", "--normalization", "RMSNorm", "--norm-epsilon", "1e-5",
        "--position-embedding-type", "rope", "--rotary-base", "500000",
        "--untie-embeddings-and-output-weights", "--disable-bias-linear",
        "--group-query-attention", "--num-query-groups", "8", "--attention-dropout", "0",
        "--hidden-dropout", "0", "--padded-vocab-size", "128256", "--attention-backend",
        "flash", "--bf16");
  }

  @Test
  void megatronInterleavedAndFullRecompute() throws Exception {
    List<String> w = megatronWords(exported(ExportTarget.MEGATRON,
        Plans.input(2, Recompute.FULL, false, false)));
    // 80 layers / (4 stages x 2 chunks) = 10 layers per virtual stage.
    assertThat(String.join(" ", w)).contains(
        "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 10",
        "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
    assertThat(w).doesNotContain("--sequence-parallel", "--use-distributed-optimizer");
  }

  @Test
  void torchtitanTomlReadsBackAsThePlan() throws Exception {
    // ZeRO-1 under a pipeline is FSDP over the 32 data-parallel ranks (shard 32, replicate 1)
    // that keeps the weights gathered through the step.
    String text = exported(ExportTarget.TORCHTITAN_V022,
        Plans.titan(Plans.input(2, Recompute.FULL, true, 1)));
    JsonNode t = new TomlMapper().readTree(text);
    JsonNode p = t.path("parallelism");
    assertThat(p.path("data_parallel_replicate_degree").asInt()).isEqualTo(1);
    assertThat(p.path("data_parallel_shard_degree").asInt()).isEqualTo(32);
    assertThat(p.path("fsdp_reshard_after_forward").asText()).isEqualTo("never");
    assertThat(p.path("tensor_parallel_degree").asInt()).isEqualTo(8);
    assertThat(p.path("pipeline_parallel_degree").asInt()).isEqualTo(4);
    assertThat(p.path("pipeline_parallel_schedule").asText()).isEqualTo("Interleaved1F1B");
    assertThat(p.path("pipeline_parallel_layers_per_stage").asInt()).isEqualTo(10);
    assertThat(p.path("pipeline_parallel_microbatch_size").asInt()).isEqualTo(1);
    // Local batch: 1024 sequences / 32 data-parallel replicas = 32.
    assertThat(t.at("/training/local_batch_size").asInt()).isEqualTo(32);
    assertThat(t.at("/training/global_batch_size").asInt()).isEqualTo(1024);
    assertThat(t.at("/training/seq_len").asInt()).isEqualTo(4096);
    assertThat(t.at("/training/mixed_precision_param").asText()).isEqualTo("bfloat16");
    assertThat(t.at("/activation_checkpoint/mode").asText()).isEqualTo("full");
    assertThat(text).contains("\n[parallelism]\n", "\n[training]\n",
        "\n[activation_checkpoint]\n");
  }

  @Test
  void torchtitanWithoutAPipelineAccumulatesMicrobatches() throws Exception {
    // tp 8 x pp 1 x dp 128 = 1024 GPUs; 1024 / (2 x 128) = 4 accumulation steps of 2 sequences.
    var in = new ExportInput(Plans.LLAMA31_70B, Plans.CLUSTER,
        new ParallelConfig(8, 1, 128, 1, 2, 1024, Recompute.FULL, true, 3));
    JsonNode t = new TomlMapper().readTree(exported(ExportTarget.TORCHTITAN_V022, in));
    assertThat(t.at("/training/local_batch_size").asInt()).isEqualTo(2);
    assertThat(t.at("/training/global_batch_size").asInt()).isEqualTo(1024);
    assertThat(t.at("/parallelism/data_parallel_shard_degree").asInt()).isEqualTo(128);
    assertThat(t.at("/parallelism/data_parallel_replicate_degree").asInt()).isEqualTo(1);
    assertThat(t.at("/parallelism/fsdp_reshard_after_forward").asText()).isEqualTo("always");
    assertThat(t.at("/parallelism/pipeline_parallel_degree").asInt()).isEqualTo(1);
    assertThat(t.path("parallelism").has("pipeline_parallel_schedule")).isFalse();
  }

  @Test
  void torchtitanCannotShardOnlyTheOptimizerNorSkipSequenceParallelism() {
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.TORCHTITAN_V022,
        Plans.titan(Plans.input(1, Recompute.SELECTIVE, false, true))));
    assertThat(n.missing()).contains("sequence parallelism");
    ParallelConfig near = n.nearest().orElseThrow().config();
    assertThat(near).isEqualTo(Plans.config(1, Recompute.SELECTIVE, true, true));
    assertThat(exporter.export(ExportTarget.TORCHTITAN_V022, n.nearest().get()))
        .isInstanceOf(ExportResult.Exported.class);
    // Without a pipeline FSDP shards weights and gradients as well: ZeRO-1 becomes ZeRO-3.
    ParallelConfig noPipeline = new ParallelConfig(8, 1, 128, 1, 1, 1024, Recompute.SELECTIVE,
        true, 1);
    ExportResult.NotExpressible z = notExpressible(exporter.export(ExportTarget.TORCHTITAN_V022,
        new ExportInput(Plans.LLAMA31_70B, Plans.CLUSTER, noPipeline)));
    assertThat(z.missing()).contains("no optimizer-only sharding (ZeRO-1) without pipeline");
    assertThat(z.nearest().orElseThrow().config()).isEqualTo(noPipeline.withZeroStage(3));
    // Under a pipeline it is ZeRO-3 that torchtitan lacks: the schedule keeps FSDP's weights
    // and gradients whole until the last microbatch.
    ExportResult.NotExpressible z3 = notExpressible(exporter.export(ExportTarget.TORCHTITAN_V022,
        Plans.titan(Plans.input(1, Recompute.SELECTIVE, true, 3))));
    assertThat(z3.missing()).contains("no ZeRO-3 with pipeline parallelism");
    assertThat(z3.nearest().orElseThrow().config())
        .isEqualTo(Plans.config(1, Recompute.SELECTIVE, true, true));
  }

  @Test
  void torchtitanReplicatesOnlyWhenDataParallelismIsAlone() throws Exception {
    // ZeRO-0 beside tp 8 x pp 4: torchtitan's parallelize.py refuses DDP with other parallelism;
    // the nearest is its FSDP under the pipeline, ZeRO-1.
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.TORCHTITAN_V022,
        Plans.titan(Plans.input(1, Recompute.SELECTIVE, true, 0))));
    assertThat(n.missing()).contains("DDP has not supported > 1D parallelism");
    assertThat(n.nearest().orElseThrow().config().zeroStage()).isEqualTo(1);
    // 1 node x 8 GPUs, data parallel only: DDP over 8 replicas, no sharding.
    var ddp = new ExportInput(Plans.LLAMA31_70B, io.meshplan.cluster.ClusterSpec.parse(
        "1x8:h100-80gb"), new ParallelConfig(1, 1, 8, 1, 1, 64, Recompute.FULL, false, 0));
    JsonNode t = new TomlMapper().readTree(exported(ExportTarget.TORCHTITAN_V022, ddp));
    assertThat(t.at("/parallelism/data_parallel_replicate_degree").asInt()).isEqualTo(8);
    assertThat(t.at("/parallelism/data_parallel_shard_degree").asInt()).isEqualTo(1);
    assertThat(t.path("parallelism").has("fsdp_reshard_after_forward")).isFalse();
    // ZeRO-1 on the same GPUs is not expressible, and its nearest is FSDP (ZeRO-3).
    ExportResult.NotExpressible z1 = notExpressible(exporter.export(ExportTarget.TORCHTITAN_V022,
        new ExportInput(ddp.model(), ddp.cluster(), ddp.config().withZeroStage(1))));
    assertThat(z1.nearest().orElseThrow().config()).isEqualTo(ddp.config().withZeroStage(3));
  }

  @Test
  void deepSpeedJsonReadsBackAsThePlan() throws Exception {
    JsonNode j = DeepSpeedLaunchFiles.json(exported(ExportTarget.DEEPSPEED,
        Plans.input(1, Recompute.FULL, true, true)));
    // train_batch_size 1024 = micro 1 x gradient accumulation 32 x data-parallel 32.
    assertThat(j.path("train_batch_size").asInt()).isEqualTo(1024);
    assertThat(j.path("train_micro_batch_size_per_gpu").asInt()).isEqualTo(1);
    assertThat(j.path("gradient_accumulation_steps").asInt()).isEqualTo(32);
    assertThat(j.at("/zero_optimization/stage").asInt()).isEqualTo(1);
    assertThat(j.at("/bf16/enabled").asBoolean()).isTrue();
    JsonNode noZero = DeepSpeedLaunchFiles.json(exported(ExportTarget.DEEPSPEED,
        Plans.input(1, Recompute.FULL, true, false)));
    assertThat(noZero.at("/zero_optimization/stage").asInt()).isZero();
  }

  @Test
  void deepSpeedHasNoInterleavedSchedule() {
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.DEEPSPEED,
        Plans.input(2, Recompute.FULL, true, true)));
    assertThat(n.missing()).contains("interleaved");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(Plans.config(1, Recompute.FULL, true, true));
  }

  @Test
  void aUniformPlanExportsLikeItsConfiguration() {
    // Four stages of 20 layers, each on 32 nodes x 8 GPUs as a 32 x 8 logical mesh.
    var plan = Plans.plan(new int[][] {{0, 19, 32, 32, 8}, {20, 39, 32, 32, 8},
        {40, 59, 32, 32, 8}, {60, 79, 32, 32, 8}});
    // (Alpa runs the plan's stages as they are, not as one configuration: AlpaExportTest.)
    for (ExportTarget t : List.of(ExportTarget.MEGATRON, ExportTarget.TORCHTITAN,
        ExportTarget.TORCHTITAN_V022, ExportTarget.DEEPSPEED)) {
      ExportResult r = exporter.export(t, plan, Plans.CLUSTER);
      assertThat(r).isEqualTo(exporter.export(t, Plans.input(1, Recompute.FULL, true, true)));
    }
  }

  @Test
  void unequalStagesExportAsMegatronCoresLayoutChunkByChunk() {
    // Layer counts 20, 22, 18, 20 are neither equal nor equal between the first and the last
    // stage; Megatron-Core's --pipeline-model-parallel-layout states them chunk by chunk.
    var plan = Plans.plan(new int[][] {{0, 19, 32, 32, 8}, {20, 41, 32, 32, 8},
        {42, 59, 32, 32, 8}, {60, 79, 32, 32, 8}});
    String layout = "E" + "t".repeat(20) + "|" + "t".repeat(22) + "|" + "t".repeat(18) + "|"
        + "t".repeat(20) + "L";
    assertThat(plan.asParallelConfig().orElseThrow().split())
        .isEqualTo(io.meshplan.plan.PipelineLayout.parse(layout, 4));
    assertThat(exported(ExportTarget.MEGATRON, plan))
        .contains("  --pipeline-model-parallel-layout '" + layout + "'\n");
  }

  @Test
  void stagesOfDifferentSettingsAreNotExpressibleAndTheNearestKeepsTheMeshAndStageCount() {
    // Stage 2 recomputes selectively, the others fully: Megatron-LM has one setting for all.
    var p = Plans.plan(new int[][] {{0, 19, 32, 32, 8}, {20, 39, 32, 32, 8},
        {40, 59, 32, 32, 8}, {60, 79, 32, 32, 8}});
    var stages = new java.util.ArrayList<>(p.stages());
    var s2 = stages.get(2);
    stages.set(2, new io.meshplan.plan.StagePlan(s2.firstLayer(), s2.lastLayer(),
        s2.submeshNodes(), s2.submeshGpus(), s2.firstDevice(), s2.dataParallel(),
        s2.tensorParallel(), Recompute.SELECTIVE, s2.sequenceParallel(), s2.zeroStage(),
        s2.megatronLayouts(), s2.forwardSeconds(), s2.backwardSeconds(), s2.peakMemoryBytes(),
        s2.tensors()));
    var plan = new io.meshplan.plan.PipelinePlan(p.source(), p.cluster(), p.globalBatchSize(),
        p.microbatchSequences(), p.microbatches(), 1, stages, p.prediction());
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.MEGATRON, plan,
        Plans.CLUSTER));
    assertThat(n.missing()).contains("stages use different recomputation");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(Plans.config(1, Recompute.FULL, true, true));
  }

  @Test
  void unevenFirstAndLastStagesExportAsMegatronCoresFlags() {
    // Layer counts 19, 21, 21, 19: the middle stages hold (80 - 19 - 19) / 2 = 21, so the plan is
    // --decoder-first-pipeline-num-layers 19 --decoder-last-pipeline-num-layers 19.
    var plan = Plans.plan(new int[][] {{0, 18, 32, 32, 8}, {19, 39, 32, 32, 8},
        {40, 60, 32, 32, 8}, {61, 79, 32, 32, 8}});
    ExportInput stated = new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
        Plans.config(1, Recompute.FULL, true, true).withStageLayers(19, 19));
    ExportResult r = exporter.export(ExportTarget.MEGATRON, plan, Plans.CLUSTER);
    assertThat(r).isEqualTo(exporter.export(ExportTarget.MEGATRON, stated));
    assertThat(((ExportResult.Exported) r).text()).contains(
        "--pipeline-model-parallel-size 4\n  --decoder-first-pipeline-num-layers 19\n"
            + "  --decoder-last-pipeline-num-layers 19\n");
    var firstOnly = Plans.plan(new int[][] {{0, 16, 32, 32, 8}, {17, 37, 32, 32, 8},
        {38, 58, 32, 32, 8}, {59, 79, 32, 32, 8}});
    // 17 + 21 + 21 + 21 = 80: the last stage holds as many as the middle ones, so only the first
    // is stated.
    assertThat(firstOnly.asParallelConfig().orElseThrow().firstStageLayers()).isEqualTo(17);
    assertThat(firstOnly.asParallelConfig().orElseThrow().lastStageLayers()).isZero();
    // torchtitan v0.2.2 states the split as module_fqns_per_model_part (job_config.py:367):
    // 19, 21, 21, 19 layers, the embedding on the first part and the norm and head on the last.
    var titanPlan = Plans.titanPlan(new int[][] {{0, 18, 32, 32, 8}, {19, 39, 32, 32, 8},
        {40, 60, 32, 32, 8}, {61, 79, 32, 32, 8}});
    String toml = ((ExportResult.Exported) exporter.export(ExportTarget.TORCHTITAN_V022,
        titanPlan, Plans.CLUSTER)).text();
    assertThat(toml).contains("module_fqns_per_model_part = [['tok_embeddings', 'layers.0', ",
        "'layers.18'], ['layers.19', ", "'layers.60'], ['layers.61', ",
        "'layers.79', 'norm', 'output']]\n").doesNotContain("layers_per_stage");
    // DeepSpeed's configuration carries one split for all stages: refused, and the even 20-layer
    // split (80 / 4) is the nearest.
    for (ExportTarget t : List.of(ExportTarget.DEEPSPEED)) {
      ExportResult.NotExpressible n = notExpressible(exporter.export(t, plan, Plans.CLUSTER));
      assertThat(n.missing()).containsAnyOf("uneven first or last stage",
          "no per-stage layer count");
      assertThat(n.nearest().orElseThrow().config().unevenStages()).isFalse();
    }
  }

  @Test
  void unevenStagesWithVirtualStagesUseTheVirtualStageCountFlag() {
    // pp 4 x vpp 2 on 80 layers with 18 on the first and last stage: the middle stages hold
    // (80 - 36) / 2 = 22, 11 per chunk; Megatron-LM refuses --num-layers-per-virtual-pipeline-stage
    // with uneven stages, so the count of chunks is written instead.
    ExportInput in = new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
        Plans.config(2, Recompute.FULL, true, true).withStageLayers(18, 18));
    String args = ((ExportResult.Exported) exporter.export(ExportTarget.MEGATRON, in)).text();
    assertThat(args).contains("--num-virtual-stages-per-pipeline-rank 2",
        "--decoder-first-pipeline-num-layers 18", "--decoder-last-pipeline-num-layers 18")
        .doesNotContain("--num-layers-per-virtual-pipeline-stage");
  }

  @Test
  void mixedMeshesTakeTheMostCommonMeshAndTheNearestDivisorOfTheLayers() {
    // Three stages: two 32-node stages on 32 x 8 meshes, one 64-node stage on a 128 x 4 mesh.
    // Most common tensor size: 8. Divisors p of 80 with 1024 % (8p) == 0: 1, 2, 4, 8, 16;
    // nearest to 3 stages are 2 and 4, the tie goes to 2, so dp = 1024 / (8 x 2) = 64. A
    // microbatch is 128 sequences (one per replica of the 128-way stage), 4 per replica of the
    // first stage, which the nearest configuration keeps.
    var plan = Plans.plan(new int[][] {{0, 29, 32, 32, 8}, {30, 59, 32, 32, 8},
        {60, 79, 64, 128, 4}});
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.MEGATRON, plan,
        Plans.CLUSTER));
    assertThat(n.missing()).contains("different logical meshes (32x8 and 128x4)");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(new ParallelConfig(8, 2, 64, 1, 4, 1024, Recompute.FULL, true, true));
  }

  @Test
  void megatronArchitectureFlagsFollowTheModel() {
    // A Megatron GPT (GeLU, LayerNorm, learned positions, biases, tied embeddings) needs no
    // architecture switch but the position type; its numbers (epsilon 1e-5, dropout 0.1) and
    // vocabulary are stated all the same. OPT's ReLU MLP has no Megatron-LM form.
    var gpt = new io.meshplan.model.ModelSpec("gpt", io.meshplan.model.ModelSpec.Family.GPT, 24,
        2048, 16, 16, 8192, 51200, 2048, 1, io.meshplan.graph.DType.BF16);
    assertThat(MegatronModelArgs.arguments(gpt)).containsExactly(
        List.of("--norm-epsilon", "1e-5"),
        List.of("--position-embedding-type", "learned_absolute"),
        List.of("--attention-dropout", "0.1"), List.of("--hidden-dropout", "0.1"),
        List.of("--padded-vocab-size", "51200"));
    var opt = new io.meshplan.model.ModelSpec("opt", io.meshplan.model.ModelSpec.Family.GPT, 24,
        2048, 16, 16, 8192, 50272, 2048, 1, io.meshplan.graph.DType.BF16,
        new io.meshplan.model.Architecture(io.meshplan.model.Architecture.Mlp.RELU,
            io.meshplan.model.Architecture.Norm.LAYER,
            io.meshplan.model.Architecture.Positions.LEARNED, 2048, true, true));
    var in = new ExportInput(opt, io.meshplan.cluster.ClusterSpec.parse("1x8:a100-80gb"),
        new ParallelConfig(8, 1, 1, 1, 1, 8, Recompute.NONE, false, false));
    assertThat(notExpressible(exporter.export(ExportTarget.MEGATRON, in)).missing())
        .contains("no ReLU MLP");
  }

  @Test
  void megatronCannotTrainTheAlpaMlp() {
    var mlp = new io.meshplan.model.ModelSpec("alpa-mlp", io.meshplan.model.ModelSpec.Family.ALPA_MLP,
        2, 128, 1, 1, 128, 1, 1, 1024, io.meshplan.graph.DType.F32);
    var in = new ExportInput(mlp, io.meshplan.cluster.ClusterSpec.parse("1x2:a100-40gb"),
        new ParallelConfig(1, 2, 1, 1, 1, 8, Recompute.NONE, false, false));
    ExportResult.NotExpressible n = notExpressible(exporter.export(ExportTarget.MEGATRON, in));
    assertThat(n.missing()).contains("alpa-mlp");
    assertThat(n.nearest()).isEmpty();
  }
}
