package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nemotron-H as a user meets it: from its preset or its {@code config.json}, it plans and
 * simulates on 8 H100s, its plan file keeps its layer pattern and Mamba-2 mixer, Megatron-LM's
 * export writes it and the other exports say they do not write Mamba layers, Jamba's Mamba-1
 * layers are refused by Megatron-LM's export, and the layouts Megatron-Core's Mamba layers refuse
 * are refused.
 */
class HybridCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** nvidia/Nemotron-H-8B-Base-8K's config.json fields (Megatron-Bridge's bridge test, ebdef7c1). */
  private static final String CONFIG = """
      {"model_type": "nemotron_h", "hidden_size": 4096, "num_hidden_layers": 52,
       "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
       "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
       "conv_kernel": 4, "expand": 2, "chunk_size": 128, "num_attention_heads": 32,
       "num_key_value_heads": 8, "attention_head_dim": 128, "intermediate_size": 21504,
       "vocab_size": 131072, "tie_word_embeddings": false, "hidden_act": "relu2",
       "mlp_hidden_act": "relu2", "mamba_hidden_act": "silu", "use_bias": false,
       "mlp_bias": false, "attention_bias": false, "use_conv_bias": true,
       "layer_norm_epsilon": 1e-5, "residual_in_fp32": false, "max_position_embeddings": 8192,
       "torch_dtype": "bfloat16"}
      """;

  @TempDir Path dir;

  @Test
  void nemotronHPlansSimulatesAndItsPlanFileKeepsItsLayers() throws Exception {
    Path plan = dir.resolve("plan.json");
    // Planned for Megatron-LM, whose launch it is checked against below: the free search
    // recomputes the first blocks of one stage only, which Megatron-LM cannot state.
    CliRun p = CliRun.of("plan", "--model", "nemotron-h-8b", "--cluster", "1x8:h100-80gb",
        "--for", "megatron", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("nemotron-h-8b (8.1B parameters, 52 layers");
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/parameters").asLong()).isEqualTo(8_100_852_736L);
    assertThat(saved.at("/model/architecture/hybrid/pattern").asText())
        .isEqualTo("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
    assertThat(saved.at("/model/architecture/hybrid/mamba/groups").asInt()).isEqualTo(8);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isCloseTo(saved.get("iterationSeconds").asDouble(), withinPercentage(0.01));
    // Megatron-LM runs it (pretrain_hybrid.py, the pattern cut at the plan's stages); the other
    // frameworks have no Mamba layer.
    Path args = dir.resolve("megatron.sh");
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron", "--out",
        args.toString());
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(Files.readString(args)).contains("pretrain_hybrid.py", "--hybrid-layer-pattern '");
    for (String to : new String[] {"torchtitan", "deepspeed"}) {
      CliRun x = CliRun.of("export", "--plan", plan.toString(), "--to", to);
      assertThat(x.code()).as(to).isEqualTo(3);
      assertThat(x.err()).as(to).contains("Mamba-2 layers").doesNotContain("\tat ");
    }
  }

  @Test
  void aJambaPlanIsRefusedByMegatronInOneLineAndNothingIsWritten() throws Exception {
    // Jamba v0.1's 64 sublayers on 8 H100s: 2 stages of 32, each 4-way data parallel, its 16
    // experts 4-way expert parallel (4 x 2 = 8 GPUs; 4 microbatches of 4 sequences).
    io.meshplan.model.ModelSpec jamba = io.meshplan.model.Presets.get("jamba-v0.1");
    java.util.List<io.meshplan.plan.StagePlan> stages = new java.util.ArrayList<>();
    for (int k = 0; k < 2; k++) {
      stages.add(new io.meshplan.plan.StagePlan(32 * k, 32 * k + 31, 1, 4, 4 * k, 4, 1,
          io.meshplan.model.Recompute.FULL, false, 1, true, 0.1, 0.2, 1e9,
          java.util.List.of(), java.util.Optional.empty(), 4, 1, 1, false));
    }
    Path plan = dir.resolve("jamba.json");
    Files.writeString(plan, io.meshplan.plan.PlanJson.write(new io.meshplan.plan.PipelinePlan(
        new io.meshplan.plan.PlanSource.Preset(jamba, io.meshplan.model.Attention.FLASH),
        "1x8:h100-80gb", 16, 4, 4, 1, stages,
        new io.meshplan.plan.PipelinePlan.Prediction(10, 1000, 100, 0.3, 5e10))));
    byte[] before = Files.readAllBytes(plan);
    Path out = dir.resolve("megatron.sh");
    CliRun r = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron", "--out",
        out.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(3);
    assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
    // 32 layers' mixers: attention on 4 (attn_layer_period 8), Mamba-1 on the other 28.
    assertThat(r.err()).contains("Megatron-LM has no Mamba-1 layer", "jamba-v0.1 has 28 "
        + "Mamba-1 (S) layers").doesNotContain("\tat ");
    assertThat(out).doesNotExist();
    assertThat(Files.readAllBytes(plan)).isEqualTo(before);
  }

  @Test
  void theConfigJsonReadsAsThePresetAndBadConfigsAreRefused() throws Exception {
    Path cfg = dir.resolve("config.json");
    Files.writeString(cfg, CONFIG);
    CliRun ok = CliRun.of("simulate", "--model", cfg.toString(), "--cluster", "1x8:h100-80gb",
        "--tp", "2", "--pp", "1", "--dp", "4", "--global-batch", "64", "--micro-batch", "1",
        "--distributed-optimizer", "--json");
    assertThat(ok.code()).as(ok.err()).isZero();
    CliRun preset = CliRun.of("simulate", "--model", "nemotron-h-8b", "--seq", "8192",
        "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "4", "--global-batch",
        "64", "--micro-batch", "1", "--distributed-optimizer", "--json");
    assertThat(JSON.readTree(ok.out()).get("iterationSeconds").asDouble())
        .isEqualTo(JSON.readTree(preset.out()).get("iterationSeconds").asDouble());
    ObjectNode base = (ObjectNode) JSON.readTree(CONFIG);
    String[][] bad = {
        {"hybrid_override_pattern", "\"M-M\"", "names 3 layers, not the model's 52"},
        {"hybrid_override_pattern", null, "missing field 'hybrid_override_pattern'"},
        {"mlp_hidden_act", "\"silu\"", "relu2"},
        {"n_groups", "3", "must divide its 128 heads"},
        {"mamba_num_heads", "0", "mamba_num_heads"},
        {"attention_bias", "true", "without biases"}};
    for (String[] b : bad) {
      ObjectNode c = base.deepCopy();
      if (b[1] == null) {
        c.remove(b[0]);
      } else {
        c.set(b[0], JSON.readTree(b[1]));
      }
      Files.writeString(cfg, c.toString());
      byte[] before = Files.readAllBytes(cfg);
      CliRun r = CliRun.of("simulate", "--model", cfg.toString(), "--cluster", "1x8:h100-80gb",
          "--tp", "1", "--pp", "1", "--dp", "8", "--global-batch", "64", "--micro-batch", "1");
      assertThat(r.code()).as(b[0]).isEqualTo(2);
      assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
      assertThat(r.err()).as(b[0]).contains(b[2]);
      assertThat(Files.readAllBytes(cfg)).isEqualTo(before);
    }
    ObjectNode moe = base.deepCopy();
    moe.put("hybrid_override_pattern", "E-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
    Files.writeString(cfg, moe.toString());
    CliRun r = CliRun.of("simulate", "--model", cfg.toString(), "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--global-batch", "64", "--micro-batch", "1");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("mixture-of-experts layers (E)");
  }

  @Test
  void layoutsTheMambaLayersCannotTakeAreRefusedInOneLine() {
    // 128 heads in 8 groups: TP 16 divides the heads, not the groups (mamba_mixer.py asserts
    // ngroups % tp_size == 0).
    CliRun tp = CliRun.of("simulate", "--model", "nemotron-h-8b", "--cluster", "2x8:h100-80gb",
        "--tp", "16", "--pp", "1", "--dp", "1", "--global-batch", "16", "--micro-batch", "1");
    assertThat(tp.code()).isEqualTo(2);
    assertThat(tp.err().strip().lines().count()).isEqualTo(1);
    assertThat(tp.err()).contains("128 heads in 8 groups; tensor parallelism of 16 must divide"
        + " both");
    // export binds the same layout and refuses it the same way, writing nothing.
    Path out = dir.resolve("tp16.sh");
    CliRun ex = CliRun.of("export", "--to", "megatron", "--model", "nemotron-h-8b", "--cluster",
        "2x8:h100-80gb", "--tp", "16", "--pp", "1", "--dp", "1", "--global-batch", "16",
        "--micro-batch", "1", "--out", out.toString());
    assertThat(ex.code()).as(ex.err()).isEqualTo(2);
    assertThat(ex.err().strip().lines().count()).isEqualTo(1);
    assertThat(ex.err()).contains("128 heads in 8 groups; tensor parallelism of 16 must divide");
    assertThat(out).doesNotExist();
    CliRun cp = CliRun.of("simulate", "--model", "jamba-v0.1", "--cluster", "2x8:h100-80gb",
        "--tp", "1", "--cp", "2", "--pp", "1", "--dp", "8", "--ep", "8", "--global-batch", "16",
        "--micro-batch", "1");
    assertThat(cp.code()).isEqualTo(2);
    assertThat(cp.err().strip().lines().count()).isEqualTo(1);
    assertThat(cp.err()).contains("Mamba-1 layers, whose context parallelism");
  }

  @Test
  void contextParallelismOverMambaLayersIsPricedAsTheirAllToAlls() throws Exception {
    java.util.List<String> base = java.util.List.of("simulate", "--model", "nemotron-h-8b", "--cluster", "2x8:h100-80gb",
        "--tp", "2", "--pp", "1", "--global-batch", "64", "--micro-batch", "1", "--seq",
        "8192", "--distributed-optimizer", "--sequence-parallel", "--json");
    CliRun one = CliRun.of(base, "--cp", "1", "--dp", "8");
    CliRun two = CliRun.of(base, "--cp", "2", "--dp", "4");
    assertThat(one.code()).as(one.err()).isZero();
    assertThat(two.code()).as(two.err()).isZero();
    // The same GPUs and tokens: CP 2 adds the Mamba layers' all-to-alls (and the attention
    // layers' ring), counted on the context-parallel axis.
    JsonNode a = JSON.readTree(one.out());
    JsonNode b = JSON.readTree(two.out());
    assertThat(a.at("/communicationBytes/contextParallel").asDouble()).isZero();
    assertThat(b.at("/communicationBytes/contextParallel").asDouble()).isPositive();
    assertThat(a.at("/breakdown/expertAndContextExchange").asDouble()).isZero();
    assertThat(b.at("/breakdown/expertAndContextExchange").asDouble()).isPositive();
  }

  @Test
  void brokenHybridFieldsOfAPlanFileAreRefusedInOneLine() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "nemotron-h-8b", "--layers", "8", "--seq", "1024",
        "--cluster", "1x1:h100-80gb", "--global-batch", "1", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode saved = (ObjectNode) JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/architecture/hybrid/pattern").asText()).isEqualTo("M-M-M-M*");
    String[][] bad = {
        {"/pattern", "\"M-M\"", "names 3 layers, not the model's 8"},
        // A plan file's pattern is meshplan's own, which takes every symbol meshplan builds.
        {"/pattern", "\"X-M-M-M*\"", "layer 0 is 'X'; the symbols are M (Mamba-2), S "
            + "(Mamba-1), G (Gated DeltaNet), * (attention), - (MLP) and E (mixture of experts)"},
        {"/pattern", "5", "must be a string"},
        {"/mamba/heads", "0", "Mamba sizes must be 1 to 65536"},
        {"/mamba/groups", "3", "must divide its 128 heads"},
        {"/mamba/headDim", "2147483647", "Mamba sizes must be 1 to 65536"},
        {"/gatedDeltaNet", "{\"keyHeads\": 1, \"valueHeads\": 1, \"keyHeadDim\": 8, "
            + "\"valueHeadDim\": 8, \"convKernel\": 4, \"chunk\": 8}", "does not have"},
        {"/model/parameters", "2082747905", "but the model's fields make it 2082747904"},
        {"/model/parameters", "\"2082747904\"", "but the model's fields make it"}};
    // The parameter count the writer derived must be the model's: 8 layers of M-M-M-M* are 4
    // Mamba layers of 109,640,064, 3 MLP layers of 176,164,864 and one attention layer of
    // 41,947,136 (1,009,001,984), with the table, the head and the final norm 1,073,745,920:
    // 2,082,747,904.
    assertThat(saved.at("/model/parameters").asLong()).isEqualTo(2_082_747_904L);
    for (String[] b : bad) {
      ObjectNode d = saved.deepCopy();
      String at = b[0].startsWith("/model") ? b[0] : "/model/architecture/hybrid" + b[0];
      String parent = at.substring(0, at.lastIndexOf('/'));
      ((ObjectNode) d.at(parent)).set(at.substring(at.lastIndexOf('/') + 1),
          JSON.readTree(b[1]));
      Path broken = dir.resolve("broken.json");
      Files.writeString(broken, d.toString());
      byte[] before = Files.readAllBytes(broken);
      CliRun r = CliRun.of("simulate", "--plan", broken.toString());
      assertThat(r.code()).as(b[0] + " " + r.err()).isEqualTo(2);
      assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
      assertThat(r.err()).as(b[0]).contains(b[2]);
      assertThat(Files.readAllBytes(broken)).isEqualTo(before);
    }
  }
}
