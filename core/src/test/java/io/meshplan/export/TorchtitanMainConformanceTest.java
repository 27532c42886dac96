package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Every torchtitan config meshplan writes in its main branch's Python form, against the rules of
 * that branch, restated here from pytorch/torchtitan at commit
 * b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (2026-08-21); each rule's file and line in its
 * comment:
 *
 * <ul>
 *   <li>{@code torchtitan/config/configs.py:36-111} ({@code TrainingConfig}) and {@code 121-282}
 *       ({@code ParallelismConfig}): the fields that exist, and the literals of {@code
 *       mixed_precision_param} (line 94) and {@code fsdp_reshard_after_forward} (line 145);
 *   <li>{@code torchtitan/distributed/parallel_dims.py:166}: dp_replicate x dp_shard x cp x tp x
 *       pp = world size;
 *   <li>{@code torchtitan/trainer.py:124-128}: {@code num_pp_microbatches} > 0; lines 170-176:
 *       CUDA graphs refuse a pipeline unless {@code disable_cuda_graphs}; lines 296-309: a
 *       microbatch's tokens divide by tp under sequence parallelism; lines 409-428: gradient
 *       accumulation is tokens per step / (tokens per microbatch x pp microbatches x dp), exact;
 *   <li>{@code torchtitan/distributed/pipeline_parallel.py:88-92}: explicit {@code
 *       module_fqns_per_model_part} are the stages; lines 552-558: their number divides by pp
 *       and chunk k sits on rank k mod pp; single-stage schedules (1F1B, GPipe) take one stage
 *       per rank and Interleaved1F1B at least two (lines 244-256); lines 387, 434, 456: the
 *       modules are {@code tok_embeddings}, {@code layers.N}, {@code norm}, {@code lm_head};
 *   <li>{@code torchtitan/distributed/activation_checkpoint.py:332-337}: the activation
 *       checkpointing choices; {@code torchtitan/models/llama3/config_registry.py:194, 267, 305}
 *       and {@code models/llama3/__init__.py:359-366}: the recipes and flavors.
 * </ul>
 */
class TorchtitanMainConformanceTest {
  /** {@code ParallelismConfig}'s fields (configs.py:121-282). */
  private static final Set<String> PARALLELISM = Set.of("data_parallel_replicate_degree",
      "data_parallel_shard_degree", "fsdp_reshard_after_forward", "enable_fsdp_symm_mem",
      "tensor_parallel_degree", "enable_sequence_parallel", "spmd_backend",
      "pipeline_parallel_degree", "module_fqns_per_model_part",
      "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
      "pipeline_parallel_layers_per_stage", "pipeline_parallel_schedule",
      "pipeline_parallel_schedule_csv", "num_pp_microbatches", "context_parallel_degree",
      "context_parallel_load_balancer", "context_parallel_ptrr_mask_key",
      "expert_parallel_degree");

  /** {@code TrainingConfig}'s fields (configs.py:36-111). */
  private static final Set<String> TRAINING = Set.of("num_tokens_per_microbatch_per_dp_rank",
      "num_tokens_per_train_step", "max_context_length", "max_norm", "steps",
      "enable_cpu_offload", "disable_cuda_graphs", "dtype", "mixed_precision_param",
      "mixed_precision_reduce", "gc_freq", "gc_debug");

