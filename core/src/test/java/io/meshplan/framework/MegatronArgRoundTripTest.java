package io.meshplan.framework;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.calibrate.RunModel;
import io.meshplan.calibrate.RunParallel;
import io.meshplan.calibrate.TrainingLogs;
import io.meshplan.calibrate.TrainingRun;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.export.ExportInput;
import io.meshplan.export.ExportTarget;
import io.meshplan.export.Exporter;
import io.meshplan.export.MegatronArgs;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Megatron-LM's argument names are one table ({@link MegatronArg}) for the export that writes them
 * and the log reader of {@code calibrate --train} that reads them back. Round trip, on seeded
 * random layouts: the arguments {@code export --to megatron} writes are printed as Megatron-LM
 * prints its arguments block (each under its {@link MegatronArg#dest}; switches True, negated
 * switches False; the world, data-parallel and virtual-pipeline sizes derived as
 * {@code megatron/training/arguments.py} derives them), the log is read as a user's log is, and
 * the run read back has the layout exported.
 */
class MegatronArgRoundTripTest {
  private static final ClusterSpec CLUSTER = ClusterSpec.parse("128x8:h100-80gb:ib-ndr400");

  @TempDir Path dir;

  @Test
  void everyArgumentTheExportWritesIsReadBackAsTheSameLayout() throws IOException {
    ModelSpec model = Presets.get("llama2-70b");
    Random rnd = new Random(37);
    int checked = 0;
    for (int i = 0; i < 200 && checked < 60; i++) {
      ParallelConfig c = layout(rnd, model);
      if (c == null) {
        continue;
      }
      ExportInput in = new ExportInput(model, CLUSTER, c);
      if (Exporter.missing(ExportTarget.MEGATRON, in).isPresent()) {
        continue;
      }
      Map<MegatronArg, List<String>> written = written(MegatronArgs.arguments(in));
      TrainingRun run = TrainingLogs.read(log(written, model, c), Optional.empty());
      RunParallel p = run.parallel();
      String what = c.toString();
      assertThat(p.tensorParallel()).as(what).isEqualTo(c.tensorParallel());
      assertThat(p.pipelineParallel()).as(what).isEqualTo(c.pipelineParallel());
      assertThat(p.dataParallel()).as(what).isEqualTo(c.dataParallel());
      assertThat(p.contextParallel()).as(what).isEqualTo(c.contextParallel());
      assertThat(p.virtualStages()).as(what).isEqualTo(c.virtualStages());
      assertThat(p.microBatch()).as(what).isEqualTo(c.microBatchSize());
      assertThat(p.localBatch() * p.dataParallel()).as(what).isEqualTo(c.globalBatchSize());
      assertThat(p.recompute()).as(what).isEqualTo(c.recompute().label());
      assertThat(p.sequenceParallel()).as(what).isEqualTo(c.sequenceParallel());
      assertThat(p.zeroStage()).as(what).isEqualTo(c.zeroStage());
      RunModel.Dims m = (RunModel.Dims) run.model();
      assertThat(List.of(m.layers(), m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.seq()))
          .as(what).isEqualTo(List.of(model.layers(), model.hidden(), model.heads(),
              model.kvHeads(), model.ffn(), model.seq()));
      assertThat(m.swiglu()).isTrue();
      // The precision the export states is the one read back (the exported model's own; which
      // precision a preset exports is step 1's, not this table's).
      assertThat(m.dtype()).as(what).isEqualTo(switch (model.dtype()) {
        case BF16 -> "bf16";
        case F16 -> "f16";
        default -> "f32";
      });
      checked++;
    }
    // The seed draws enough layouts Megatron-LM runs for the check to mean something.
    assertThat(checked).isGreaterThanOrEqualTo(20);
  }

  /**
   * Megatron-FSDP's ZeRO stages and hybrid sharding come back as exported: ZeRO-3 over all 128
   * replicas, and inside groups of 8 replicated 16 times ({@code
   * --num-distributed-optimizer-instances 16}), which Megatron-FSDP reduces once per step.
   */
  @Test
  void megatronFsdpAndItsHybridShardingAreReadBack() throws IOException {
    ModelSpec model = Presets.get("llama2-70b");
    ParallelConfig fsdp = new ParallelConfig(8, 1, 128, 1, 1, 1024, Recompute.FULL, true, 3);
    for (ParallelConfig c : List.of(fsdp, fsdp.withShardGroup(8))) {
      ExportInput in = new ExportInput(model, CLUSTER, c, io.meshplan.model.Attention.FLASH,
          io.meshplan.model.Overlaps.DEFAULTS.withHsdpStepReduce(c.shardGroup() > 0), false);
      assertThat(Exporter.missing(ExportTarget.MEGATRON, in)).as(c.toString()).isEmpty();
      Map<MegatronArg, List<String>> written = written(MegatronArgs.arguments(in));
      RunParallel p = TrainingLogs.read(log(written, model, c), Optional.empty()).parallel();
      assertThat(p.zeroStage()).isEqualTo(3);
      assertThat(p.shardReplicas()).isEqualTo(c.shardGroup() > 0 ? 16 : 1);
    }
  }

  @Test
  void flagsAndDestinationsFollowArgparse() {
    assertThat(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE.flag())
        .isEqualTo("--tensor-model-parallel-size");
    assertThat(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE.dest())
        .isEqualTo("tensor_model_parallel_size");
    assertThat(MegatronArg.NUM_LAYERS_PER_VIRTUAL_PIPELINE_STAGE.flag())
        .isEqualTo("--num-layers-per-virtual-pipeline-stage");
    assertThat(MegatronArg.ROTARY_BASE.flag()).isEqualTo("--rotary-base");
    // transformer_config.py names these fields apart from their flags.
    assertThat(MegatronArg.NORM_EPSILON.dest()).isEqualTo("layernorm_epsilon");
    assertThat(MegatronArg.FP8_FORMAT.dest()).isEqualTo("fp8");
    assertThat(MegatronArg.DISABLE_BIAS_LINEAR.dest()).isEqualTo("add_bias_linear");
    assertThat(MegatronArg.DISABLE_BIAS_LINEAR.kind()).isEqualTo(MegatronArg.Kind.NEGATED);
    assertThat(MegatronArg.ofFlag("--bf16")).contains(MegatronArg.BF16);
    assertThat(MegatronArg.ofFlag("--world-size")).isEmpty();
    assertThat(MegatronArg.WORLD_SIZE.kind()).isEqualTo(MegatronArg.Kind.COMPUTED);
  }

  /** A random layout of the model on the cluster, or null when the draw does not divide. */
  private static ParallelConfig layout(Random rnd, ModelSpec m) {
    int tp = 1 << rnd.nextInt(4);
    int pp = 1 << rnd.nextInt(4);
    int cp = rnd.nextInt(4) == 0 ? 2 : 1;
    int gpus = CLUSTER.gpuCount();
    if (gpus % (tp * pp * cp) != 0 || m.layers() % pp != 0) {
      return null;
    }
    int dp = gpus / (tp * pp * cp);
    int vpp = pp > 1 && rnd.nextBoolean() ? 2 : 1;
    if (m.layers() % (pp * vpp) != 0) {
      return null;
    }
    int mb = 1 + rnd.nextInt(2);
    int global = dp * mb * (1 + rnd.nextInt(4)) * (pp > 1 ? pp : 1);
    Recompute r = Recompute.values()[rnd.nextInt(3)];
    boolean sp = tp > 1 && rnd.nextBoolean();
    int zero = rnd.nextInt(2);
    try {
      return new ParallelConfig(tp, pp, dp, vpp, mb, global, r, sp, zero, 0, 0, 1, 1, cp,
          false);
    } catch (IllegalArgumentException | io.meshplan.util.InputException e) {
      return null;
    }
  }

  /** The arguments written, by name: each flag with the words after it. */
  private static Map<MegatronArg, List<String>> written(List<List<String>> args) {
    Map<MegatronArg, List<String>> out = new LinkedHashMap<>();
    List<String> values = null;
    for (List<String> group : args) {
      for (String w : group) {
        if (w.startsWith("--")) {
          MegatronArg a = MegatronArg.ofFlag(w).orElseThrow(() -> new AssertionError(
              "the export writes " + w + ", which MegatronArg does not name"));
          values = new ArrayList<>();
          assertThat(out.put(a, values)).as(w + " written twice").isNull();
        } else {
          values.add(w);
        }
      }
    }
    return out;
  }

  /** The log Megatron-LM would print for the arguments, with three iteration lines. */
  private Path log(Map<MegatronArg, List<String>> a, ModelSpec m, ParallelConfig c)
      throws IOException {
    Map<String, String> printed = new LinkedHashMap<>();
    a.forEach((k, v) -> printed.put(k.dest(), switch (k.kind()) {
      case SWITCH -> "True";
      case NEGATED -> "False";
      default -> v.size() == 1 ? v.get(0) : "['" + String.join("', '", v) + "']";
    }));
    int tp = Integer.parseInt(a.get(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE).get(0));
    int pp = Integer.parseInt(a.get(MegatronArg.PIPELINE_MODEL_PARALLEL_SIZE).get(0));
    int cp = a.containsKey(MegatronArg.CONTEXT_PARALLEL_SIZE)
        ? Integer.parseInt(a.get(MegatronArg.CONTEXT_PARALLEL_SIZE).get(0)) : 1;
    int world = CLUSTER.gpuCount();
    printed.put(MegatronArg.WORLD_SIZE.dest(), Integer.toString(world));
    printed.put(MegatronArg.DATA_PARALLEL_SIZE.dest(), Integer.toString(world / (tp * pp * cp)));
    printed.putIfAbsent(MegatronArg.PADDED_VOCAB_SIZE.dest(), Integer.toString(m.vocab()));
    // arguments.py: the virtual size is the stages per rank given, or the layers per pipeline
    // rank over the layers per virtual stage given.
    int layers = Integer.parseInt(a.get(MegatronArg.NUM_LAYERS).get(0));
    Optional.ofNullable(a.get(MegatronArg.NUM_VIRTUAL_STAGES_PER_PIPELINE_RANK))
        .map(v -> v.get(0))
        .or(() -> Optional.ofNullable(a.get(MegatronArg.NUM_LAYERS_PER_VIRTUAL_PIPELINE_STAGE))
            .map(v -> Integer.toString(layers / pp / Integer.parseInt(v.get(0)))))
        .ifPresent(v -> printed.put(MegatronArg.VIRTUAL_PIPELINE_MODEL_PARALLEL_SIZE.dest(), v));
    StringBuilder sb = new StringBuilder("------------------------ arguments ------------------------\n");
    printed.forEach((k, v) -> sb.append("  ").append(k).append(' ')
        .append(".".repeat(Math.max(3, 48 - k.length()))).append(' ').append(v).append('\n'));
    sb.append("-------------------- end of arguments ---------------------\n");
    for (int i = 1; i <= 3; i++) {
      sb.append(" [2024-11-20 14:00:0").append(i).append("] iteration        ").append(5 * i)
          .append("/    1000 | consumed samples: 1 | elapsed time per iteration (ms): 1000.0 |\n");
    }
    Path f = dir.resolve("megatron-" + c.hashCode() + ".log");
    Files.writeString(f, sb.toString());
    return f;
  }
}
