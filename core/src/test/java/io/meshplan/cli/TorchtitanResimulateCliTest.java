package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round trips through torchtitan: what {@code export --to torchtitan} writes, read back as
 * {@code simulate} flags (the TOML's degrees, stages, microbatch, ZeRO stage, recompute and
 * precision, with the model its flavor names), re-simulates to the plan's own iteration time.
 * The TOML is read as torchtitan v0.2.2 reads it: {@code pipeline_parallel_layers_per_stage} with
 * both less-layers 0 gives {@code n_layers / layers_per_stage} stages ({@code
 * torchtitan/distributed/pipeline_parallel.py:75}), so {@code n_layers / (pp x layers per stage)}
 * of them per rank.
 */
class TorchtitanResimulateCliTest {
  /** torchtitan v0.2.2's llama3 flavors and meshplan's presets of the same model (Llama 3.1). */
  private static final Map<String, String> PRESET = Map.of("8B", "llama3.1-8b", "70B",
      "llama3.1-70b", "405B", "llama3.1-405b");
  private static final Map<String, Integer> LAYERS = Map.of("8B", 32, "70B", 80, "405B", 126);

  @TempDir Path dir;

  /**
   * A --megatron-grid plan (interleaved, FSDP under the pipeline: the grid's best in 40 GiB a GPU,
   * where without the bound it is tensor parallelism over ZeRO-1, which torchtitan cannot express)
   * exports and re-simulates.
   */
  @Test
  void theGridPlansTomlResimulatesToThePlansIteration() throws Exception {
    Path plan = dir.resolve("grid.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "2x8:h100-80gb",
        "--global-batch", "64", "--megatron-grid", "--prices", "kernel", "--memory", "40GiB",
        "--out",
        plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    CliRun ex = CliRun.of("export", "--to", "torchtitan", "--framework-version", "0.2.2",
        "--plan", plan.toString());
    assertThat(ex.code()).as(ex.err()).isZero();
    List<String> args = new java.util.ArrayList<>(List.of(simulateArgs(ex.out(),
        "2x8:h100-80gb")));
    args.addAll(List.of("--prices", "kernel"));
    CliRun again = CliRun.of(args.toArray(String[]::new));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(line(again.out(), "iteration ")).isEqualTo(line(p.out(), "iteration "));
  }

  /**
   * Flags without a pipeline (FSDP, ZeRO-3, with and without tensor parallelism), with pp 4 and with uneven first and last
   * stages: simulated, exported, re-simulated.
   */
  @Test
  void flagConfigurationsResimulateThroughTheirToml() throws Exception {
    String[][] cases = {
        {"--tp", "2", "--pp", "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "8",
            "--sequence-parallel", "--zero-stage", "3", "--recompute", "full"},
        // Plain DDP of an 8B model needs 147 GiB per GPU (18 bytes per parameter of model
        // state), more than an H100 holds, and torchtitan takes DDP only without other
        // parallelism: the pure data-parallel case shards with FSDP instead.
        {"--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "16",
            "--zero-stage", "3", "--recompute", "selective"},
        {"--tp", "2", "--pp", "4", "--dp", "1", "--micro-batch", "1", "--global-batch", "8",
            "--sequence-parallel", "--recompute", "none"},
        {"--tp", "2", "--pp", "4", "--dp", "1", "--micro-batch", "1", "--global-batch", "8",
            "--sequence-parallel", "--recompute", "none", "--first-stage-layers", "7",
            "--last-stage-layers", "7"},
        // torchtitan's per-op checkpointing: mode "selective", selective_ac_option "op".
        {"--tp", "2", "--pp", "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "8",
            "--sequence-parallel", "--zero-stage", "3", "--recompute", "op"},
        // The fused loss: torchtitan compiles the loss alone ([compile] components = ["loss"]).
        {"--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "16",
            "--zero-stage", "3", "--recompute", "selective", "--fused-cross-entropy"}};
    for (String[] c : cases) {
      String[] common = {"--model", "llama3.1-8b", "--seq", "2048", "--cluster", "1x8:h100-80gb"};
      CliRun sim = CliRun.of(concat(new String[] {"simulate"}, common, c));
      assertThat(sim.code()).as(sim.err()).isZero();
      CliRun ex = CliRun.of(concat(new String[] {"export", "--to", "torchtitan",
          "--framework-version", "0.2.2"}, common, c));
      assertThat(ex.code()).as(ex.err()).isZero();
      CliRun again = simulate(ex.out(), "1x8:h100-80gb");
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(line(again.out(), "iteration ")).as(String.join(" ", c))
          .isEqualTo(line(sim.out(), "iteration "));
    }
  }

  /**
   * LLaMA 3 8B at 16k tokens with each sequence over 2 GPUs (all-gathered keys and values), with
   * and without a pipeline: simulated, exported as v0.2.2 TOML with {@code
   * context_parallel_degree}, re-simulated from the file to the same iteration.
   */
  @Test
  void contextParallelTomlsResimulateToTheSameIteration() throws Exception {
    String[][] cases = {
        {"--tp", "2", "--pp", "1", "--dp", "2", "--cp", "2", "--zero-stage", "3",
            "--sequence-parallel"},
        {"--tp", "1", "--pp", "2", "--dp", "2", "--cp", "2", "--distributed-optimizer"}};
    for (String[] c : cases) {
      String[] common = {"--model", "llama3.1-8b", "--seq", "16384", "--cluster", "1x8:h100-80gb",
          "--micro-batch", "1", "--global-batch", "8", "--recompute", "full",
          "--cp-comm-type", "all_gather"};
      CliRun sim = CliRun.of(concat(new String[] {"simulate"}, common, c));
      assertThat(sim.code()).as(sim.err()).isZero();
      CliRun ex = CliRun.of(concat(new String[] {"export", "--to", "torchtitan",
          "--framework-version", "0.2.2"}, common, c));
      assertThat(ex.code()).as(ex.err()).isZero();
      assertThat(new TomlMapper().readTree(ex.out()).at("/parallelism/context_parallel_degree")
          .asInt()).isEqualTo(Integer.parseInt(c[7]));
      CliRun again = simulate(ex.out(), "1x8:h100-80gb");
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(line(again.out(), "iteration ")).as(String.join(" ", c))
          .isEqualTo(line(sim.out(), "iteration "));
    }
  }

  /**
   * meshplan's recomputation of a v0.2.2 [activation_checkpoint] table: mode "selective" with
   * selective_ac_option "op" is op; "full" and "none" are themselves.
   */
  private static String recompute(JsonNode ac) {
    String mode = ac.path("mode").asText();
    if (mode.equals("selective")) {
      assertThat(ac.path("selective_ac_option").asText()).isEqualTo("op");
      return "op";
    }
    return mode;
  }

  /** simulate with the flags a torchtitan TOML states. */
  private static CliRun simulate(String toml, String cluster) throws Exception {
    return CliRun.of(simulateArgs(toml, cluster));
  }

  /** The simulate command line of the flags a torchtitan TOML states. */
  static String[] simulateArgs(String toml, String cluster) throws Exception {
    JsonNode t = new TomlMapper().readTree(toml);
    JsonNode p = t.path("parallelism");
    JsonNode tr = t.path("training");
    String flavor = t.at("/model/flavor").asText();
    int tp = p.path("tensor_parallel_degree").asInt();
    int pp = p.path("pipeline_parallel_degree").asInt();
    int shard = p.path("data_parallel_shard_degree").asInt();
    List<String> f = new ArrayList<>(List.of("simulate", "--model", PRESET.get(flavor),
        "--cluster", cluster, "--seq", tr.path("seq_len").asText(), "--global-batch",
        tr.path("global_batch_size").asText(), "--dtype",
        tr.path("mixed_precision_param").asText().equals("bfloat16") ? "bf16" : "f32",
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp",
        String.valueOf(shard * p.path("data_parallel_replicate_degree").asInt()),
        "--recompute", recompute(t.path("activation_checkpoint"))));
    JsonNode parts = p.path("module_fqns_per_model_part");
    if (parts.size() == pp) {
      // Uneven stages (one part per rank): the first and last parts' transformer layers.
      f.addAll(List.of("--first-stage-layers", String.valueOf(layers(parts.get(0))),
          "--last-stage-layers", String.valueOf(layers(parts.get(pp - 1))),
          "--micro-batch", p.path("pipeline_parallel_microbatch_size").asText()));
    } else if (pp > 1) {
      int perRank = LAYERS.get(flavor) / (pp * p.path("pipeline_parallel_layers_per_stage")
          .asInt());
      if (perRank > 1) {
        f.addAll(List.of("--vpp", String.valueOf(perRank)));
      }
      f.addAll(List.of("--micro-batch", p.path("pipeline_parallel_microbatch_size").asText()));
    } else {
      f.addAll(List.of("--micro-batch", tr.path("local_batch_size").asText()));
    }
    if (tp > 1) {
      f.add("--sequence-parallel");
    }
    int cp = p.path("context_parallel_degree").asInt(1);
    if (cp > 1) {
      // v0.2.2 trains with PyTorch's allgather rotation (job_config.py:446), the all_gather form.
      assertThat(p.path("context_parallel_rotate_method").asText()).isEqualTo("allgather");
      f.addAll(List.of("--cp", String.valueOf(cp), "--cp-comm-type", "all_gather"));
    }
    if (shard > 1 || cp > 1) {
      // FSDP over dp_shard x cp (parallel_dims.py:334-335): ZeRO-1 under a pipeline schedule,
      // ZeRO-3 without one (TorchtitanToml).
      f.addAll(pp > 1 ? List.of("--distributed-optimizer") : List.of("--zero-stage", "3"));
    }
    // components/loss.py:33: the loss compiled when [compile] enables it and lists "loss".
    JsonNode compile = t.path("compile");
    boolean loss = false;
    for (JsonNode c : compile.path("components")) {
      loss |= c.asText().equals("loss");
    }
    if (compile.path("enable").asBoolean() && loss) {
      f.add("--fused-cross-entropy");
    }
    return f.toArray(String[]::new);
  }

  /** The transformer layers ({@code layers.N}) in one part of module_fqns_per_model_part. */
  private static int layers(JsonNode part) {
    int n = 0;
    for (JsonNode name : part) {
      n += name.asText().startsWith("layers.") ? 1 : 0;
    }
    return n;
  }

  private static String[] concat(String[]... parts) {
    return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream)
        .toArray(String[]::new);
  }

