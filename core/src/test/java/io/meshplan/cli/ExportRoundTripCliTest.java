package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.export.TorchtitanPythonFile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Round trips through every framework: each configuration is simulated, exported to Megatron-LM,
 * torchtitan (main's Python config and v0.2.2's TOML) and DeepSpeed, and each exported file is
 * read back into {@code simulate} flags (degrees, stages, microbatch, ZeRO stage, recompute,
 * precision and the model's dimensions, all taken from the file) that must simulate to the same
 * iteration. A framework that cannot state a configuration must refuse it (exit 3); which refuse
 * is pinned per case.
 */
class ExportRoundTripCliTest {
  private static final Map<String, String> PRESET = Map.of("8B", "llama3.1-8b", "70B",
      "llama3.1-70b", "405B", "llama3.1-405b");
  private static final String[] TARGETS = {"megatron", "torchtitan", "torchtitan@0.2.2",
      "deepspeed"};

  /** A configuration: cluster, flags after the model, and the targets that must refuse it. */
  private record Case(String cluster, String[] flags, List<String> refused) {}

  @Test
  void everyExportResimulatesToTheSameIteration() throws Exception {
    List<Case> cases = List.of(
        // Even stages, 1F1B.
        new Case("1x8:h100-80gb", words("--tp 2 --pp 4 --dp 1 --micro-batch 1 --global-batch 8"
            + " --sequence-parallel --recompute none"), List.of()),
        // Interleaved (vpp 2) with the distributed optimizer (ZeRO-1); DeepSpeed's pipeline
        // engine has no interleaved schedule.
        new Case("1x8:h100-80gb", words("--tp 2 --pp 2 --dp 2 --vpp 2 --micro-batch 1"
            + " --global-batch 16 --sequence-parallel --distributed-optimizer --recompute"
            + " selective"), List.of("deepspeed")),
        // Uneven first and last stages: DeepSpeed's PipelineModule has no per-stage count.
        new Case("1x8:h100-80gb", words("--tp 2 --pp 4 --dp 1 --micro-batch 1 --global-batch 8"
            + " --sequence-parallel --recompute none --first-stage-layers 7"
            + " --last-stage-layers 7"), List.of("deepspeed")),
        // ZeRO-3 without a pipeline (Megatron-FSDP, torchtitan's FSDP, DeepSpeed stage 3).
        new Case("1x8:h100-80gb", words("--tp 2 --pp 1 --dp 4 --micro-batch 1 --global-batch 8"
            + " --sequence-parallel --zero-stage 3 --recompute full"), List.of()),
        // Data parallelism only: DDP (ZeRO-0). Each GPU keeps all 8B weights, gradients and Adam
        // state (about 147 GiB), so it runs on B200s (192 GB), not on 80 GB GPUs.
        new Case("1x8:b200", words("--tp 1 --pp 1 --dp 8 --micro-batch 1 --global-batch 16"
            + " --recompute selective"), List.of()),
        // fp16 on V100s: torchtitan has bf16 or f32 only, and a V100 has no bf16.
        new Case("2x4:v100-32gb", words("--dtype f16 --tp 4 --pp 2 --dp 1 --micro-batch 1"
            + " --global-batch 8 --recompute full"), List.of("torchtitan", "torchtitan@0.2.2")));
    for (Case c : cases) {
      List<String> common = new ArrayList<>(List.of("--model", "llama3.1-8b", "--seq", "2048",
          "--cluster", c.cluster()));
      common.addAll(List.of(c.flags()));
      CliRun sim = CliRun.of(concat(List.of("simulate"), common));
      assertThat(sim.code()).as(sim.err()).isZero();
      String iteration = line(sim.out());
      TreeSet<String> refused = new TreeSet<>();
      for (String target : TARGETS) {
        List<String> ex = new ArrayList<>(List.of("export", "--to", target.split("@")[0]));
        if (target.contains("@")) {
          ex.addAll(List.of("--framework-version", target.split("@")[1]));
        }
        // torchtitan's llama3 flavors scale RoPE as Llama 3.1, which Megatron-DeepSpeed cannot:
        // each target exports the 8B model it can build (both price alike).
        List<String> own = new ArrayList<>(common);
        own.set(1, target.startsWith("torchtitan") ? "llama3.1-8b" : "llama3-8b");
        CliRun r = CliRun.of(concat(ex, own));
        if (r.code() == ExitCodes.INFEASIBLE) {
          refused.add(target);
          continue;
        }
        assertThat(r.code()).as(target + ": " + r.err()).isZero();
        CliRun again = CliRun.of(back(target, r.out(), c.cluster()));
        assertThat(again.code()).as(target + ": " + again.err()).isZero();
        assertThat(line(again.out())).as(target + " " + String.join(" ", c.flags()))
            .isEqualTo(iteration);
      }
      assertThat(refused).as(String.join(" ", c.flags())).containsExactlyElementsOf(
          new TreeSet<>(c.refused()));
    }
  }

  /** simulate's flags from one exported file. */
  private static String[] back(String target, String file, String cluster) throws Exception {
    return switch (target) {
      case "megatron" -> fromMegatron(arguments(file, "MEGATRON_ARGS=("), cluster);
      case "deepspeed" -> fromMegatron(arguments(file, "DS_ARGS=("), cluster);
      case "torchtitan" -> fromTorchtitan(TorchtitanPythonFile.parse(file), cluster);
      default -> TorchtitanResimulateCliTest.simulateArgs(file, cluster);
    };
  }

  /** The words of a bash array, one or more a line, between its opening and its {@code )}. */
  static Map<String, String> arguments(String file, String open) {
    Map<String, String> a = new LinkedHashMap<>();
    int at = file.indexOf(open + "\n");
    assertThat(at).as(open).isNotNegative();
    String body = file.substring(at + open.length() + 1, file.indexOf("\n)\n", at));
    String last = null;
    for (String w : body.strip().split("\\s+")) {
      if (w.startsWith("--")) {
        a.put(w, "");
        last = w;
      } else if (last != null) {
        a.put(last, w);
      }
    }
    return a;
  }

  /** simulate's flags from Megatron-LM's (or Megatron-DeepSpeed's) arguments. */
  private static String[] fromMegatron(Map<String, String> a, String cluster) {
    int gpus = Arrays.stream(cluster.split(":")[0].split("x")).mapToInt(Integer::parseInt)
        .reduce(1, (x, y) -> x * y);
    int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
    int pp = Integer.parseInt(a.get("--pipeline-model-parallel-size"));
    int layers = Integer.parseInt(a.get("--num-layers"));
    List<String> f = new ArrayList<>(List.of("simulate", "--model", "llama3.1-8b", "--layers",
        String.valueOf(layers), "--seq", a.get("--seq-length"), "--cluster", cluster,
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp",
        String.valueOf(gpus / (tp * pp)), "--micro-batch", a.get("--micro-batch-size"),
        "--global-batch", a.get("--global-batch-size"), "--dtype",
        a.containsKey("--fp16") ? "f16" : a.containsKey("--fp8-format") ? "fp8"
            : a.containsKey("--bf16") ? "bf16" : "f32",
        "--recompute", a.getOrDefault("--recompute-granularity", "none")));
    if (a.containsKey("--num-layers-per-virtual-pipeline-stage")) {
      int perChunk = Integer.parseInt(a.get("--num-layers-per-virtual-pipeline-stage"));
      f.addAll(List.of("--vpp", String.valueOf(layers / (pp * perChunk))));
    }
    if (a.containsKey("--decoder-first-pipeline-num-layers")) {
      f.addAll(List.of("--first-stage-layers", a.get("--decoder-first-pipeline-num-layers"),
          "--last-stage-layers", a.get("--decoder-last-pipeline-num-layers")));
    }
    if (a.containsKey("--sequence-parallel")) {
      f.add("--sequence-parallel");
    }
    if (a.containsKey("--overlap-grad-reduce")) {
      f.add("--overlap-grad-reduce");
    }
    String strategy = a.getOrDefault("--data-parallel-sharding-strategy", "");
    String zero = a.containsKey("--zero-stage") ? a.get("--zero-stage")
        : strategy.equals("optim_grads_params") ? "3" : strategy.equals("optim_grads") ? "2"
        : a.containsKey("--use-distributed-optimizer") ? "1" : "0";
    f.addAll(List.of("--zero-stage", zero));
    return f.toArray(String[]::new);
  }

  /** simulate's flags from torchtitan main's config. */
  private static String[] fromTorchtitan(TorchtitanPythonFile t, String cluster) {
    long seq = t.integer("training.max_context_length");
    int tp = (int) t.integer("parallelism.tensor_parallel_degree");
    int pp = (int) t.integer("parallelism.pipeline_parallel_degree");
    long shard = t.integer("parallelism.data_parallel_shard_degree");
    String ac = t.text("activation_checkpoint");
    List<String> f = new ArrayList<>(List.of("simulate", "--model", PRESET.get(t.flavor()),
        "--cluster", cluster, "--seq", String.valueOf(seq), "--global-batch",
        String.valueOf(t.integer("training.num_tokens_per_train_step") / seq), "--micro-batch",
        String.valueOf(t.integer("training.num_tokens_per_microbatch_per_dp_rank") / seq),
        "--dtype", t.float8() ? "fp8" : t.text("training.mixed_precision_param")
            .equals("bfloat16") ? "bf16" : "f32",
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp",
        String.valueOf(shard * t.integer("parallelism.data_parallel_replicate_degree")),
        "--recompute", ac.startsWith("FullAC") ? "full" : ac.startsWith("SelectiveAC")
            ? "op" : "none"));
    if (pp > 1) {
      int parts = t.parts().size();
      if (parts > pp) {
        f.addAll(List.of("--vpp", String.valueOf(parts / pp)));
      }
      if (t.layersOf(0) != t.layersOf(1) || t.layersOf(parts - 1) != t.layersOf(1)) {
        f.addAll(List.of("--first-stage-layers", String.valueOf(t.layersOf(0)),
            "--last-stage-layers", String.valueOf(t.layersOf(parts - 1))));
      }
      if (t.text("parallelism.pipeline_parallel_schedule").equals("GPipe")) {
        f.addAll(List.of("--schedule", "gpipe"));
      }
    }
    if (tp > 1 && t.text("parallelism.enable_sequence_parallel").equals("True")) {
      f.add("--sequence-parallel");
    }
    if (shard > 1) {
      // FSDP: ZeRO-1 under a pipeline schedule, ZeRO-3 without one (TorchtitanToml).
      f.addAll(List.of("--zero-stage", pp > 1 ? "1" : "3"));
    }
    return f.toArray(String[]::new);
  }

  private static String[] words(String s) {
    return s.split(" ");
  }

  static String[] concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all.toArray(String[]::new);
  }

  static String line(String text) {
    return text.lines().filter(l -> l.startsWith("iteration ")).findFirst().orElseThrow();
  }
}
