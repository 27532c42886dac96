package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.plan.StagePlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The mixture-of-experts models at the command line: torchtitan (but for its Qwen3 and
 * DeepSeek-V3 flavors on main) and DeepSpeed export refuse their experts, and Megatron-LM export refuses GPT-OSS's
 * sinks, expert biases and window (exit 3, no
 * nearest configuration), from flags and from a plan; shard's LLaMA graph refuses them; configs
 * with mixed dense and MoE layers are refused in one line. Megatron-LM export of Mixtral and
 * Qwen3-MoE is {@code ExpertContextExportCliTest}'s, of DeepSeek-V3 {@code
 * DeepseekExportCliTest}'s; torchtitan's v0.2.2 export refuses DeepSeek-V3 and names main's,
 * which {@code TorchtitanDeepseekCliTest} runs.
 */
class MoeModelsCliTest {
  private static final String HF = "core/src/test/resources/hf/";

  @ParameterizedTest
  @CsvSource({"megatron, gpt-oss-20b, 'attention sinks, expert biases', none",
      "torchtitan, mixtral-8x7b, a mixture of 8 experts, megatron",
      "torchtitan, gpt-oss-20b, 'a mixture of 32 experts, head_dim 64, attention sinks', titan",
      "deepspeed, gpt-oss-20b, 'a mixture of 32 experts, head_dim 64, attention sinks', none"})
  void exportRefusesAnMoeModel(String target, String model, String details, String tail) {
    CliRun r = CliRun.of("export", "--to", target, "--model", model, "--cluster",
        "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--global-batch", "64",
        "--micro-batch", "1");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    String name = model.startsWith(HF) ? "qwen3-30b-a3b" : model;
    assertThat(r.err().strip()).isEqualTo("meshplan: infeasible: " + target + " cannot express "
        + "this configuration: " + target + " export writes LLaMA- and GPT-style models"
        + (target.equals("megatron")
            ? " and Mixtral-, Qwen3-MoE- and DeepSeek-V3-style experts"
            : target.equals("torchtitan")
                ? " and torchtitan's Qwen3-MoE and DeepSeek-V3 flavors" : "") + "; "
        + name
        + " has " + details + ", which meshplan does not write" + (tail.equals("none") ? ""
        : "; torchtitan's other mixture-of-experts models (gpt_oss, kimi_k2_7) are"
            + " not written by meshplan, and torchtitan has no Mixtral model")
        + (tail.equals("megatron") ? "; its Megatron-LM export writes this model" : ""));
    assertThat(r.out().strip()).isEqualTo("no configuration " + target
        + " can express is near it");
  }

