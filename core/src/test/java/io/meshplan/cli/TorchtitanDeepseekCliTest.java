package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.export.TorchtitanPythonFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DeepSeek-V3 through torchtitan's main-branch export: its 671B flavor (main at b5bcd76, {@code
 * models/deepseek_v3/__init__.py:533-605}) from the recipe {@code deepseek_v3_671b}, with its
 * multi-token prediction module ({@code num_mtp_layers=1} and {@code MTPLoss}) when the model has
 * one, expert parallel, simulated, exported, read back into {@code simulate} flags and
 * re-simulated to the same iteration. With the module, pipeline and context parallelism are
 * refused ({@code mtp.py:197-206}, exit 3); without it (the Hugging Face config with {@code
 * num_nextn_predict_layers} 0) the pipeline is written.
 */
class TorchtitanDeepseekCliTest {
  private static final String CLUSTER = "128x8:h100-80gb:ib-ndr400";

  /** FSDP over 1,024 GPUs, the 256 experts 64 ways: 26.6 GiB per GPU as simulated. */
  private static final List<String> FSDP = List.of("--model", "deepseek-v3", "--seq", "4096",
      "--cluster", CLUSTER, "--tp", "1", "--pp", "1", "--dp", "1024", "--ep", "64",
      "--zero-stage", "3", "--global-batch", "4096", "--micro-batch", "1", "--recompute",
      "full");

  /** 8 stages of 5 + 7 x 8 = 61 blocks, dp 128, EP 64 within dp_shard 128. */
  private static List<String> pipeline(String model) {
    return List.of("--model", model, "--seq", "4096", "--cluster", CLUSTER, "--tp", "1",
        "--pp", "8", "--first-stage-layers", "5", "--dp", "128", "--ep", "64",
        "--distributed-optimizer", "--global-batch", "4096", "--micro-batch", "1",
        "--recompute", "full");
  }

  @Test
  void writesTheFlavorWithItsModuleAndResimulatesToTheSameIteration() {
    CliRun sim = CliRun.of(concat(List.of("simulate"), FSDP));
    assertThat(sim.code()).as(sim.err()).isZero();
    CliRun ex = CliRun.of(concat(List.of("export", "--to", "torchtitan"), FSDP));
    assertThat(ex.code()).as(ex.err()).isZero();
    TorchtitanPythonFile f = TorchtitanPythonFile.parse(ex.out());
    assertThat(f.recipe()).isEqualTo("deepseek_v3_671b");
    assertThat(f.flavor()).isEqualTo("671B");
    assertThat(f.text("model_spec")).isEqualTo(
        "model_registry(\"671B\", attn_backend=\"flex\", num_mtp_layers=1)");
    assertThat(f.text("loss")).isEqualTo(
        "MTPLoss.Config(global_vocab_size=decoder_vocab_size(config.model_spec))");
    // parallel_dims.py:182: 1 x 1024 x 1 x 1 x 1 = 1024 GPUs; EP 64 divides dp_shard 1024 and
    // the 256 experts, leaving expert FSDP 1024 / 64 = 16.
    assertThat(f.integer("parallelism.data_parallel_shard_degree")).isEqualTo(1024);
    assertThat(f.integer("parallelism.expert_parallel_degree")).isEqualTo(64);
    // 4096 sequences x 4096 tokens = 16,777,216 per step, one sequence per microbatch.
    assertThat(f.integer("training.num_tokens_per_train_step")).isEqualTo(16_777_216);
    assertThat(ex.out()).contains("from torchtitan.models.deepseek_v3.mtp import MTPLoss\n",
        "# experts: 256, 8 per token, dropless; expert parallel 64 within dp_shard x cp x tp ="
            + " 1024 GPUs, expert FSDP 16\n",
        "# multi-token prediction: 1 module after the last block, trained with MTPLoss\n");
    CliRun again = CliRun.of(TorchtitanExpertContextCliTest.simulateArgs(f, CLUSTER));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(line(again.out())).isEqualTo(line(sim.out()));
  }

  @Test
  void refusesThePipelineAndContextSplitOfTheModule() {
    CliRun pp = CliRun.of(concat(List.of("export", "--to", "torchtitan"),
        pipeline("deepseek-v3")));
    assertThat(pp.code()).as(pp.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(pp.err()).isEqualTo("meshplan: infeasible: torchtitan cannot express this"
        + " configuration: torchtitan main@b5bcd76 (2026-08-21) does not support multi-token"
        + " prediction with pipeline parallelism (models/deepseek_v3/mtp.py:197-201);"
        + " deepseek-v3 has 1 module and pipeline degree 8: use --pp 1 --cp 1, or a model"
        + " without multi-token prediction\n");
    assertThat(pp.out().strip()).isEqualTo("no configuration torchtitan can express is near it");
    List<String> cp = new ArrayList<>(FSDP);
    cp.set(cp.indexOf("1024"), "512");
    cp.addAll(List.of("--cp", "2", "--cp-comm-type", "all_gather"));
    CliRun ring = CliRun.of(concat(List.of("export", "--to", "torchtitan"), cp));
    assertThat(ring.code()).as(ring.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(ring.err().lines()).hasSize(1);
    assertThat(ring.err()).contains("multi-token prediction with context parallelism"
        + " (models/deepseek_v3/mtp.py:202-206); deepseek-v3 has 1 module and context degree 2");
  }

  @Test
  void writesThePipelineOfTheModelWithoutItsModule(@TempDir Path dir) throws IOException {
    Path json = dir.resolve("deepseek-v3-no-mtp.json");
    String hf = Files.readString(Path.of("core/src/test/resources/hf/deepseek-v3.json"));
    assertThat(hf).contains("\"num_nextn_predict_layers\": 1");
    Files.writeString(json, hf.replace("\"num_nextn_predict_layers\": 1",
        "\"num_nextn_predict_layers\": 0"));
    List<String> flags = pipeline(json.toString());
    CliRun sim = CliRun.of(concat(List.of("simulate"), flags));
    assertThat(sim.code()).as(sim.err()).isZero();
    CliRun ex = CliRun.of(concat(List.of("export", "--to", "torchtitan"), flags));
    assertThat(ex.code()).as(ex.err()).isZero();
    TorchtitanPythonFile f = TorchtitanPythonFile.parse(ex.out());
    assertThat(f.text("model_spec")).isEqualTo("model_registry(\"671B\", attn_backend=\"flex\")");
    assertThat(f.fields()).doesNotContainKey("loss");
    assertThat(ex.out()).doesNotContain("MTPLoss");
    // The explicit split: 5 blocks, then 7 stages of (61 - 5) / 7 = 8.
    assertThat(f.parts()).hasSize(8);
    assertThat(f.layersOf(0)).isEqualTo(5);
    assertThat(f.layersOf(7)).isEqualTo(8);
    assertThat(f.text("parallelism.pipeline_parallel_schedule")).isEqualTo("1F1B");
    List<String> back = new ArrayList<>(Arrays.asList(
        TorchtitanExpertContextCliTest.simulateArgs(f, CLUSTER)));
    back.set(back.indexOf("--model") + 1, json.toString());
    back.addAll(List.of("--first-stage-layers", String.valueOf(f.layersOf(0))));
    CliRun again = CliRun.of(back.toArray(String[]::new));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(line(again.out())).isEqualTo(line(sim.out()));
  }

  private static String[] concat(List<String> a, List<String> b) {
    return ExportRoundTripCliTest.concat(a, b);
  }

  private static String line(String text) {
    return ExportRoundTripCliTest.line(text);
  }
}
