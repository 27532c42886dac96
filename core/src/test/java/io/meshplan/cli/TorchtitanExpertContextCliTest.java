package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.export.TorchtitanPythonFile;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Expert and context parallelism through torchtitan's main-branch export (issue #24): LLaMA 3
 * with each sequence over several GPUs and Qwen3-30B-A3B with its experts spread, simulated,
 * exported as a torchtitan config, read back from the file into {@code simulate} flags (the
 * degrees, {@code context_parallel_degree}, {@code expert_parallel_degree}, the batch in tokens,
 * the model parts, FSDP and activation checkpointing, with the model its flavor names) and
 * re-simulated to the same iteration. The same configurations saved as plan files re-simulate to
 * the flags' iteration and export to the flags' file, byte for byte.
 */
class TorchtitanExpertContextCliTest {
  /**
   * meshplan's presets of torchtitan's flavors (llama3, qwen3 and deepseek_v3 on main at b5bcd76).
   */
  private static final Map<String, String> PRESET = Map.of("8B", "llama3-8b", "70B",
      "llama3-70b", "405B", "llama3.1-405b", "30B-A3B", "qwen3-30b-a3b", "235B-A22B",
      "qwen3-235b-a22b", "671B", "deepseek-v3");

  /** LLaMA 3 8B at 16k tokens, each sequence over 2 GPUs, keys and values all-gathered. */
  private static final List<String> CP = List.of("--model", "llama3-8b", "--seq", "16384",
      "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "2", "--cp", "2",
      "--cp-comm-type", "all_gather", "--sequence-parallel", "--zero-stage", "3",
      "--global-batch", "8", "--micro-batch", "1", "--recompute", "full");

  /** The same model on two pipeline stages, each sequence over 2 GPUs, FSDP under the pipeline. */
  private static final List<String> CP_PP = List.of("--model", "llama3-8b", "--seq", "16384",
      "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "2", "--dp", "2", "--cp", "2",
      "--cp-comm-type", "all_gather", "--distributed-optimizer", "--global-batch", "8",
      "--micro-batch", "1", "--recompute", "full");

  /** Qwen3-30B-A3B on 16 GPUs, FSDP over all, the 128 experts 8 ways. */
  private static final List<String> EP = List.of("--model", "qwen3-30b-a3b", "--seq", "4096",
      "--cluster", "2x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "16", "--ep", "8",
      "--etp", "1", "--zero-stage", "3", "--global-batch", "64", "--micro-batch", "1",
      "--recompute", "full");

  /** Qwen3-30B-A3B with tensor, pipeline and expert parallelism: EP 4 within tp 2 x dp 4. */
  private static final List<String> EP_TP_PP = List.of("--model", "qwen3-30b-a3b", "--seq",
      "4096", "--cluster", "2x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "4", "--ep", "4",
      "--etp", "1", "--sequence-parallel", "--distributed-optimizer", "--global-batch", "64",
      "--micro-batch", "1", "--recompute", "full");

  /** Qwen3-30B-A3B with both: cp 2 x dp 8, EP 16 over dp_shard x cp x tp = 16. */
  private static final List<String> EP_CP = List.of("--model", "qwen3-30b-a3b", "--seq", "4096",
      "--cluster", "2x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--cp", "2",
      "--cp-comm-type", "all_gather", "--ep", "16", "--etp", "1", "--zero-stage", "3",
      "--global-batch", "64", "--micro-batch", "1", "--recompute", "full");

  /**
   * The same 16 GPUs under torchtitan's per-op checkpointing, the default of its mixture-of-experts
   * configs (deepseek_v3_16b.toml, qwen3_moe_debug.toml: selective, "op").
   */
  private static final List<String> EP_OP = List.of("--model", "qwen3-30b-a3b", "--seq", "4096",
      "--cluster", "2x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "16", "--ep", "8",
      "--etp", "1", "--zero-stage", "3", "--global-batch", "64", "--micro-batch", "1",
      "--recompute", "op");

  @Test
  void exportsResimulateFromTheFileToTheSameIteration() {
    for (List<String> flags : List.of(CP, CP_PP, EP, EP_TP_PP, EP_CP, EP_OP)) {
      CliRun sim = CliRun.of(concat(List.of("simulate"), flags));
      assertThat(sim.code()).as(sim.err()).isZero();
      CliRun ex = CliRun.of(concat(List.of("export", "--to", "torchtitan"), flags));
      assertThat(ex.code()).as(ex.err()).isZero();
      String[] back = simulateArgs(TorchtitanPythonFile.parse(ex.out()), flags.get(5));
      CliRun again = CliRun.of(back);
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(line(again.out())).as(String.join(" ", back)).isEqualTo(line(sim.out()));
    }
  }

  @Test
  void theFilesStateThePlansDegrees() {
    TorchtitanPythonFile cp = exported(CP);
    TorchtitanPythonFile ep = exported(EP_CP);
    assertThat(cp.recipe()).isEqualTo("llama3_8b");
    assertThat(cp.integer("parallelism.context_parallel_degree")).isEqualTo(2);
    assertThat(cp.fields()).doesNotContainKey("parallelism.expert_parallel_degree");
    assertThat(ep.recipe()).isEqualTo("qwen3_30b_a3b");
    assertThat(ep.flavor()).isEqualTo("30B-A3B");
    assertThat(ep.integer("parallelism.context_parallel_degree")).isEqualTo(2);
    assertThat(ep.integer("parallelism.expert_parallel_degree")).isEqualTo(16);
    // parallel_dims.py:182 and 187-192: 1 x 8 x 2 x 1 x 1 = 16 GPUs, and EP 16 divides
    // dp_shard 8 x cp 2 x tp 1 = 16.
    assertThat(ep.integer("parallelism.data_parallel_shard_degree")).isEqualTo(8);
  }

