package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.interop.PlanSimulator;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Expert and context parallelism through {@code export}: a Mixtral configuration with expert
 * parallelism and a LLaMA 3 one with context parallelism are simulated, exported to Megatron-LM,
 * read back into {@code simulate} flags (degrees, expert and context sizes, batch, recompute and
 * the model's dimensions, all taken from the file) and must simulate to the same iteration; the
 * same configurations saved as plan files re-simulate to the same iteration and export to the
 * same file. DeepSpeed refuses both (exit 3), torchtitan the Mixtral experts and the p2p ring.
 */
class ExpertContextExportCliTest {
  /** Mixtral 8x7B, 4 stages of 16 GPUs, each stage's 8 experts one per GPU of 8. */
  private static final List<String> EP = List.of("--model", "mixtral-8x7b", "--seq", "4096",
      "--cluster", "8x8:h100-80gb", "--tp", "1", "--pp", "4", "--dp", "16", "--ep", "8",
      "--distributed-optimizer", "--global-batch", "256", "--micro-batch", "1", "--recompute",
      "full");
  /** LLaMA 3 8B at 32k tokens: each sequence over 4 GPUs, 2 x 4 x 2 = 16 GPUs. */
  private static final List<String> CP = List.of("--model", "llama3-8b", "--seq", "32768",
      "--cluster", "2x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "2", "--cp", "4",
      "--sequence-parallel", "--distributed-optimizer", "--global-batch", "16", "--micro-batch",
      "1", "--recompute", "selective");

  @Test
  void megatronExportsResimulateToTheSameIteration() {
    for (List<String> flags : List.of(EP, CP, withCommType(CP))) {
      CliRun sim = CliRun.of(concat(List.of("simulate"), flags));
      assertThat(sim.code()).as(sim.err()).isZero();
      CliRun ex = CliRun.of(concat(List.of("export", "--to", "megatron"), flags));
      assertThat(ex.code()).as(ex.err()).isZero();
      String[] back = fromMegatron(arguments(ex.out()), flags.get(1), flags.get(5));
      CliRun again = CliRun.of(back);
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(line(again.out())).as(String.join(" ", back)).isEqualTo(line(sim.out()));
    }
  }

  @Test
  void theMixtralFileStatesItsExperts() {
    CliRun ex = CliRun.of(concat(List.of("export", "--to", "megatron"), EP));
    Map<String, String> a = arguments(ex.out());
    // Megatron-LM's expert tensor size defaults to the tensor size (arguments.py:587-588): it is
    // written even at 1. Expert-DP = 64 / (ETP 1 x EP 8 x PP 4) = 2.
    assertThat(a).containsEntry("--num-experts", "8").containsEntry("--moe-router-topk", "2")
        .containsEntry("--moe-ffn-hidden-size", "14336")
        .containsEntry("--expert-model-parallel-size", "8")
        .containsEntry("--expert-tensor-parallel-size", "1")
        .containsEntry("--moe-token-dispatcher-type", "alltoall")
        .containsEntry("--moe-router-load-balancing-type", "aux_loss")
        .containsEntry("--moe-aux-loss-coeff", "1e-2").containsKey("--moe-grouped-gemm")
        .doesNotContainKey("--moe-expert-capacity-factor")
        .doesNotContainKey("--moe-pad-expert-input-to-capacity")
        .doesNotContainKey("--context-parallel-size");
    assertThat(ex.out()).contains("# 8 experts: expert 8 x expert tensor 1 per 16 GPUs of a"
        + " pipeline stage.\n");
  }

  @Test
  void theLlamaFileStatesItsContextSplit() {
    CliRun ex = CliRun.of(concat(List.of("export", "--to", "megatron"), CP));
    Map<String, String> a = arguments(ex.out());
    assertThat(a).containsEntry("--context-parallel-size", "4")
        .containsEntry("--cp-comm-type", "p2p").doesNotContainKey("--num-experts");
    // arguments.py:1453-1479 asserts the variable with CP (and TP) on a Hopper GPU.
    assertThat(ex.out()).contains("\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n")
        .contains("tensor 2 x pipeline 1 x context 4 x data 2 = 16 GPUs");
  }

  @Test
  void torchtitanAndDeepSpeedRefuseWithOneLine() {
    for (String to : List.of("torchtitan", "deepspeed")) {
      CliRun r = CliRun.of(concat(List.of("export", "--to", to), EP));
      assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
      assertThat(r.err().strip()).doesNotContain("\n")
          .contains("mixtral-8x7b has a mixture of 8 experts, which meshplan does not write");
    }
    CliRun c = CliRun.of(concat(List.of("export", "--to", "deepspeed"), CP));
    assertThat(c.code()).as(c.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(c.err().strip()).doesNotContain("\n").contains("context parallelism");
    // The nearest folds each sequence's 4 GPUs into data parallelism: DP 2 x 4 = 8.
    assertThat(c.out()).contains(" --tp 2 --pp 1 --dp 8 --micro-batch 1 --global-batch 16 ")
        .doesNotContain("--cp");
    // Ulysses' all-to-alls are DeepSpeed's own (--ds-sequence-parallel-size), kept in the
    // nearest without Megatron-LM's sequence parallelism, which Megatron-DeepSpeed refuses
    // beside them.
    List<String> ulysses = List.of(concat(CP, List.of("--cp-comm-type", "a2a")));
    CliRun u = CliRun.of(concat(List.of("export", "--to", "deepspeed"), ulysses));
    assertThat(u.code()).as(u.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(u.err().strip()).doesNotContain("\n").contains("beside Megatron-LM's");
    assertThat(u.out()).contains(" --cp 4 --cp-comm-type a2a ")
        .doesNotContain("--sequence-parallel");
  }

  /**
   * torchtitan has the all-gather form only: the ring is refused in one line, and its nearest,
   * the same split all-gathered with FSDP (torchtitan shards over dp x cp whenever cp is on),
   * runs as printed and writes {@code context_parallel_degree = 4}.
   */
  @Test
  void torchtitanRefusesTheRingAndWritesItsAllGatherNearest() {
    CliRun c = CliRun.of(concat(List.of("export", "--to", "torchtitan"), CP));
    assertThat(c.code()).as(c.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(c.err().lines()).hasSize(1);
    assertThat(c.err()).startsWith("meshplan: infeasible: torchtitan cannot express this"
        + " configuration: torchtitan all-gathers a sequence's keys and values over its"
        + " context-parallel ranks");
    String command = c.out().lines().filter(l -> l.startsWith("  meshplan export "))
        .findFirst().orElseThrow().strip();
    assertThat(command).contains(" --tp 2 --pp 1 --dp 2 --cp 4 --cp-comm-type all_gather ")
        .contains(" --zero-stage 3 ");
    CliRun nearest = CliRun.of(command.substring("meshplan ".length()).split(" "));
    assertThat(nearest.code()).as(nearest.err()).isZero();
    assertThat(nearest.out()).contains("    config.parallelism.context_parallel_degree = 4\n",
        "# 16 GPUs = tensor 2 x pipeline 1 x context 4 x data 2\n",
        "# data parallelism: FSDP over dp 2 x cp 4 = 8 ranks (ZeRO-3)\n");
  }

  /** GPipe's nearest (1F1B) keeps the experts' layout and capacity, and runs as printed. */
  @Test
  void theNearestCommandOfAnMoeConfigurationKeepsItsExperts() {
    List<String> gpipe = new ArrayList<>(EP);
    gpipe.addAll(List.of("--schedule", "gpipe", "--moe-capacity-factor", "1.25"));
    CliRun r = CliRun.of(concat(List.of("export", "--to", "megatron"), gpipe));
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    String command = r.out().lines().filter(l -> l.startsWith("  meshplan export "))
        .findFirst().orElseThrow().strip();
    assertThat(command).contains(" --moe-capacity-factor 1.25 --ep 8 --etp 1 ");
    CliRun nearest = CliRun.of(command.substring("meshplan ".length()).split(" "));
    assertThat(nearest.code()).as(nearest.err()).isZero();
    assertThat(arguments(nearest.out())).containsEntry("--expert-model-parallel-size", "8")
        .containsEntry("--moe-expert-capacity-factor", "1.25");
  }

  @Test
  void badExpertAndContextSizesAreRefusedAsSimulateRefusesThem() {
    List<String> three = new ArrayList<>(EP);
    three.set(three.indexOf("--ep") + 1, "3");
    CliRun.of(concat(List.of("export", "--to", "megatron"), three)).refusedInOneLine(2,
        "meshplan: error: --ep 3 does not divide the model's 8 experts");
    CliRun.of("export", "--to", "megatron", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--ep", "2", "--global-batch", "8",
        "--micro-batch", "1")
        .refusedInOneLine(2, "meshplan: error: expert parallelism needs a mixture-of-experts"
            + " model; this model is dense");
    List<String> odd = new ArrayList<>(CP);
    odd.set(odd.indexOf("--seq") + 1, "32764");
    // 32764 = 8 x 4095.5: not 2 x CP = 8 equal chunks.
    CliRun.of(concat(List.of("export", "--to", "megatron"), odd)).refusedInOneLine(2,
        "meshplan: error: --cp 4 needs the sequence of 32764 tokens to split"
            + " into 2 x 4 = 8 equal chunks");
  }

  /**
   * Each configuration saved as a plan file, as {@code plan --out} writes plans, re-simulates to
   * the flags' iteration and exports to the flags' file, byte for byte.
   */
  @Test
  void savedPlansKeepTheirExpertsAndContextSplit(@TempDir Path dir) throws Exception {
    Map<List<String>, ParallelConfig> configs = new LinkedHashMap<>();
    configs.put(EP, new ParallelConfig(1, 4, 16, 1, 1, 256, Recompute.FULL, false, 1, 0, 0, 8,
        1));
    configs.put(CP, new ParallelConfig(2, 1, 2, 1, 1, 16, Recompute.SELECTIVE, true, 1, 0, 0, 1,
        1, 4, false));
    for (Map.Entry<List<String>, ParallelConfig> e : configs.entrySet()) {
      List<String> flags = e.getKey();
      ModelSpec p = Presets.get(flags.get(1));
      ModelSpec m = new ModelSpec(p.name(), p.family(), p.layers(), p.hidden(), p.heads(),
          p.kvHeads(), p.ffn(), p.vocab(), Integer.parseInt(flags.get(3)), p.batch(), p.dtype(),
          p.arch());
      Path file = savedPlan(m, flags.get(5), e.getValue(), dir.resolve(flags.get(1) + ".json"));
      CliRun sim = CliRun.of(concat(List.of("simulate"), flags));
      CliRun saved = CliRun.of("simulate", "--plan", file.toString());
      assertThat(saved.code()).as(saved.err()).isZero();
      assertThat(line(saved.out())).isEqualTo(line(sim.out()));
      CliRun fromPlan = CliRun.of("export", "--to", "megatron", "--plan", file.toString());
      assertThat(fromPlan.code()).as(fromPlan.err()).isZero();
      assertThat(fromPlan.out()).isEqualTo(CliRun.of(concat(List.of("export", "--to",
          "megatron"), flags)).out());
    }
  }

  /** The CP configuration with its keys and values all-gathered instead of passed round. */
  private static List<String> withCommType(List<String> flags) {
    List<String> out = new ArrayList<>(flags);
    out.addAll(List.of("--cp-comm-type", "all_gather"));
    return out;
  }

  /** The words of {@code MEGATRON_ARGS=( ... )}, each option with its value ("" for a switch). */
  private static Map<String, String> arguments(String file) {
    return ExportRoundTripCliTest.arguments(file, "MEGATRON_ARGS=(");
  }


  /** simulate's flags from Megatron-LM's arguments: DP = world / (TP x PP x CP). */
  private static String[] fromMegatron(Map<String, String> a, String preset, String cluster) {
    int gpus = Arrays.stream(cluster.split(":")[0].split("x")).mapToInt(Integer::parseInt)
        .reduce(1, (x, y) -> x * y);
    int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
    int pp = Integer.parseInt(a.get("--pipeline-model-parallel-size"));
    int cp = Integer.parseInt(a.getOrDefault("--context-parallel-size", "1"));
    List<String> f = new ArrayList<>(List.of("simulate", "--model", preset,
        "--layers", a.get("--num-layers"), "--hidden", a.get("--hidden-size"),
        "--heads", a.get("--num-attention-heads"), "--kv-heads", a.get("--num-query-groups"),
        "--ffn", a.getOrDefault("--moe-ffn-hidden-size", a.get("--ffn-hidden-size")),
        "--seq", a.get("--seq-length"), "--cluster", cluster,
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp),
        "--dp", String.valueOf(gpus / (tp * pp * cp)),
        "--micro-batch", a.get("--micro-batch-size"),
        "--global-batch", a.get("--global-batch-size"),
        "--recompute", a.getOrDefault("--recompute-granularity", "none")));
    if (a.containsKey("--num-experts")) {
      f.addAll(List.of("--ep", a.get("--expert-model-parallel-size"),
          "--etp", a.get("--expert-tensor-parallel-size")));
    }
    if (cp > 1) {
      f.addAll(List.of("--cp", String.valueOf(cp), "--cp-comm-type", a.get("--cp-comm-type")));
    }
    if (a.containsKey("--sequence-parallel")) {
      f.add("--sequence-parallel");
    }
    if (a.containsKey("--use-distributed-optimizer")) {
      f.add("--distributed-optimizer");
    }
    return f.toArray(String[]::new);
  }

  /**
   * Writes the plan of a configuration, as the simulation of its flags makes it, to a file.
   *
   * @param m the model
   * @param cluster the cluster flag
   * @param c the configuration
   * @param file where to write it
   * @return the file
   */
  static Path savedPlan(ModelSpec m, String cluster, ParallelConfig c, Path file)
      throws IOException {
    PricedJob setup = JobFlags.priced(m, false, new ClusterOptions(),
        Optional.of(Attention.FLASH), cluster, c.globalBatchSize(), 0,
        PlannerOptions.defaults());
    PipelinePlan plan = new PlanSimulator(setup.layers()).simulate(setup.request(), c)
        .orElseThrow().plan();
    Files.writeString(file, PlanJson.write(plan));
    return file;
  }

  private static String[] concat(List<String> a, List<String> b) {
    return ExportRoundTripCliTest.concat(a, b);
  }

  private static String line(String text) {
    return ExportRoundTripCliTest.line(text);
  }
}
