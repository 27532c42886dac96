package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code --first-stage-layers} and {@code --last-stage-layers} on simulate and export. */
class UnevenStagesCliTest {
  /** BLOOM's shape: 70 layers on 12 stages (tp 1, dp 1), 24 microbatches of one sequence. */
  private static final String[] BLOOM_SHAPE = {"--model", "gpt", "--layers", "70", "--hidden",
      "512", "--heads", "8", "--seq", "256", "--cluster", "3x4:a100-40gb", "--tp", "1", "--pp",
      "12", "--dp", "1", "--micro-batch", "1", "--global-batch", "24"};

  private static CliRun run(String command, String... more) {
    String[] args = new String[1 + BLOOM_SHAPE.length + more.length];
    args[0] = command;
    System.arraycopy(BLOOM_SHAPE, 0, args, 1, BLOOM_SHAPE.length);
    System.arraycopy(more, 0, args, 1 + BLOOM_SHAPE.length, more.length);
    return CliRun.of(args);
  }

  @Test
  void seventyLayersOnTwelveStagesSimulateAsStated() {
    CliRun r = run("simulate", "--first-stage-layers", "5", "--last-stage-layers", "5");
    assertThat(r.code()).as(r.err()).isZero();
    // 70 - 5 - 5 = 60 over the 10 middle stages: 6 each; blocks 0-4 first, 65-69 last.
    assertThat(r.out()).contains("12 stages",
        "layers per stage: 5 6 6 6 6 6 6 6 6 6 6 5 (blocks 0-4 on stage 0, 65-69 on stage 11)");
    // The even split needs 70 divisible by 12, which it is not.
    run("simulate").refusedInOneLine(ExitCodes.BAD_INPUT,
        "unless --first-stage-layers or --last-stage-layers are given");
  }

  @Test
  void eitherCountMayBeStatedAlone() {
    // 70 - 4 - 6 = 60 over the 10 middle stages.
    String out = run("simulate", "--first-stage-layers", "4", "--last-stage-layers", "6").out();
    assertThat(out).contains("layers per stage: 4 6 6 6 6 6 6 6 6 6 6 6");
    // Only the first stated: (70 - 4) / 11 = 6 on every other stage, the last included.
    assertThat(run("simulate", "--first-stage-layers", "4").out())
        .contains("layers per stage: 4 6 6 6 6 6 6 6 6 6 6 6");
  }

  @Test
  void badCountsEndInOneLineWithExitTwo() {
    run("simulate", "--first-stage-layers", "71").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--first-stage-layers 71 exceed the model's 70 layers");
    run("simulate", "--last-stage-layers", "0").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--last-stage-layers must be at least 1, got 0");
    run("simulate", "--first-stage-layers", "6", "--last-stage-layers", "5")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "the 59 layers left after --first-stage-layers 6"
            + " + --last-stage-layers 5 are not divisible by the other 10 pipeline stages");
    run("export", "--to", "megatron", "--first-stage-layers", "71")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "--first-stage-layers 71 exceed");
  }

  @Test
  void exportWritesMegatronCoresFlags() {
    CliRun r = run("export", "--to", "megatron", "--first-stage-layers", "5",
        "--last-stage-layers", "5");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("  --pipeline-model-parallel-size 12\n"
        + "  --decoder-first-pipeline-num-layers 5\n  --decoder-last-pipeline-num-layers 5\n");
  }
}