  /**
   * Each configuration saved as a plan file, as {@code plan --out} writes plans, re-simulates to
   * the flags' iteration and exports to the flags' torchtitan file, byte for byte.
   */
  @Test
  void savedPlansExportTheirExpertsAndContextSplit(@TempDir Path dir) throws Exception {
    Map<List<String>, ParallelConfig> configs = Map.of(
        CP, new ParallelConfig(2, 1, 2, 1, 1, 8, Recompute.FULL, true, 3, 0, 0, 1, 1, 2, true),
        EP_TP_PP, new ParallelConfig(2, 2, 4, 1, 1, 64, Recompute.FULL, true, 1, 0, 0, 4, 1));
    for (Map.Entry<List<String>, ParallelConfig> e : configs.entrySet()) {
      List<String> flags = e.getKey();
      ModelSpec m = Presets.get(flags.get(1)).withSequence(Integer.parseInt(flags.get(3)));
      Path file = ExpertContextExportCliTest.savedPlan(m, flags.get(5), e.getValue(),
          dir.resolve(flags.get(1) + ".json"));
      CliRun saved = CliRun.of("simulate", "--plan", file.toString());
      assertThat(saved.code()).as(saved.err()).isZero();
      assertThat(line(saved.out())).isEqualTo(line(CliRun.of(concat(List.of("simulate"),
          flags)).out()));
      CliRun fromPlan = CliRun.of("export", "--to", "torchtitan", "--plan", file.toString());
      assertThat(fromPlan.code()).as(fromPlan.err()).isZero();
      assertThat(fromPlan.out()).isEqualTo(CliRun.of(concat(List.of("export", "--to",
          "torchtitan"), flags)).out());
      CliRun again = CliRun.of(simulateArgs(TorchtitanPythonFile.parse(fromPlan.out()),
          flags.get(5)));
      assertThat(line(again.out())).isEqualTo(line(saved.out()));
    }
  }

  private static TorchtitanPythonFile exported(List<String> flags) {
    CliRun ex = CliRun.of(concat(List.of("export", "--to", "torchtitan"), flags));
    assertThat(ex.code()).as(ex.err()).isZero();
    return TorchtitanPythonFile.parse(ex.out());
  }

  /**
   * simulate's flags from a torchtitan main config: the batch from its token counts over
   * {@code max_context_length}, DP = dp_replicate x dp_shard, FSDP (dp_shard x cp above 1) as
   * ZeRO-1 under a pipeline and ZeRO-3 without one, CP in its all-gather form, and the expert
   * tensor size torchtitan has (1 with EP, TP without it).
   */
  static String[] simulateArgs(TorchtitanPythonFile f, String cluster) {
    long seq = f.integer("training.max_context_length");
    long tp = f.integer("parallelism.tensor_parallel_degree");
    long pp = f.integer("parallelism.pipeline_parallel_degree");
    long shard = f.integer("parallelism.data_parallel_shard_degree");
    long cp = f.integer("parallelism.context_parallel_degree");
    List<String> a = new ArrayList<>(List.of("simulate", "--model", PRESET.get(f.flavor()),
        "--seq", String.valueOf(seq), "--cluster", cluster,
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp),
        "--dp", String.valueOf(shard * f.integer("parallelism.data_parallel_replicate_degree")),
        "--micro-batch", String.valueOf(f.integer(
            "training.num_tokens_per_microbatch_per_dp_rank") / seq),
        "--global-batch", String.valueOf(f.integer("training.num_tokens_per_train_step") / seq),
        "--recompute", switch (f.text("activation_checkpoint")) {
          case "FullAC.Config()" -> "full";
          case "SelectiveAC.Config()" -> "op";
          default -> "none";
        }));
    if (cp > 1) {
      a.addAll(List.of("--cp", String.valueOf(cp), "--cp-comm-type", "all_gather"));
    }
    if (f.fields().containsKey("parallelism.expert_parallel_degree")) {
      long ep = f.integer("parallelism.expert_parallel_degree");
      a.addAll(List.of("--ep", String.valueOf(ep), "--etp", String.valueOf(ep > 1 ? 1 : tp)));
    }
    if (pp > 1) {
      int parts = f.parts().size();
      if (parts > pp) {
        a.addAll(List.of("--vpp", String.valueOf(parts / pp)));
      }
    }
    if (f.text("parallelism.enable_sequence_parallel").equals("True")) {
      a.add("--sequence-parallel");
    }
    if (shard * cp > 1) {
      a.addAll(pp > 1 ? List.of("--distributed-optimizer") : List.of("--zero-stage", "3"));
    }
    return a.toArray(String[]::new);
  }

  private static String[] concat(List<String> a, List<String> b) {
    return ExportRoundTripCliTest.concat(a, b);
  }

  private static String line(String text) {
    return ExportRoundTripCliTest.line(text);
  }
}
