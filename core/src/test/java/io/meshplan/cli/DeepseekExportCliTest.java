package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DeepSeek-V3 through {@code export --to megatron}: the report's configuration writes its latent
 * attention, dense blocks and prediction module; a cut-down model's file is read back into a
 * Hugging Face {@code deepseek_v3} config and {@code simulate} flags (every size, degree and
 * batch taken from the file) and simulates to the same iteration; a prediction module after a
 * dense last block is refused in one line (exit 3).
 */
class DeepseekExportCliTest {
  /** The report's layout (section 3.2): PP 16, EP 64, 61 blocks as 3 + 14 x 4 + 2. */
  private static final List<String> REPORT = List.of("--model", "deepseek-v3", "--seq", "4096",
      "--cluster", "256x8:h100-80gb:ib-ndr400", "--tp", "1", "--pp", "16", "--dp", "128",
      "--ep", "64", "--micro-batch", "1", "--global-batch", "4096", "--distributed-optimizer",
      "--recompute", "full", "--first-stage-layers", "3", "--last-stage-layers", "2");
  /** DeepSeek-V3 cut to 5 blocks of hidden 1024 and 8 heads: blocks 0-2 dense, 3-4 experts. */
  private static final List<String> SMALL = List.of("--model", "deepseek-v3", "--layers", "5",
      "--hidden", "1024", "--heads", "8", "--seq", "1024", "--cluster", "1x8:h100-80gb");
  private static final Pattern VOCAB = Pattern.compile(
      "\n# The vocabulary is the (\\d+) rows priced \\(--padded-vocab-size\\)");