  @Test
  void everyExportPassesTheRulesOfMain() throws Exception {
    List<ExportInput> inputs = new ArrayList<>(Plans.torchtitanInputs());
    ModelSpec small = Presets.get("llama3-8b");
    inputs.add(new ExportInput(small, ClusterSpec.parse("1x8:h100-80gb"),
        new ParallelConfig(2, 4, 1, 1, 1, 8, Recompute.NONE, true, 0), Attention.FLASH,
        io.meshplan.model.Overlaps.DEFAULTS, true));
    // The fused loss: the loss compiled alone.
    inputs.add(new ExportInput(small, ClusterSpec.parse("1x8:h100-80gb"),
        new ParallelConfig(2, 4, 1, 1, 1, 8, Recompute.NONE, true, 0), Attention.FLASH,
        io.meshplan.model.Overlaps.DEFAULTS.withLossFusion(true), false));
    // Hybrid sharding: FSDP inside each node's 8 replicas, 4 replicas of the state.
    inputs.add(new ExportInput(small, ClusterSpec.parse("4x8:h100-80gb"),
        new ParallelConfig(1, 1, 32, 1, 1, 128, Recompute.FULL, false, 3).withShardGroup(8),
        Attention.FLASH, io.meshplan.model.Overlaps.DEFAULTS, false));
    // pp 1: 1; pp 2, 4, 8: vpp 1, 2, 5 each (9); pp 5: 40 GPUs do not divide 128; pp 16: vpp 1
    // and 5 (80 % 32 != 0): 12 layouts, and the 6 above.
    assertThat(inputs).hasSize(18);
    for (ExportInput in : inputs) {
      ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN, in);
      assertThat(r).as(in.config().toString()).isInstanceOf(ExportResult.Exported.class);
      String text = ((ExportResult.Exported) r).text();
      conforms(in, TorchtitanPythonFile.parse(text));
      pythonParses(text);
    }
  }

  /** One file against main's checks, and against the configuration it was written from. */
  private static void conforms(ExportInput in, TorchtitanPythonFile f) {
    ParallelConfig c = in.config();
    for (String name : f.fields().keySet()) {
      String[] dotted = name.split("\\.", 2);
      assertThat(switch (dotted[0]) {
        case "parallelism" -> PARALLELISM.contains(dotted[1]);
        case "training" -> TRAINING.contains(dotted[1]);
        // config/configs.py's CompileConfig: the loss compiled for the fused cross-entropy.
        case "compile" -> Set.of("enable", "components").contains(dotted[1])
            && in.overlaps().lossFusion();
        default -> Set.of("model_spec", "activation_checkpoint").contains(name);
      }).as(name).isTrue();
    }
    long rep = f.integer("parallelism.data_parallel_replicate_degree");
    long shard = f.integer("parallelism.data_parallel_shard_degree");
    long tp = f.integer("parallelism.tensor_parallel_degree");
    long pp = f.integer("parallelism.pipeline_parallel_degree");
    // parallel_dims.py:166.
    assertThat(rep * shard * f.integer("parallelism.context_parallel_degree") * tp * pp)
        .isEqualTo(in.cluster().gpuCount());
    assertThat(List.of(tp, pp, rep * shard)).containsExactly((long) c.tensorParallel(),
        (long) c.pipelineParallel(), (long) c.dataParallel());
    // parallel_dims.py: FSDP over dp_shard, replicas across dp_replicate (HSDP when both > 1);
    // the shard group is the plan's.
    if (c.shardGroup() > 0) {
      assertThat(List.of(shard, rep)).containsExactly((long) c.shardGroup(),
          (long) c.shardReplicas());
    }
    // configs.py:94, 145.
    assertThat(Set.of("bfloat16", "float32"))
        .contains(f.text("training.mixed_precision_param"));
    if (f.fields().containsKey("parallelism.fsdp_reshard_after_forward")) {
      assertThat(Set.of("default", "always", "never"))
          .contains(f.text("parallelism.fsdp_reshard_after_forward"));
    }
    // activation_checkpoint.py's FullAC and SelectiveAC (per op), and the plan's recompute:
    // Megatron-LM's selective one recomputes nothing under torchtitan's fused attention, so it
    // is none there.
    assertThat(f.text("activation_checkpoint")).isEqualTo(switch (c.recompute()) {
      case FULL, MAXTEXT_FULL -> "FullAC.Config()";
      case OP -> "SelectiveAC.Config()";
      case NONE, SELECTIVE -> "None";
      // MaxText's other policies are refused: no file to read.
      default -> throw new AssertionError("exported " + c.recompute().label());
    });
    String flavor = TorchtitanV022.flavor(in.model()).orElseThrow().name();
    assertThat(f.flavor()).isEqualTo(flavor);
    assertThat(f.recipe()).isEqualTo(TorchtitanMain.RECIPES.get(flavor));
    batchConforms(in, f, rep * shard);
    if (pp > 1) {
      stagesConform(in, f);
    }
  }

  /** trainer.py's batch arithmetic gives the plan's microbatches and global batch. */
  private static void batchConforms(ExportInput in, TorchtitanPythonFile f, long dp) {
    ParallelConfig c = in.config();
    long perMicrobatch = f.integer("training.num_tokens_per_microbatch_per_dp_rank");
    long perStep = f.integer("training.num_tokens_per_train_step");
    long seq = f.integer("training.max_context_length");
    // trainer.py:409-410: num_pp_microbatches counts only under a pipeline.
    int ppMicrobatches = c.pipelineParallel() > 1
        ? (int) f.integer("parallelism.num_pp_microbatches") : 1;
    assertThat(ppMicrobatches).isPositive();
    long accumulation = TorchtitanMain.accumulation(perStep, perMicrobatch, ppMicrobatches,
        (int) dp);
    assertThat(accumulation).as("trainer.py:419 divides exactly").isPositive();
    // The plan's microbatches per pipeline and iteration: pp microbatches x accumulation.
    assertThat(ppMicrobatches * accumulation).isEqualTo(c.microbatches());
    assertThat(perMicrobatch).isEqualTo((long) c.microBatchSize() * seq);
    assertThat(perStep / seq).isEqualTo(c.globalBatchSize());
    assertThat(seq).isEqualTo(in.model().seq());
    // trainer.py:296-309.
    boolean sp = f.text("parallelism.enable_sequence_parallel").equals("True");
    assertThat(perMicrobatch % TorchtitanMain.tokenDivisor(c.tensorParallel(), sp, 1)).isZero();
  }

  /** pipeline_parallel.py's stages for the written parts: count, per-rank rule, modules. */
  private static void stagesConform(ExportInput in, TorchtitanPythonFile f) {
    ParallelConfig c = in.config();
    int pp = c.pipelineParallel();
    // trainer.py:170-176.
    assertThat(f.text("training.disable_cuda_graphs")).isEqualTo("True");
    String schedule = f.text("parallelism.pipeline_parallel_schedule");
    assertThat(Set.of("1F1B", "GPipe", "Interleaved1F1B")).contains(schedule);
    assertThat(schedule.equals("GPipe")).isEqualTo(in.gpipe());
    int parts = f.parts().size();
    // pipeline_parallel.py:555: the stages divide by pp; 244-256: one per rank for single-stage
    // schedules, two or more for looped ones.
    assertThat(parts % pp).isZero();
    assertThat(TorchtitanV022.stageError(parts, pp, !schedule.startsWith("Interleaved")))
        .isEmpty();
    assertThat(parts).isEqualTo(pp * c.virtualStages());
    List<String> all = new ArrayList<>();
    f.parts().forEach(all::addAll);
    List<String> expected = new ArrayList<>(List.of("tok_embeddings"));
    for (int i = 0; i < in.model().layers(); i++) {
      expected.add("layers." + i);
    }
    expected.addAll(List.of("norm", "lm_head"));
    assertThat(all).isEqualTo(expected);
    int[] chunks = c.chunkLayers(in.model().layers());
    for (int k = 0; k < parts; k++) {
      assertThat(f.layersOf(k)).as("chunk " + k).isEqualTo(chunks[k]);
    }
  }

  /**
   * Python itself parses the text (one or more files, each a module of its own), where a python3
   * is on the PATH.
   */
  static void pythonParses(String text) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder("python3", "-c",
          "import ast, sys; ast.parse(sys.stdin.read())").redirectErrorStream(true).start();
    } catch (IOException e) {
      Assumptions.abort("no python3 to parse the exported configs: " + e.getMessage());
      return;
    }
    p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
  }

  @Test
  void uneven18LayerEndsOf70bOnFourRanksAreTheirOwnParts() {
    // 80 layers, first and last 18: the middle 2 stages take (80 - 36) / 2 = 22 each.
    ExportInput in = new ExportInput(Plans.LLAMA70B, ClusterSpec.parse("16x8:h100-80gb"),
        new ParallelConfig(8, 4, 4, 1, 1, 256, Recompute.FULL, true, 1).withStageLayers(18, 18));
    TorchtitanPythonFile f = TorchtitanPythonFile.parse(
        ((ExportResult.Exported) new Exporter().export(ExportTarget.TORCHTITAN, in)).text());
    assertThat(List.of(f.layersOf(0), f.layersOf(1), f.layersOf(2), f.layersOf(3)))
        .containsExactly(18, 22, 22, 18);
    // 256 sequences over dp 4 are 64 microbatches of 1 per rank, all in the pipeline:
    // 64 x 4096 tokens per dp rank, no accumulation (trainer.py:426: 1048576 / (4096 x 64 x 4)).
    assertThat(f.integer("parallelism.num_pp_microbatches")).isEqualTo(64);
    assertThat(f.integer("training.num_tokens_per_train_step")).isEqualTo(256L * 4096);
    assertThat(TorchtitanMain.accumulation(256L * 4096, 4096, 64, 4)).isEqualTo(1);
  }

  @Test
  void f16AndModelsOfNoFlavorHaveNoMainForm() {
    ModelSpec m = Presets.get("llama3-8b");
    ModelSpec f16 = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffn(), m.vocab(), 2048, 1, DType.F16);
    ParallelConfig c = new ParallelConfig(8, 2, 2, 1, 1, 64, Recompute.NONE, true, 1);
    ExportResult v100 = new Exporter().export(ExportTarget.TORCHTITAN,
        new ExportInput(f16, ClusterSpec.parse("4x8:v100-32gb"), c));
    assertThat(((ExportResult.NotExpressible) v100).missing()).contains("has no bf16");
    assertThat(((ExportResult.NotExpressible) v100).nearest()).isEmpty();
    ModelSpec l2 = Presets.get("llama2-70b");
    ExportResult none = new Exporter().export(ExportTarget.TORCHTITAN,
        new ExportInput(l2, ClusterSpec.parse("16x8:h100-80gb"),
            new ParallelConfig(8, 4, 4, 1, 1, 256, Recompute.FULL, true, 1)));
    // LLaMA2-70B is 70B but for its vocabulary (32,000): the nearest flavor is 70B.
    assertThat(((ExportResult.NotExpressible) none).missing())
        .contains("no flavor for llama2-70b", "the nearest is flavor 70B (layers 80");
  }
}
