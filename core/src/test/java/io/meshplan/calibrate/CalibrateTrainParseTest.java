package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Training logs in Megatron-LM's and torchtitan's formats, written for these tests, parse. */
class CalibrateTrainParseTest {
  @TempDir Path dir;

  private static Path resource(String name) {
    try {
      return Path.of(CalibrateTrainParseTest.class.getResource("/calibrate/train/" + name)
          .toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Path example(String name) {
    return Path.of("examples/calibrate").resolve(name);
  }

  @Test
  void megatronGptWithThroughputAndInterleaving() {
    TrainingRun r = TrainingLogs.read(resource("megatron_gpt_interleaved.log"), Optional.empty());
    assertThat(r.framework()).isEqualTo("megatron");
    // After the warm-up line (4120.7): 1210.2, 1190.6, 1305.0, 1201.4; the median of four is
    // (1201.4 + 1210.2) / 2 = 1205.8 ms; the checkpoint interval (1305.0) does not move it.
    assertThat(r.iterationSeconds()).isCloseTo(1.2058, within(1e-12));
    assertThat(r.iterationLines()).isEqualTo(4);
    assertThat(r.model()).isEqualTo(new RunModel.Dims(24, 2048, 16, 16, 8192, 50304, 2048, false,
        "f16", false));
    // No data_parallel_size line: world_size 16 / (tp 2 * pp 2) = 4; local batch 32 / 4 = 8.
    assertThat(r.parallel()).isEqualTo(new RunParallel(2, 2, 4, 2, 1, 8, "full", false, 0,
        false));
    assertThat(r.gpu()).isEmpty();
  }

  @Test
  void megatronLlamaExample() {
    TrainingRun r = TrainingLogs.read(example("megatron_a100_8gpu.log"), Optional.empty());
    // 1890.4 is warm-up; median of 702.3, 698.9, 701.7, 699.5, 700.8 is 700.8 ms.
    assertThat(r.iterationSeconds()).isCloseTo(0.7008, within(1e-12));
    assertThat(r.model()).isEqualTo(new RunModel.Dims(16, 2048, 16, 8, 5632, 32000, 2048, true,
        "bf16", true));
    assertThat(r.parallel()).isEqualTo(new RunParallel(2, 1, 4, 1, 2, 16, "none", true, 1, true));
  }

  /**
   * A bf16 Megatron-LM run reduced its gradients in bf16 when its arguments say
   * accumulate_allreduce_grads_in_fp32 False (what --grad-reduce-in-bf16 sets) or
   * grad_reduce_in_bf16 True; the example's True is fp32.
   */
  @Test
  void megatronGradientReductionType() throws IOException {
    assertThat(TrainingLogs.read(example("megatron_a100_8gpu.log"), Optional.empty()).parallel()
        .bf16GradReduce()).isFalse();
    String log = Files.readString(example("megatron_a100_8gpu.log"));
    String[] variants = {log.replace("accumulate_allreduce_grads_in_fp32 .............. True",
        "accumulate_allreduce_grads_in_fp32 .............. False"),
        log.replace("  bf16 ....", "  grad_reduce_in_bf16 ........................... True\n"
            + "  bf16 ....")};
    for (String v : variants) {
      assertThat(v).isNotEqualTo(log);
      Path f = dir.resolve("bf16-reduce.log");
      Files.writeString(f, v);
      assertThat(TrainingLogs.read(f, Optional.empty()).parallel().bf16GradReduce()).isTrue();
    }
  }

  /**
   * Megatron-LM's {@code fp8_param_gather} under an FP8 recipe is read as weights kept and
   * gathered in FP8, and the rebuilt run keeps them so ({@code --fp8-param-gather}); a bf16 run
   * with the flag (which Megatron-LM's FP8 path alone reads) keeps bf16 weights, and an FP4 run
   * with it is refused in one line.
   */
  @Test
  void fp8ParamGatherIsReadUnderFp8() throws IOException {
    String log = Files.readString(example("megatron_a100_8gpu.log"));
    String at = "  bf16 ....";
    String gather = "  fp8_param_gather ................................ True\n";
    Path f = dir.resolve("gather.log");
    Files.writeString(f, log.replace(at, "  fp8 ............................................. e4m3\n"
        + "  fp8_recipe ...................................... tensorwise\n" + gather + at));
    TrainingRun run = TrainingLogs.read(f, Optional.empty());
    assertThat(((RunModel.Dims) run.model()).fp8Weights()).isTrue();
    assertThat(io.meshplan.planner.TrainRunSimulator.of(run,
        io.meshplan.cluster.ClusterSpec.parse("1x8:h100-80gb")).model().lora().fp8Weights())
        .isTrue();
    Files.writeString(f, log.replace(at, gather + at));
    assertThat(((RunModel.Dims) TrainingLogs.read(f, Optional.empty()).model()).fp8Weights())
        .isFalse();
    // A switch whose value is neither True nor False (here with a terminal escape) is refused,
    // not read as off.
    Files.writeString(f, log.replace(at, "  fp8 ............................................. e4m3\n"
        + gather.replace("True", "\u001b[31mTrue") + at));
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("argument fp8_param_gather = ")
        .hasMessageContaining("31mTrue is not True or False")
        .hasMessageNotContaining("\u001b").hasMessageNotContaining("\n");
    Files.writeString(f, log.replace(at, "  fp4 ............................................. e2m1\n"
        + gather + at));
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("argument fp8_param_gather = True is set on an FP4 run")
        .hasMessageNotContaining("\n");
  }

  /**
   * An FP8 run is read as one: Megatron-LM's {@code fp8} argument (e4m3 or hybrid) under the
   * delayed, tensor-wise (read as {@code fp8:tensorwise}, current scaling, as is torchtitan's
   * float8) or MXFP8 recipe ({@code fp8:mxfp8}); torchtitan's float8 converter ({@code
   * quantize.linear.float8} in v0.2.2, {@code float8} before). Recipes and formats meshplan does
   * not price (block-wise, torchtitan's MX converters) and an unknown format are refused in one line;
   * torchtitan's float32 parameters are f32.
   */
  @Test
  void fp8RunsAreReadAsFp8() throws IOException {
    String log = Files.readString(example("megatron_a100_8gpu.log"));
    String at = "  bf16 ....";
    String[][] megatron = {{"  fp8 ............................................. hybrid\n",
        "fp8"}, {"  fp8 ............................................. e4m3\n"
        + "  fp8_recipe ...................................... tensorwise\n", "fp8:tensorwise"},
        {"  fp8 ............................................. e4m3\n"
        + "  fp8_recipe ...................................... mxfp8\n", "fp8:mxfp8"},
        // Megatron-LM's FP4 mode (--fp4-format e2m1, fp4_recipe nvfp4) trains through the same
        // autocast: read as the nvfp4 recipe.
        {"  fp4 ............................................. e2m1\n"
        + "  fp4_recipe ...................................... nvfp4\n", "fp8:nvfp4"},
        {"  fp8 ............................................. None\n", "bf16"}};
    for (String[] c : megatron) {
      Path f = dir.resolve("fp8.log");
      Files.writeString(f, log.replace(at, c[0] + at));
      assertThat(TrainingLogs.read(f, Optional.empty()).model().dtype()).as(c[0])
          .isEqualTo(c[1]);
    }
    String[][] refused = {{"  fp8 ............................................. hybrid\n"
        + "  fp8_recipe ...................................... blockwise\n",
        "argument fp8_recipe = blockwise is not a recipe meshplan prices"},
        {"  fp8 ............................................. e5m2\n",
            "argument fp8 = e5m2 is not an FP8 format Megatron-LM has"},
        {"  fp4 ............................................. e2m1\n"
        + "  fp4_recipe ...................................... custom\n",
            "argument fp4_recipe = custom is not a recipe meshplan prices"},
        {"  fp4 ............................................. e3m0\n",
            "argument fp4 = e3m0 is not an FP4 format Megatron-LM has"}};
    for (String[] c : refused) {
      Path f = dir.resolve("fp8.log");
      Files.writeString(f, log.replace(at, c[0] + at));
      assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty())).as(c[0])
          .isInstanceOf(InputException.class).hasMessageContaining(c[1])
          .hasMessageNotContaining("\n");
    }
    String toml = Files.readString(example("torchtitan_llama3_8b.toml"));
    // torchao's float8 scales by each tensor's amax in the step: current scaling.
    String[][] titan = {{"converters = [\"quantize.linear.float8\"]", "fp8:tensorwise"},
        {"converters = [ \"float8\" ]", "fp8:tensorwise"}, {"converters = []", "bf16"}};
    for (String[] c : titan) {
      Path cfg = dir.resolve("fp8.toml");
      Files.writeString(cfg, toml.replace("flavor = \"8B\"", "flavor = \"8B\"\n" + c[0]));
      assertThat(TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"), Optional.of(cfg))
          .model().dtype()).as(c[0]).isEqualTo(c[1]);
    }
    // torchtitan's converters are list[str]: a nested or unclosed list is refused in one line.
    for (String bad : new String[] {"converters = [[\"quantize.linear.float8\"]]",
        "converters = " + "[".repeat(10_000) + "]".repeat(10_000),
        "converters = [\"float8\" \"mx\"]", "converters = \"float8\""}) {
      Path cfg = dir.resolve("bad.toml");
      Files.writeString(cfg, toml.replace("flavor = \"8B\"", "flavor = \"8B\"\n" + bad));
      assertThatThrownBy(() -> TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
          Optional.of(cfg))).as(bad).isInstanceOf(InputException.class)
          .hasMessageContaining("not a list of quoted names").hasMessageNotContaining("\n");
    }
    Path trailing = dir.resolve("trailing.toml");
    Files.writeString(trailing, toml.replace("flavor = \"8B\"",
        "flavor = \"8B\"\nconverters = [ 'float8', ]"));
    assertThat(TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"), Optional.of(trailing))
        .model().dtype()).isEqualTo("fp8:tensorwise");
    Path mx = dir.resolve("mx.toml");
    Files.writeString(mx, toml.replace("flavor = \"8B\"",
        "flavor = \"8B\"\nconverters = [\"quantize.linear.mx\"]"));
    assertThatThrownBy(() -> TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
        Optional.of(mx))).isInstanceOf(InputException.class)
        .hasMessageContaining("MX formats, which meshplan does not price");
    Path f32 = dir.resolve("f32.toml");
    Files.writeString(f32, toml.replace("seq_len = 8192",
        "seq_len = 8192\nmixed_precision_param = \"float32\""));
    assertThat(TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"), Optional.of(f32))
        .model().dtype()).isEqualTo("f32");
  }

  @Test
  void torchtitanWithAnsiColoursAndThousandsSeparators() {
    TrainingRun r = TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
        Optional.of(example("torchtitan_llama3_8b.toml")));
    assertThat(r.framework()).isEqualTo("torchtitan");
    assertThat(r.gpu()).contains("h100");
    assertThat(r.model()).isEqualTo(new RunModel.Preset("llama3-8b", 8192, "bf16", true));
    // data_parallel_shard_degree = -1: the rest of the log's device mesh of 8, FSDP (ZeRO-3).
    // [activation_checkpoint] mode "selective" with selective_ac_option "op": per-op.
    assertThat(r.parallel()).isEqualTo(new RunParallel(1, 1, 8, 1, 1, 1, "op", false, 3,
        true));
    // tps after step 1: 6402, 6511, 6497, 6538, 6489; median 6497; 1 * 8192 / 6497 s.
    assertThat(r.iterationSeconds()).isCloseTo(8192.0 / 6497, within(1e-12));
  }

  /**
   * A torchtitan config that compiles the loss ([compile] enable, "loss" among the components,
   * or the components left to their default, which lists it) ran the fused loss; "model" alone,
   * or compile off, the fp32 one.
   */
  @Test
  void torchtitanCompiledLossIsTheFusedOne() throws IOException {
    String base = Files.readString(example("torchtitan_llama3_8b.toml"));
    String[][] cases = {{"enable = true\ncomponents = [\"model\", \"loss\"]", "true"},
        {"enable = true", "true"}, {"enable = true\ncomponents = [\"model\"]", "false"},
        {"enable = false\ncomponents = [\"loss\"]", "false"}};
    for (String[] c : cases) {
      Path cfg = dir.resolve("c.toml");
      Files.writeString(cfg, base + "\n[compile]\n" + c[0] + "\n");
      TrainingRun r = TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
          Optional.of(cfg));
      assertThat(r.parallel().lossFusion()).as(c[0]).isEqualTo(Boolean.parseBoolean(c[1]));
    }
    Path cfg = dir.resolve("c.toml");
    Files.writeString(cfg, base + "\n[compile]\nenable = \"sometimes\"\n");
    assertThatThrownBy(() -> TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
        Optional.of(cfg))).isInstanceOf(InputException.class)
        .hasMessageEndingWith("its --config has compile.enable = sometimes, not true or false");
  }

  /**
   * torchtitan's activation checkpointing as calibrate reads it (job_config.py's
   * ActivationCheckpoint): mode "selective" with selective_ac_option "op" is meshplan's op;
   * "full" and "none" are themselves; the layer-wise option (an integer, and the default "2" when
   * the option is left out) checkpoints some blocks and not others and is refused in one line,
   * as is a mode meshplan does not know.
   */
  @Test
  void torchtitanActivationCheckpointing() throws IOException {
    String base = Files.readString(example("torchtitan_llama3_8b.toml"));
    String head = base.substring(0, base.indexOf("[activation_checkpoint]"));
    String[][] read = {{"mode = \"selective\"\nselective_ac_option = \"op\"", "op"},
        {"mode = \"full\"", "full"}, {"mode = \"none\"", "none"}};
    for (String[] c : read) {
      Path cfg = dir.resolve("ac.toml");
      Files.writeString(cfg, head + "[activation_checkpoint]\n" + c[0] + "\n");
      TrainingRun r = TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
          Optional.of(cfg));
      assertThat(r.parallel().recompute()).as(c[0]).isEqualTo(c[1]);
    }
    String[][] refused = {{"mode = \"selective\"\nselective_ac_option = \"3\"",
        "selective_ac_option = \"3\" checkpoints one block in 3 whole"},
        {"mode = \"selective\"", "selective_ac_option = \"2\" checkpoints one block in 2"},
        {"mode = \"memory_budget\"", "mode = \"memory_budget\" is not one meshplan reads"},
        {"mode = \"selective\"\nselective_ac_option = \"OP\"",
            "selective_ac_option = \"OP\" is neither \"op\" nor a whole number"},
        {"mode = \"selective\"\nselective_ac_option = \"-1\"",
            "selective_ac_option = \"-1\" is neither \"op\" nor a whole number"}};
    for (String[] c : refused) {
      Path cfg = dir.resolve("ac.toml");
      Files.writeString(cfg, head + "[activation_checkpoint]\n" + c[0] + "\n");
      assertThatThrownBy(() -> TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
          Optional.of(cfg))).as(c[0]).isInstanceOf(InputException.class)
          .hasMessageContaining(c[1]).hasMessageNotContaining("\n");
    }
  }

  @Test
  void torchtitanOlderConfigKeys() {
    TrainingRun r = TrainingLogs.read(resource("torchtitan_llama3_70b_h100.log"),
        Optional.of(resource("torchtitan_old_batch_size.toml")));
    assertThat(r.model()).isEqualTo(new RunModel.Preset("llama3-70b", 4096, "bf16", true));
    // FSDP over 4 under a pipeline, fsdp_reshard_after_forward "default": no resharding after
    // the forward pass when a pipeline is enabled (v0.2.2 parallelize.py:324-327), ZeRO-1.
    assertThat(r.parallel()).isEqualTo(new RunParallel(8, 2, 4, 1, 1, 2, "full", false, 1, true));
    // tps median of 1180, 1204, 1196 is 1196 per GPU; 2 * 4096 / (1196 * 8 * 2) s.
    assertThat(r.iterationSeconds()).isCloseTo(2.0 * 4096 / (1196 * 16), within(1e-12));
  }

  /** A Megatron-LM log with some argument lines replaced or added. */
  private Path megatronWith(String name, String... args) throws IOException {
    String log = Files.readString(resource("megatron_gpt_interleaved.log"));
    for (int i = 0; i < args.length; i += 2) {
      String line = "  " + args[i] + " " + ".".repeat(48 - args[i].length()) + " " + args[i + 1];
      String replaced = log.replaceAll("(?m)^  " + args[i] + " \\.+ .*$",
          java.util.regex.Matcher.quoteReplacement(line));
      log = replaced.equals(log) ? log.replace("  num_layers ", line + "\n  num_layers ")
          : replaced;
    }
    Path f = dir.resolve(name);
    Files.writeString(f, log);
    return f;
  }

  /**
   * Models a decoder of standard attention cannot state are refused in one line naming the
   * argument, not fitted as another model of the same sizes: latent attention, prediction
   * modules, heads narrower than hidden / heads (2048 / 16 = 128), sliding windows, experts in
   * a latent width.
   */
  @Test
  void megatronModelsBeyondADenseDecoderAreRefused() throws IOException {
    String[][] cases = {{"multi_latent_attention", "True"}, {"mtp_num_layers", "1"},
        {"kv_channels", "64"}, {"window_size", "(4096, 0)"}, {"moe_latent_size", "1024"}};
    for (String[] c : cases) {
      Path f = megatronWith(c[0] + ".log", c[0], c[1]);
      assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty())).as(c[0])
          .isInstanceOf(InputException.class)
          .hasMessageContaining("argument " + c[0] + " = " + c[1])
          .hasMessageContaining("decoders of standard attention")
          .hasMessageNotContaining("\n");
    }
    // kv_channels as validate_args sets it, and the empty values, read as before.
    for (String[] c : new String[][] {{"kv_channels", "128"}, {"num_experts", "None"},
        {"multi_latent_attention", "False"}, {"mtp_num_layers", "None"},
        {"window_size", "None"}, {"moe_latent_size", "None"}}) {
      assertThat(TrainingLogs.read(megatronWith("ok.log", c[0], c[1]), Optional.empty())
          .parallel().tensorParallel()).as(c[0]).isEqualTo(2);
    }
  }

  /**
   * A mixture-of-experts run (the 24-layer log with 8 experts of 4096, 2 per token, over EP 4
   * with ETP 1, all-to-all dispatch) is read with its experts: moe_layer_freq 2 makes the odd
   * blocks dense, a 0/1 list states them one by one, the capacity factor is kept (None is
   * dropless); the flex dispatcher is read with its backend (DeepEP by default, Hybrid-EP);
   * Megatron-Core's default allgather dispatcher, NCCL-EP, a zero or non-numeric capacity and a
   * list of the wrong length are refused in one line.
   */
  @Test
  void megatronMixtureOfExperts() throws IOException {
    String[] moe = {"num_experts", "8", "moe_router_topk", "2", "moe_ffn_hidden_size", "4096",
        "moe_token_dispatcher_type", "alltoall", "expert_model_parallel_size", "4",
        "expert_tensor_parallel_size", "1", "moe_layer_freq", "2",
        "moe_expert_capacity_factor", "1.25", "overlap_moe_expert_parallel_comm", "True"};
    TrainingRun r = TrainingLogs.read(megatronWith("moe.log", moe), Optional.empty());
    RunModel.Dims d = (RunModel.Dims) r.model();
    java.util.List<Integer> odd = java.util.stream.IntStream.range(0, 24).filter(i -> i % 2 == 1)
        .boxed().toList();
    assertThat(d.moe()).isEqualTo(new RunModel.Moe(8, 2, 4096, 0, 1.25, odd));
    assertThat(d.ffn()).isEqualTo(8192);
    assertThat(r.parallel().expertParallel()).isEqualTo(4);
    assertThat(r.parallel().expertTensorParallel()).isEqualTo(1);
    assertThat(r.parallel().moeOverlap()).isTrue();
    String list = "[" + "0, ".repeat(3) + "1, ".repeat(20) + "1]";
    String[] listed = moe.clone();
    listed[13] = list;
    listed[15] = "None";
    RunModel.Moe l = ((RunModel.Dims) TrainingLogs.read(megatronWith("list.log", listed),
        Optional.empty()).model()).moe();
    assertThat(l.denseLayers()).containsExactly(0, 1, 2);
    assertThat(l.capacityFactor()).isZero();
    assertThat(r.parallel().dispatcher()).isEqualTo("alltoall");
    // The flex dispatcher with Hybrid-EP, and with Megatron-Core's default backend, DeepEP.
    String[] flex = java.util.Arrays.copyOf(moe, moe.length + 2);
    flex[7] = "flex";
    flex[moe.length] = "moe_flex_dispatcher_backend";
    flex[moe.length + 1] = "hybridep";
    assertThat(TrainingLogs.read(megatronWith("flex.log", flex), Optional.empty()).parallel()
        .dispatcher()).isEqualTo("hybridep");
    String[] deep = moe.clone();
    deep[7] = "flex";
    assertThat(TrainingLogs.read(megatronWith("deepep.log", deep), Optional.empty()).parallel()
        .dispatcher()).isEqualTo("deepep");
    flex[moe.length + 1] = "ncclep";
    Path nccl = megatronWith("ncclep.log", flex);
    assertThatThrownBy(() -> TrainingLogs.read(nccl, Optional.empty()))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("argument moe_flex_dispatcher_backend").hasMessageNotContaining("\n");
    String[][] refused = {{"moe_token_dispatcher_type", "allgather"},
        {"moe_token_dispatcher_type", "ncclep"}, {"moe_expert_capacity_factor", "0"},
        {"moe_expert_capacity_factor", "big"}, {"moe_layer_freq", "[1, 0]"},
        {"moe_layer_freq", "0"}};
    for (String[] c : refused) {
      String[] bad = moe.clone();
      for (int i = 0; i < bad.length; i += 2) {
        if (bad[i].equals(c[0])) {
          bad[i + 1] = c[1];
        }
      }
      Path f = megatronWith("bad-moe.log", bad);
      assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty())).as(c[0] + " " + c[1])
          .isInstanceOf(InputException.class).hasMessageContaining("argument " + c[0])
          .hasMessageNotContaining("\n");
    }
    // Attention masked by document (its lengths not in the log) is refused, whichever flag did it.
    for (String packed : new String[] {"dataloader_inter_document_masking",
        "reset_attention_mask", "sft"}) {
      String[] docs = java.util.Arrays.copyOf(moe, moe.length + 2);
      docs[moe.length] = packed;
      docs[moe.length + 1] = "True";
      Path f = megatronWith("packed.log", docs);
      assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty())).as(packed)
          .isInstanceOf(InputException.class).hasMessageContaining("argument " + packed)
          .hasMessageContaining("by document").hasMessageNotContaining("\n");
    }
    // Without the dispatcher's line the run used Megatron-Core's default, allgather.
    String[] noDispatcher = java.util.Arrays.copyOf(moe, 2);
    Path f = megatronWith("default-dispatcher.log", noDispatcher);
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .hasMessageContaining("moe_token_dispatcher_type");
  }

  /**
   * Context parallelism: world 16 = tp 2 x pp 2 x cp 2 x dp 2, so without a data_parallel_size
   * line the data-parallel size is 2 and the local batch 32 / 2 = 16; p2p is the ring and
   * all_gather (or Megatron's help's allgather) the all-gather, a2a Ulysses' all-to-alls;
   * a2a+p2p and a mix over layers are refused.
   */
  @Test
  void megatronContextParallelism() throws IOException {
    TrainingRun ring = TrainingLogs.read(megatronWith("cp.log", "context_parallel_size", "2",
        "cp_comm_type", "['p2p']"), Optional.empty());
    assertThat(ring.parallel()).isEqualTo(new RunParallel(2, 2, 2, 2, 1, 16, "full", false, 0,
        false).withContext(2, "p2p"));
    for (String allGather : new String[] {"['all_gather']", "allgather", "['all_gather', "
        + "'all_gather']"}) {
      assertThat(TrainingLogs.read(megatronWith("ag.log", "context_parallel_size", "2",
          "cp_comm_type", allGather), Optional.empty()).parallel().cpAllGather()).as(allGather)
          .isTrue();
    }
    for (String a2a : new String[] {"['a2a']", "a2a", "['a2a', 'a2a']"}) {
      RunParallel p = TrainingLogs.read(megatronWith("a2a.log", "context_parallel_size", "2",
          "cp_comm_type", a2a), Optional.empty()).parallel();
      assertThat(p.cpCommType()).as(a2a).isEqualTo("a2a");
      assertThat(p.cpAllGather()).isFalse();
    }
    for (String bad : new String[] {"['a2a+p2p']", "['p2p', 'all_gather']", "['p2p', 'a2a']"}) {
      Path f = megatronWith("bad.log", "context_parallel_size", "2", "cp_comm_type", bad);
      assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty())).as(bad)
          .isInstanceOf(InputException.class).hasMessageContaining("argument cp_comm_type")
          .hasMessageNotContaining("\n");
    }
  }

  /**
   * Full recomputation of some layers only (recompute_method block over fewer layers than a
   * model chunk's: 24 layers over pp 2 x vpp 2 are chunks of 6) reads as those layers of each
   * chunk; block over all six, and uniform, read as every layer; block over none, and a method
   * Megatron-Core does not take, are refused.
   * Selective recomputation carries its modules, the default (core_attn alone) as none listed.
   */
  @Test
  void megatronRecomputationMethodsAndModules() throws IOException {
    TrainingRun part = TrainingLogs.read(megatronWith("block.log", "recompute_method", "block",
        "recompute_num_layers", "2"), Optional.empty());
    assertThat(part.parallel().recompute()).isEqualTo("full");
    assertThat(part.parallel().recomputeLayers()).isEqualTo(2);
    Path none = megatronWith("none.log", "recompute_method", "block", "recompute_num_layers",
        "0");
    assertThatThrownBy(() -> TrainingLogs.read(none, Optional.empty()))
        .isInstanceOf(InputException.class).hasMessageContaining("recompute_num_layers = 0")
        .hasMessageContaining("must be positive").hasMessageNotContaining("\n");
    Path other = megatronWith("other.log", "recompute_method", "chunk");
    assertThatThrownBy(() -> TrainingLogs.read(other, Optional.empty()))
        .isInstanceOf(InputException.class).hasMessageContaining("recompute_method = chunk is "
            + "not a recompute method Megatron-LM takes (block or uniform)")
        .hasMessageNotContaining("\n");
    TrainingRun whole = TrainingLogs.read(megatronWith("whole.log", "recompute_method", "block",
        "recompute_num_layers", "6"), Optional.empty());
    assertThat(whole.parallel().recompute()).isEqualTo("full");
    assertThat(whole.parallel().recomputeLayers()).isZero();
    // Simulated, recomputing 2 of each chunk's 6 layers is faster than all 6.
    io.meshplan.cluster.ClusterSpec c = io.meshplan.cluster.ClusterSpec.parse("2x8:a100-80gb");
    assertThat(io.meshplan.planner.TrainRunSimulator.of(part, c).iterationSeconds(1))
        .isLessThan(io.meshplan.planner.TrainRunSimulator.of(whole, c).iterationSeconds(1));
    TrainingRun mlp = TrainingLogs.read(megatronWith("sel.log", "recompute_granularity",
        "selective", "recompute_method", "None", "recompute_num_layers", "None",
        "recompute_modules", "['core_attn', 'mlp']"), Optional.empty());
    assertThat(mlp.parallel().recompute()).isEqualTo("selective");
    assertThat(mlp.parallel().recomputeModules()).containsExactly("core_attn", "mlp");
    assertThat(TrainingLogs.read(megatronWith("def.log", "recompute_granularity", "selective",
        "recompute_method", "None", "recompute_num_layers", "None", "recompute_modules",
        "['core_attn']"), Optional.empty()).parallel().recomputeModules()).isEmpty();
  }

  /**
   * torchtitan's data and context parallelism: context_parallel_degree 2 with the default
   * allgather rotation (FSDP over shard x cp, ZeRO-3 without a pipeline), a step of 1 x 8192 /
   * (tps x cp) seconds; the alltoall rotation, HSDP (both data-parallel degrees above 1 under
   * FSDP), fsdp_reshard_after_forward "never" without a pipeline, an unknown policy and a
   * degree of 0 are refused in one line; "always" under a pipeline is ZeRO-3.
   */
  @Test
  void torchtitanContextAndShardingForms() throws IOException {
    String toml = Files.readString(example("torchtitan_llama3_8b.toml"));
    Path cp = dir.resolve("cp.toml");
    Files.writeString(cp, toml.replace("context_parallel_degree = 1",
        "context_parallel_degree = 2"));
    // The same 8 GPUs as 4 data-parallel ranks of 2 context-parallel ones: a global batch of 4.
    Path cpLog = TitanLogs.of(dir, 8, 4);
    TrainingRun r = TrainingLogs.read(cpLog, Optional.of(cp));
    assertThat(r.parallel().contextParallel()).isEqualTo(2);
    assertThat(r.parallel().cpAllGather()).isTrue();
    assertThat(r.parallel().zeroStage()).isEqualTo(3);
    TrainingRun flat = TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
        Optional.of(example("torchtitan_llama3_8b.toml")));
    assertThat(r.iterationSeconds()).isCloseTo(flat.iterationSeconds() / 2, within(1e-12));
    String[][] refused = {
        {"context_parallel_degree = 2\ncontext_parallel_rotate_method = \"alltoall\"",
            "context_parallel_rotate_method = \"alltoall\""},
        {"context_parallel_degree = 2\ndata_parallel_replicate_degree = 2",
            "is HSDP, which meshplan prices without context or pipeline parallelism"},
        {"context_parallel_degree = 1\ndata_parallel_replicate_degree = 2\n"
            + "fsdp_reshard_after_forward = \"never\"", "with HSDP keeps weights sharded"},
        {"context_parallel_degree = 1\nfsdp_reshard_after_forward = \"never\"",
            "without a pipeline"},
        {"context_parallel_degree = 1\nfsdp_reshard_after_forward = \"sometimes\"",
            "not one torchtitan takes"},
        {"context_parallel_degree = 0", "is not a positive degree"}};
    for (String[] c : refused) {
      Path f = dir.resolve("bad.toml");
      Files.writeString(f, toml.replace("data_parallel_replicate_degree = 1\n", "")
          .replace("context_parallel_degree = 1", c[0]));
      assertThatThrownBy(() -> TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"),
          Optional.of(f))).as(c[0]).isInstanceOf(InputException.class)
          .hasMessageContaining(c[1]).hasMessageNotContaining("\n");
    }
    // HSDP: FSDP inside the shard degree (the rest of the GPUs), replicated across 2.
    Path hsdp = dir.resolve("hsdp.toml");
    Files.writeString(hsdp, toml.replace("data_parallel_replicate_degree = 1",
        "data_parallel_replicate_degree = 2"));
    RunParallel h = TrainingLogs.read(example("torchtitan_llama3_8b_h100.log"), Optional.of(hsdp))
        .parallel();
    assertThat(List.of(h.zeroStage(), h.shardReplicas())).containsExactly(3, 2);
    Path always = dir.resolve("always.toml");
    Files.writeString(always, Files.readString(resource("torchtitan_old_batch_size.toml"))
        .replace("pipeline_parallel_microbatch_size = 1", "pipeline_parallel_microbatch_size = 1"
            + "\nfsdp_reshard_after_forward = \"always\""));
    assertThat(TrainingLogs.read(resource("torchtitan_llama3_70b_h100.log"), Optional.of(always))
        .parallel().zeroStage()).isEqualTo(3);
  }

  @Test
  void megatronWithoutIterationLinesIsRefused() throws IOException {
    Path f = dir.resolve("args-only.log");
    String log = Files.readString(resource("megatron_gpt_interleaved.log"));
    Files.writeString(f, log.substring(0, log.indexOf(" [2024")));
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .isInstanceOf(InputException.class).hasMessageContaining("0 usable")
        .hasMessageContaining("need at least 2");
  }

  @Test
  void megatronMissingArgumentIsNamed() throws IOException {
    Path f = dir.resolve("no-hidden.log");
    Files.writeString(f, Files.readString(resource("megatron_gpt_interleaved.log"))
        .replaceAll("(?m)^  hidden_size .*\\n", ""));
    assertThatThrownBy(() -> TrainingLogs.read(f, Optional.empty()))
        .isInstanceOf(InputException.class).hasMessageContaining("argument hidden_size is "
            + "missing");
  }

  @Test
  void profileComputeSectionRoundTripsAndOldProfilesReadAsOne() {
    Profile p = new Profile(Profile.VERSION, "1x8:h100-80gb", java.util.List.of())
        .withCompute(io.meshplan.cluster.Architecture.HOPPER, new ComputeScale(0.75, 2, java.util.List.of("nemo"), new io.meshplan.calibrate.ErrorBand(0.9, 1.1, 5, "in-sample")));
    for (String name : new String[] {"p.yaml", "p.json"}) {
      Path f = dir.resolve(name);
      ProfileFiles.write(f, p);
      Profile back = ProfileFiles.read(f);
      assertThat(back).isEqualTo(p);
      assertThat(back.computeScale(io.meshplan.cluster.GpuCatalog.find("h100-80gb").orElseThrow()))
          .isEqualTo(0.75);
      assertThat(back.computeScale(io.meshplan.cluster.GpuCatalog.find("a100-80gb").orElseThrow()))
          .isEqualTo(1.0);
    }
  }

  @Test
  void profileWithComputeSurvivesJavaSerialization() throws Exception {
    // A planning task carries its pricing to another process by Java serialization.
    Profile p = new Profile(Profile.VERSION, "1x8:a100-80gb", java.util.List.of())
        .withCompute(io.meshplan.cluster.Architecture.AMPERE, new ComputeScale(0.8125, 3, java.util.List.of("sc21"), new io.meshplan.calibrate.ErrorBand(0.9, 1.1, 5, "in-sample")));
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream o = new java.io.ObjectOutputStream(bytes)) {
      o.writeObject(p);
    }
    try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(
        new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      assertThat(in.readObject()).isEqualTo(p);
    }
  }

  @Test
  void scaledKernelModelDividesEveryTime() {
    io.meshplan.cluster.KernelTimeModel k = io.meshplan.cluster.KernelTimeModel.of(
        io.meshplan.cluster.GpuCatalog.find("a100-80gb").orElseThrow(), 2);
    io.meshplan.cluster.KernelTimeModel half = k.scaled(0.5);
    // A 1 GFLOP GEMM on A100 bf16: (1e9 + 312e12 * 5e-6) / (312e12 * 0.8) = 1.0256e-5 s; at scale
    // 0.5 twice that, 2.0513e-5 s.
    assertThat(k.dotCost(1e9, 1e6)).isCloseTo((1e9 + 312e12 * 5e-6) / (312e12 * 0.8),
        within(1e-18));
    assertThat(half.dotCost(1e9, 1e6)).isCloseTo(2 * k.dotCost(1e9, 1e6), within(1e-18));
    assertThat(half.cost(0, 1e9)).isCloseTo(2 * k.cost(0, 1e9), within(1e-15));
    assertThat(half.attentionCost(1e12, 1e8, true))
        .isCloseTo(2 * k.attentionCost(1e12, 1e8, true), within(1e-15));
    // The largest meaningful scale puts the most efficient kernel at the dense peak.
    assertThat(k.maxScale()).isGreaterThanOrEqualTo(1).isLessThanOrEqualTo(1 / 0.8 + 1e-12);
  }

  @Test
  void randomTorchtitanStepLinesParse() {
    // Seeded: tps with and without separators, colours on or off; the parsed time must be
    // local * seq / (median tps after the first * tp * pp).
    java.util.Random rnd = new java.util.Random(20);
    for (int c = 0; c < 50; c++) {
      int n = 2 + rnd.nextInt(6);
      int[] tps = new int[n];
      StringBuilder log = new StringBuilder();
      for (int i = 0; i < n; i++) {
        tps[i] = 100 + rnd.nextInt(2_000_000);
        String t = rnd.nextBoolean() ? String.format(java.util.Locale.ROOT, "%,d", tps[i])
            : Integer.toString(tps[i]);
        String e = rnd.nextBoolean() ? "\u001b[3" + rnd.nextInt(8) + "m" : "";
        log.append("[rank0]:[titan] x - root - INFO - ").append(e).append("step: ")
            .append(i + 1).append("  ").append(e).append("loss: 1.0  ").append(e)
            .append("tps: ").append(t).append("  ").append(e).append("mfu: 1%\n");
      }
      int[] rest = java.util.Arrays.copyOfRange(tps, 1, n);
      java.util.Arrays.sort(rest);
      int m = rest.length;
      double median = m % 2 == 1 ? rest[m / 2] : (rest[m / 2 - 1] + rest[m / 2]) / 2.0;
      TrainingRun r = TorchtitanLog.parse("gen", java.util.List.of(log.toString().split("\n")),
          java.util.Map.of("model.name", "llama3", "model.flavor", "8B",
              "training.local_batch_size", "3", "training.seq_len", "1024",
              "activation_checkpoint.mode", "none"));
      assertThat(r.iterationSeconds()).as("case " + c).isCloseTo(3 * 1024 / median,
          within(1e-9 * r.iterationSeconds()));
    }
  }
}
