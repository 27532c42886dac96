package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.export.TorchtitanPythonFile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --account-for-embedding-in-pipeline-split} and {@code --account-for-loss-in-pipeline-split}
 * on simulate and export, with Megatron-Core's rules ({@code get_num_layers_to_build} and {@code
 * TransformerConfig.__post_init__} at d98e8a6) restated as cases.
 */
class SplitAccountingCliTest {
  /** A GPT on 4 stages (tp 1, dp 2), 8 microbatches of one sequence; layers and vpp given. */
  private static final String[] SHAPE = {"--model", "gpt", "--hidden", "512", "--heads", "8",
      "--seq", "256", "--cluster", "2x4:a100-40gb", "--tp", "1", "--pp", "4", "--dp", "2",
      "--micro-batch", "1", "--global-batch", "16"};
  private static final String EMBEDDING = "--account-for-embedding-in-pipeline-split";
  private static final String LOSS = "--account-for-loss-in-pipeline-split";

  /** 14 layers in 2 chunks a stage. */
  private static CliRun run(String command, String... more) {
    return run(command, 14, 2, more);
  }

  private static CliRun run(String command, int layers, int vpp, String... more) {
    List<String> a = new ArrayList<>(List.of(command));
    a.addAll(Arrays.asList(SHAPE));
    a.addAll(List.of("--layers", String.valueOf(layers), "--vpp", String.valueOf(vpp)));
    a.addAll(Arrays.asList(more));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void bothCountedTakeALayerFromTheFirstAndLastChunk() {
    CliRun r = run("simulate", EMBEDDING, LOSS);
    assertThat(r.code()).as(r.err()).isZero();
    // (14 + 2) / 4 stages = 4 a stage, 2 a chunk; chunk 0 (stage 0) and chunk 7 (stage 3) hold
    // one fewer: chunks 1 2 2 2 | 2 2 2 1, so stages hold 1+2, 2+2, 2+2, 2+1.
    assertThat(r.out()).contains("layers per stage: 3 4 4 3");
  }

  @Test
  void theEmbeddingAloneTakesItsLayerFromTheFirstChunk() {
    // 15 layers + 1 = 16: chunks 1 2 2 2 | 2 2 2 2, stages 1+2, 2+2, 2+2, 2+2.
    CliRun r = run("simulate", 15, 2, EMBEDDING);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("layers per stage: 3 4 4 4");
  }

  @Test
  void megatronsRulesRefuseInOneLine() {
    // 14 + 1 = 15 layers are not divisible by 4 stages.
    run("simulate", EMBEDDING).refusedInOneLine(ExitCodes.BAD_INPUT,
        "the model's 14 layers + 1 counted by " + EMBEDDING + " = 15 are not divisible by "
            + "--pp 4");
    // 18 + 2 = 20 layers, 5 a stage: not divisible by 2 chunks.
    run("simulate", 18, 2, EMBEDDING, LOSS).refusedInOneLine(ExitCodes.BAD_INPUT,
        "the 5 layers per pipeline stage counted by " + EMBEDDING + " and " + LOSS
            + " are not divisible by --vpp 2");
    // 6 + 2 = 8 layers, 1 a chunk: the first and last chunk would hold none.
    run("simulate", 6, 2, EMBEDDING, LOSS).refusedInOneLine(ExitCodes.BAD_INPUT,
        "leave a model chunk with no transformer layer");
    // Megatron-Core: "cannot be set at the same time" as the stated first and last stages.
    run("simulate", 14, 1, "--first-stage-layers", "2", LOSS)
        .refusedInOneLine(ExitCodes.BAD_INPUT, LOSS + " cannot be given with "
            + "--first-stage-layers or --last-stage-layers");
  }

  @Test
  void megatronExportWritesTheFlagsAndResimulatesToTheSameIteration() {
    CliRun sim = run("simulate", EMBEDDING, LOSS);
    CliRun r = run("export", "--to", "megatron", EMBEDDING, LOSS);
    assertThat(r.code()).as(r.err()).isZero();
    // With a stage split other than the even one, arguments.py takes the chunk count as
    // --num-virtual-stages-per-pipeline-rank.
    assertThat(r.out()).contains("  --num-virtual-stages-per-pipeline-rank 2\n",
        "  " + EMBEDDING + "\n", "  " + LOSS + "\n");
    assertThat(r.out()).doesNotContain("--num-layers-per-virtual-pipeline-stage",
        "--decoder-first-pipeline-num-layers");
    // The flags read back from the script simulate to the same iteration.
    List<String> back = new ArrayList<>();
    for (String flag : new String[] {EMBEDDING, LOSS}) {
      if (r.out().contains("  " + flag + "\n")) {
        back.add(flag);
      }
    }
    CliRun again = run("simulate", back.toArray(String[]::new));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(ExportRoundTripCliTest.line(again.out()))
        .isEqualTo(ExportRoundTripCliTest.line(sim.out()));
  }

  @Test
  void torchtitanExportNamesTheModulesOfEachChunk() {
    CliRun r = CliRun.of("export", "--to", "torchtitan", "--model", "llama3-8b", "--seq", "2048",
        "--cluster", "3x8:h100-80gb", "--tp", "8", "--pp", "3", "--dp", "1", "--micro-batch", "1",
        "--global-batch", "6", "--sequence-parallel", EMBEDDING);
    assertThat(r.code()).as(r.err()).isZero();
    TorchtitanPythonFile t = TorchtitanPythonFile.parse(r.out());
    // (32 + 1) / 3 stages = 11 each, the first one fewer: 10 11 11, the embedding with the first.
    assertThat(List.of(t.layersOf(0), t.layersOf(1), t.layersOf(2))).containsExactly(10, 11, 11);
    assertThat(r.out()).contains("[\"tok_embeddings\"] + _layers(0, 10)");
  }

  @Test
  void deepSpeedRefusesAStatedSplit() {
    CliRun r = run("export", 14, 1, "--to", "deepspeed", EMBEDDING, LOSS);
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().strip().lines()).hasSize(1);
    assertThat(r.err()).contains("no per-stage layer count");
  }
}