  @Test
  void theReportConfigurationExports() {
    CliRun r = CliRun.of(concat(List.of("export", "--to", "megatron"), REPORT));
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err()).isEmpty();
    // 2048 GPUs = 1 x 16 x 128; 4096 / (1 x 128) = 32 microbatches per pipeline.
    assertThat(r.out()).contains("tensor 1 x pipeline 16 x data 128 = 2048 GPUs,\n"
            + "# 32 microbatches of 1 per pipeline per iteration\n")
        .contains("# 256 experts: expert 64 x expert tensor 1 per 128 GPUs of a pipeline"
            + " stage.\n# 3 of the 61 blocks have a dense MLP of 18432 (--moe-layer-freq).\n"
            + "# 1 multi-token prediction module on the last pipeline stage.\n")
        .contains("\n  --decoder-first-pipeline-num-layers 3\n"
            + "  --decoder-last-pipeline-num-layers 2\n")
        .contains("\n  --multi-latent-attention\n  --q-lora-rank 1536\n  --kv-lora-rank 512\n"
            + "  --qk-head-dim 128\n  --qk-pos-emb-head-dim 64\n  --v-head-dim 128\n"
            + "  --qk-layernorm\n  --rope-type yarn\n  --rotary-scaling-factor 40\n"
            + "  --mscale 1\n  --mscale-all-dim 1\n")
        // deepseek-ai/DeepSeek-V3's config.json: rope_theta 10000, rms_norm_eps 1e-6.
        .contains("\n  --norm-epsilon 1e-6\n  --position-embedding-type rope\n"
            + "  --rotary-base 10000\n")
        .contains("\n  --moe-ffn-hidden-size 2048\n  --moe-layer-freq '[0]*3+[1]*58'\n"
            + "  --moe-shared-expert-intermediate-size 2048\n")
        .contains("\n  --mtp-num-layers 1\n  --mtp-loss-scaling-factor 0.1\n")
        .doesNotContain("--group-query-attention").doesNotContain("--kv-channels");
  }

  @Test
  void exportedFilesResimulateToTheSameIteration(@TempDir Path dir) throws Exception {
    List<List<String>> layouts = List.of(
        // Two stages, the dense blocks on the first, the experts and the module on the second.
        List.of("--tp", "1", "--pp", "2", "--dp", "4", "--ep", "4", "--micro-batch", "1",
            "--global-batch", "16", "--distributed-optimizer", "--recompute", "full",
            "--first-stage-layers", "3"),
        // One stage, tensor-parallel pairs, the experts over 8 GPUs.
        List.of("--tp", "2", "--pp", "1", "--dp", "4", "--ep", "8", "--micro-batch", "2",
            "--global-batch", "32", "--sequence-parallel", "--recompute", "selective"));
    for (List<String> layout : layouts) {
      List<String> flags = new ArrayList<>(SMALL);
      flags.addAll(layout);
      CliRun sim = CliRun.of(concat(List.of("simulate"), flags));
      assertThat(sim.code()).as(sim.err()).isZero();
      CliRun ex = CliRun.of(concat(List.of("export", "--to", "megatron"), flags));
      assertThat(ex.code()).as(ex.err()).isZero();
      Map<String, String> a = ExportRoundTripCliTest.arguments(ex.out(), "MEGATRON_ARGS=(");
      Path config = dir.resolve("from-megatron-" + layout.get(3) + ".json");
      Files.writeString(config, hfConfig(a, vocab(ex.out())));
      String[] back = simulateFlags(a, config, "1x8:h100-80gb");
      CliRun again = CliRun.of(back);
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(ExportRoundTripCliTest.line(again.out())).as(String.join(" ", back))
          .isEqualTo(ExportRoundTripCliTest.line(sim.out()));
    }
  }

  /**
   * A plan of the cut-down model from Megatron-LM's grid exports exactly, and its file read back
   * simulates to the plan's own iteration.
   */
  @Test
  void aSavedPlanExportsAndResimulates(@TempDir Path dir) throws Exception {
    Path plan = dir.resolve("ds.json");
    List<String> flags = new ArrayList<>(SMALL);
    flags.addAll(List.of("--global-batch", "16", "--megatron-grid", "--out", plan.toString()));
    CliRun p = CliRun.of(concat(List.of("plan"), flags));
    assertThat(p.code()).as(p.err()).isZero();
    CliRun ex = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(ex.code()).as(ex.err()).isZero();
    Map<String, String> a = ExportRoundTripCliTest.arguments(ex.out(), "MEGATRON_ARGS=(");
    Path config = dir.resolve("from-plan.json");
    Files.writeString(config, hfConfig(a, vocab(ex.out())));
    CliRun again = CliRun.of(simulateFlags(a, config, "1x8:h100-80gb"));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(ExportRoundTripCliTest.line(again.out()))
        .isEqualTo(ExportRoundTripCliTest.line(p.out()));
  }

  /**
   * 4 blocks, the first dense by {@code first_k_dense_replace} and every odd one by {@code
   * moe_layer_freq 2}: block 3, the last, is dense, and Megatron-LM would give the prediction
   * module a dense block.
   */
  @Test
  void aPredictionModuleAfterADenseLastBlockIsRefused(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("odd.json");
    String json = Files.readString(Path.of("core/src/test/resources/hf/deepseek-v3.json"))
        .replace("\"num_hidden_layers\": 61", "\"num_hidden_layers\": 4")
        .replace("\"first_k_dense_replace\": 3", "\"first_k_dense_replace\": 1")
        .replace("\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2");
    Files.writeString(config, json);
    CliRun r = CliRun.of("export", "--to", "megatron", "--model", config.toString(), "--seq",
        "1024", "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--ep", "8",
        "--micro-batch", "1", "--global-batch", "8", "--recompute", "full");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().strip()).isEqualTo("meshplan: infeasible: megatron cannot express this"
        + " configuration: Megatron-LM builds each multi-token prediction module's block like the"
        + " last decoder block (gpt_builders.py:80-84), which in odd is dense; meshplan prices"
        + " the module's block with experts");
    assertThat(r.out().strip()).isEqualTo("no configuration megatron can express is near it");
    assertThat(config).hasContent(json);
  }

  /** A {@code deepseek_v3} config of the file's model: every size from Megatron-LM's flags. */
  static String hfConfig(Map<String, String> a, int vocab) {
    assertThat(a).containsKeys("--multi-latent-attention", "--swiglu",
        "--untie-embeddings-and-output-weights", "--disable-bias-linear", "--qk-layernorm")
        .containsEntry("--normalization", "RMSNorm")
        .containsEntry("--position-embedding-type", "rope").containsEntry("--rope-type", "yarn")
        .containsKey("--bf16");
    int layers = Integer.parseInt(a.get("--num-layers"));
    int expertFfn = Integer.parseInt(a.get("--moe-ffn-hidden-size"));
    int shared = Integer.parseInt(a.getOrDefault("--moe-shared-expert-intermediate-size", "0"));
    assertThat(shared % expertFfn).isZero();
    int heads = Integer.parseInt(a.get("--num-attention-heads"));
    ObjectNode c = new ObjectMapper().createObjectNode();
    c.put("model_type", "deepseek_v3");
    c.put("num_hidden_layers", layers);
    c.put("hidden_size", Integer.parseInt(a.get("--hidden-size")));
    c.put("num_attention_heads", heads);
    c.put("num_key_value_heads", heads);
    c.put("intermediate_size", Integer.parseInt(a.get("--ffn-hidden-size")));
    c.put("moe_intermediate_size", expertFfn);
    c.put("n_routed_experts", Integer.parseInt(a.get("--num-experts")));
    c.put("num_experts_per_tok", Integer.parseInt(a.get("--moe-router-topk")));
    c.put("n_shared_experts", shared / expertFfn);
    c.put("first_k_dense_replace", leadingDense(a.get("--moe-layer-freq"), layers));
    c.put("moe_layer_freq", 1);
    if (a.containsKey("--q-lora-rank")) {
      c.put("q_lora_rank", Integer.parseInt(a.get("--q-lora-rank")));
    } else {
      c.putNull("q_lora_rank");
    }
    c.put("kv_lora_rank", Integer.parseInt(a.get("--kv-lora-rank")));
    c.put("qk_nope_head_dim", Integer.parseInt(a.get("--qk-head-dim")));
    c.put("qk_rope_head_dim", Integer.parseInt(a.get("--qk-pos-emb-head-dim")));
    c.put("v_head_dim", Integer.parseInt(a.get("--v-head-dim")));
    c.put("num_nextn_predict_layers", Integer.parseInt(a.getOrDefault("--mtp-num-layers", "0")));
    c.put("vocab_size", vocab);
    c.put("max_position_embeddings", Integer.parseInt(a.get("--max-position-embeddings")));
    c.put("tie_word_embeddings", false);
    c.put("hidden_act", "silu");
    c.put("torch_dtype", "bfloat16");
    // The RoPE and norms as the file states them; the YaRN betas and original length are
    // MLATransformerConfig's defaults, which the file relies on (MegatronModelArgs).
    c.put("rope_theta", Integer.parseInt(a.get("--rotary-base")));
    c.put("rms_norm_eps", Double.parseDouble(a.get("--norm-epsilon")));
    ObjectNode yarn = c.putObject("rope_scaling");
    yarn.put("type", "yarn");
    yarn.put("factor", Double.parseDouble(a.get("--rotary-scaling-factor")));
    yarn.put("original_max_position_embeddings", 4096);
    yarn.put("beta_fast", 32);
    yarn.put("beta_slow", 1);
    yarn.put("mscale", Double.parseDouble(a.get("--mscale")));
    yarn.put("mscale_all_dim", Double.parseDouble(a.get("--mscale-all-dim")));
    return c.toPrettyString();
  }

  /**
   * The leading dense blocks of Megatron-LM's {@code --moe-layer-freq} list expression (shell
   * quotes and all), which must be dense blocks first and expert blocks after them, as a {@code
   * deepseek_v3} config states them.
   */
  private static int leadingDense(String pattern, int layers) {
    if (pattern == null) {
      return 0;
    }
    Matcher m = Pattern.compile("'\\[0\\]\\*(\\d+)\\+\\[1\\]\\*(\\d+)'").matcher(pattern);
    assertThat(m.matches()).as(pattern).isTrue();
    int dense = Integer.parseInt(m.group(1));
    assertThat(dense + Integer.parseInt(m.group(2))).isEqualTo(layers);
    return dense;
  }

  private static int vocab(String file) {
    Matcher m = VOCAB.matcher(file);
    assertThat(m.find()).isTrue();
    return Integer.parseInt(m.group(1));
  }

  /** simulate's flags for the config: DP = world / (TP x PP), the rest as the file says. */
  private static String[] simulateFlags(Map<String, String> a, Path config, String cluster) {
    int gpus = Arrays.stream(cluster.split(":")[0].split("x")).mapToInt(Integer::parseInt)
        .reduce(1, (x, y) -> x * y);
    int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
    int pp = Integer.parseInt(a.get("--pipeline-model-parallel-size"));
    assertThat(a).doesNotContainKey("--context-parallel-size");
    List<String> f = new ArrayList<>(List.of("simulate", "--model", config.toString(),
        "--seq", a.get("--seq-length"), "--cluster", cluster, "--tp", String.valueOf(tp),
        "--pp", String.valueOf(pp), "--dp", String.valueOf(gpus / (tp * pp)),
        "--ep", a.get("--expert-model-parallel-size"),
        "--etp", a.get("--expert-tensor-parallel-size"),
        "--micro-batch", a.get("--micro-batch-size"),
        "--global-batch", a.get("--global-batch-size"),
        "--recompute", a.getOrDefault("--recompute-granularity", "none")));
    if (a.containsKey("--decoder-first-pipeline-num-layers")) {
      f.addAll(List.of("--first-stage-layers", a.get("--decoder-first-pipeline-num-layers")));
    }
    if (a.containsKey("--decoder-last-pipeline-num-layers")) {
      f.addAll(List.of("--last-stage-layers", a.get("--decoder-last-pipeline-num-layers")));
    }
    if (a.containsKey("--sequence-parallel")) {
      f.add("--sequence-parallel");
    }
    if (a.containsKey("--use-distributed-optimizer")) {
      f.add("--distributed-optimizer");
    }
    return f.toArray(String[]::new);
  }

  private static String[] concat(List<String> a, List<String> b) {
    return ExportRoundTripCliTest.concat(a, b);
  }
}