  /**
   * The Qwen3-30B-A3B Hugging Face config is torchtitan's qwen3 flavor 30B-A3B: its main-branch
   * export writes it; the v0.2.2 TOML export refuses it in one line and points to main.
   */
  @Test
  void torchtitanWritesTheQwen3ConfigForMainOnly() {
    List<String> flags = List.of("--model", HF + "qwen3-30b-a3b.json", "--seq", "4096",
        "--cluster", "2x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "16", "--ep", "8", "--zero-stage",
        "3", "--global-batch", "64", "--micro-batch", "1", "--recompute", "full");
    CliRun main = CliRun.of(ExportRoundTripCliTest.concat(List.of("export", "--to",
        "torchtitan"), flags));
    assertThat(main.code()).as(main.err()).isZero();
    assertThat(main.out()).contains("    config = qwen3_30b_a3b()\n",
        "    config.model_spec = model_registry(\"30B-A3B\")\n",
        "    config.parallelism.expert_parallel_degree = 8\n");
    CliRun old = CliRun.of(ExportRoundTripCliTest.concat(List.of("export", "--to",
        "torchtitan", "--framework-version", "0.2.2"), flags));
    assertThat(old.code()).as(old.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(old.err().strip()).isEqualTo("meshplan: infeasible: torchtitan cannot express"
        + " this configuration: torchtitan export writes LLaMA- and GPT-style models;"
        + " qwen3-30b-a3b has a mixture of 128 experts, head_dim 128, q/k norms, which meshplan"
        + " does not write for torchtitan v0.2.2; its export for torchtitan's main branch writes"
        + " this Qwen3 flavor");
  }

  /**
   * DeepSeek-V3 is torchtitan's deepseek_v3 flavor 671B: main's export writes it from its recipe;
   * the v0.2.2 TOML export refuses it in one line and points to main.
   */
  @Test
  void torchtitanWritesDeepseekV3ForMainOnly() {
    // 256 experts 64 ways within dp_shard 1024: 1 x 1024 x 1 x 1 x 1 = 1024 GPUs
    // (parallel_dims.py:182), 26.6 GiB per GPU as simulated.
    List<String> flags = List.of("--model", "deepseek-v3", "--cluster",
        "128x8:h100-80gb:ib-ndr400", "--tp", "1", "--pp", "1", "--dp", "1024", "--ep", "64",
        "--zero-stage", "3", "--global-batch", "4096", "--micro-batch", "1", "--recompute",
        "full");
    CliRun main = CliRun.of(ExportRoundTripCliTest.concat(List.of("export", "--to",
        "torchtitan"), flags));
    assertThat(main.code()).as(main.err()).isZero();
    assertThat(main.out()).contains("    config = deepseek_v3_671b()\n",
        "    config.model_spec = model_registry(\"671B\", attn_backend=\"flex\","
            + " num_mtp_layers=1)\n",
        "    config.parallelism.expert_parallel_degree = 64\n");
    CliRun old = CliRun.of(ExportRoundTripCliTest.concat(List.of("export", "--to",
        "torchtitan", "--framework-version", "0.2.2"), flags));
    assertThat(old.code()).as(old.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(old.err().strip()).isEqualTo("meshplan: infeasible: torchtitan cannot express"
        + " this configuration: torchtitan export writes LLaMA- and GPT-style models;"
        + " deepseek-v3 has a mixture of 256 experts, multi-head latent attention, multi-token"
        + " prediction, which meshplan does not write for torchtitan v0.2.2; its export for"
        + " torchtitan's main branch writes this DeepSeek-V3 flavor");
  }

  /**
   * A saved plan of an MoE model keeps its experts, so exporting it to a framework that does not
   * write them is refused the same way.
   */
  @Test
  void exportRefusesTheSavedPlanOfAnMoeModel(@TempDir Path dir) throws IOException {
    // mixtral-8x7b's 32 layers on two stages of one node each, 8 GPUs as 2 x 4.
    List<StagePlan> stages = List.of(
        new StagePlan(0, 15, 1, 8, 0, 2, 4, Recompute.FULL, true, 1, true, 0.1, 0.2, 1e9,
            List.of()),
        new StagePlan(16, 31, 1, 8, 8, 2, 4, Recompute.FULL, true, 1, true, 0.1, 0.2, 1e9,
            List.of()));
    PipelinePlan p = new PipelinePlan(Presets.get("mixtral-8x7b"), "2x8:h100-80gb:ib-ndr400",
        64, 2, 32, 1, stages, new PipelinePlan.Prediction(10, 1000, 100, 0.3, 5e10));
    Path plan = dir.resolve("plan.json");
    Files.writeString(plan, PlanJson.write(p));
    CliRun r = CliRun.of("export", "--to", "deepspeed", "--plan", plan.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().strip()).isEqualTo("meshplan: infeasible: deepspeed cannot express this "
        + "configuration: deepspeed export writes LLaMA- and GPT-style models; mixtral-8x7b has "
        + "a mixture of 8 experts, which meshplan does not write");
  }

  @Test
  void shardRefusesAnMoeModel() {
    CliRun.of("shard", "--model", "mixtral-8x7b", "--layers", "1", "--mesh", "2x2", "--alpha",
        "1,1", "--beta", "1,0.01", "--memory", "1000MB").refusedInOneLine(2,
        "meshplan: error: --model mixtral-8x7b: shard builds LLaMA's forward graph, and this "
            + "model has a mixture of 8 experts; it is planned by meshplan plan");
  }

  /** Configs without a routed block, and other families, end in one line and exit 2. */
  @Test
  void unsupportedMoeConfigsAreOneLineAndExit2(@TempDir Path dir) throws IOException {
    String qwen = Files.readString(Path.of(HF + "qwen3-30b-a3b.json"));
    Path step = dir.resolve("step.json");
    Files.writeString(step, qwen.replace("\"decoder_sparse_step\": 1",
        "\"decoder_sparse_step\": 64"));
    CliRun.of("plan", "--model", step.toString(), "--cluster", "1x8:h100-80gb")
        .refusedInOneLine(2, "step.json: no block routes to experts (decoder_sparse_step 64, "
            + "mlp_only_layers [], 48 blocks); without experts, use model_type qwen3");
    Path phimoe = dir.resolve("phimoe.json");
    Files.writeString(phimoe, qwen.replace("\"qwen3_moe\"", "\"phimoe\""));
    CliRun.of("plan", "--model", phimoe.toString(), "--cluster", "1x8:h100-80gb")
        .refusedInOneLine(2, "phimoe.json: model_type 'phimoe' is not supported; "
            + "supported: " + String.join(", ", io.meshplan.model.HfConfigReader.SUPPORTED));
    Path topK = dir.resolve("topk.json");
    Files.writeString(topK, qwen.replace("\"num_experts_per_tok\": 8",
        "\"num_experts_per_tok\": 129"));
    CliRun.of("plan", "--model", topK.toString(), "--cluster", "1x8:h100-80gb")
        .refusedInOneLine(2, "topk.json: field 'num_experts_per_tok' 129 is more than the 128 "
            + "experts (num_experts)");
  }
}