  private static String line(String text, String prefix) {
    return text.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
  }

  /**
   * meshplan's selective recomputation is Megatron-LM's (the attention core): under torchtitan's
   * fused attention it recomputes nothing, so both forms write no activation checkpointing, not
   * torchtitan's per-op selective mode, which keeps every other matmul output; it re-simulates to
   * the same iteration as selective.
   */
  @Test
  void megatronsSelectiveRecomputationIsNoCheckpointingInTorchtitan() throws Exception {
    String[] flags = {"--model", "llama3.1-8b", "--seq", "2048", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--zero-stage", "3", "--micro-batch", "1",
        "--global-batch", "16", "--recompute", "selective"};
    CliRun toml = CliRun.of(concat(new String[] {"export", "--to", "torchtitan",
        "--framework-version", "0.2.2"}, flags));
    assertThat(toml.code()).as(toml.err()).isZero();
    JsonNode ac = new TomlMapper().readTree(toml.out()).path("activation_checkpoint");
    assertThat(ac.path("mode").asText()).isEqualTo("none");
    assertThat(ac.has("selective_ac_option")).isFalse();
    CliRun py = CliRun.of(concat(new String[] {"export", "--to", "torchtitan"}, flags));
    assertThat(py.out()).contains("    config.activation_checkpoint = None\n")
        .doesNotContain("SelectiveAC");
    CliRun sim = CliRun.of(concat(new String[] {"simulate"}, flags));
    assertThat(line(simulate(toml.out(), "1x8:h100-80gb").out(), "iteration "))
        .isEqualTo(line(sim.out(), "iteration "));
  }
}
