package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.export.TorchtitanPythonFile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --pipeline-model-parallel-layout} on simulate and export. */
class PipelineLayoutCliTest {
  /** DeepSeek-V3's config cut to 5 blocks (1 dense, 4 of experts) and its prediction module. */
  private static final String[] DEEPSEEK = {"--model", "core/src/test/resources/hf/deepseek-v3.json",
      "--layers", "5", "--hidden", "1024", "--heads", "8", "--seq", "1024", "--cluster",
      "1x8:h100-80gb", "--tp", "1", "--pp", "2", "--dp", "4", "--ep", "4", "--micro-batch", "1",
      "--global-batch", "16"};
  private static final String LAYOUT = "--pipeline-model-parallel-layout";

  private static CliRun run(String command, String... more) {
    List<String> a = new ArrayList<>(List.of(command));
    a.addAll(Arrays.asList(DEEPSEEK));
    a.addAll(Arrays.asList(more));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void aLastChunkOfTheModuleAndTheLossAlone() {
    // Chunks Et | tt | tt | mL over 2 stages: stage 0 runs chunks 0 and 2 (blocks 0 and 3-4),
    // stage 1 chunks 1 and 3 (blocks 1-2, then the module and the loss with no block).
    CliRun r = run("simulate", LAYOUT, "Et|tt|tt|mL");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("interleaved-1f1b(v=2)",
        "layers per stage: 3 2 (blocks 0-0,3-4 on stage 0, 1-2 on stage 1)");
  }

  @Test
  void megatronExportWritesTheLayoutAloneAndResimulatesToTheSameIteration() {
    CliRun sim = run("simulate", LAYOUT, "Et|tt|tt|mL");
    CliRun r = run("export", "--to", "megatron", LAYOUT, "Et|tt|tt|mL");
    assertThat(r.code()).as(r.err()).isZero();
    // arguments.py: no other virtual-stage argument beside the layout.
    assertThat(r.out()).contains("  --pipeline-model-parallel-layout 'Et|tt|tt|mL'\n")
        .doesNotContain("--num-virtual-stages-per-pipeline-rank",
            "--num-layers-per-virtual-pipeline-stage");
    String layout = r.out().lines().filter(l -> l.contains(LAYOUT)).findFirst().orElseThrow()
        .replaceAll(".*'(.*)'.*", "$1");
    CliRun again = run("simulate", LAYOUT, layout);
    assertThat(ExportRoundTripCliTest.line(again.out()))
        .isEqualTo(ExportRoundTripCliTest.line(sim.out()));
  }

  @Test
  void torchtitanNamesAnEmbeddingOnlyChunk() {
    CliRun r = CliRun.of("export", "--to", "torchtitan", "--model", "llama3-8b", "--seq", "2048",
        "--cluster", "2x8:h100-80gb", "--tp", "8", "--pp", "2", "--dp", "1", "--micro-batch",
        "1", "--global-batch", "8", "--sequence-parallel", LAYOUT, "E|t*16|t*16|L");
    assertThat(r.code()).as(r.err()).isZero();
    TorchtitanPythonFile t = TorchtitanPythonFile.parse(r.out());
    assertThat(List.of(t.layersOf(0), t.layersOf(1), t.layersOf(2), t.layersOf(3)))
        .containsExactly(0, 16, 16, 0);
  }

  @Test
  void badLayoutsEndInOneLineWithExitTwo() {
    run("simulate", LAYOUT, "Et|tt|tt|mL", "--vpp", "4").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--vpp 4 disagrees with --pipeline-model-parallel-layout, whose 4 chunks over --pp 2"
            + " give 2");
    run("simulate", LAYOUT, "Et|tt|tt|mL", "--account-for-loss-in-pipeline-split")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "cannot be given with");
    run("simulate", LAYOUT, "Et|tt|tt|L").refusedInOneLine(ExitCodes.BAD_INPUT,
        "places 0 prediction modules m, but the model trains 1");
    run("simulate", LAYOUT, "Et|ttt|tt|mL").refusedInOneLine(ExitCodes.BAD_INPUT,
        "places 6 transformer layers, but the model has 5");
    run("simulate", LAYOUT, "Et|tt||ttmL").refusedInOneLine(ExitCodes.BAD_INPUT,
        "empty chunk 2");
    run("simulate", LAYOUT, "E(t|)*99999999999t").refusedInOneLine(ExitCodes.BAD_INPUT,
        "more than");
    run("simulate", LAYOUT, "Et|tt|tt|mL", "--schedule", "gpipe").refusedInOneLine(
        ExitCodes.BAD_INPUT, "--schedule gpipe has no virtual stages");
    run("export", "--to", "megatron", LAYOUT, "Et|tt|tt|mQ")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "has 'Q', which is not a layer");
  }
}
