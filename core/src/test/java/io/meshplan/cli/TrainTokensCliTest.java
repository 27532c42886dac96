package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --train-tokens}, a training option added through the one training configuration
 * (issue 37's cost-of-change demonstration): {@code simulate} prices the run as its iterations
 * at the simulated iteration time, and every export sets its iterations to the same count.
 */
class TrainTokensCliTest {
  private static final List<String> LLAMA2 = List.of("--model", "llama2-7b", "--cluster",
      "2x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "4", "--micro-batch", "1",
      "--global-batch", "64", "--prices", "kernel", "--train-tokens", "1000000000");
  private static final List<String> LLAMA31 = List.of("--model", "llama3.1-8b", "--seq", "2048",
      "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "4", "--micro-batch", "1",
      "--global-batch", "16", "--zero-stage", "3", "--sequence-parallel", "--train-tokens",
      "1000000");

  @Test
  void simulatePricesTheRunAndMegatronTrainsItsIterations() {
    // 64 sequences x 1024 tokens = 65,536 tokens per iteration; 1e9 / 65,536 = 15,258.8, so
    // 15,259 iterations; at 0.4033 s each (the README's simulate of these flags) 6,154 s = 1.7 h.
    CliRun sim = CliRun.of(with(List.of("simulate"), LLAMA2));
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(sim.out()).contains("iteration 0.4033 s").contains("training run: 15259"
        + " iterations (--train-tokens over 65536 tokens per iteration), 1.7 h at this"
        + " iteration time\n");
    CliRun m = CliRun.of(with(List.of("export", "--to", "megatron"), LLAMA2));
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(m.out()).contains("  : \"${TRAIN_ITERS:=15259}\"")
        .contains("--train-iters \"$TRAIN_ITERS\"");
  }

  @Test
  void deepSpeedAndTorchtitanTrainTheSameIterations() {
    // 16 sequences x 2048 tokens = 32,768 per iteration; 1e6 / 32,768 = 30.5, so 31.
    List<String> ds = new ArrayList<>(LLAMA31);
    ds.set(1, "llama3-8b");
    ds.set(ds.indexOf("3"), "1");
    CliRun d = CliRun.of(with(List.of("export", "--to", "deepspeed"), ds));
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(d.out()).contains(": \"${TRAIN_ITERS:=31}\"")
        .contains("\"total_num_steps\" : ${TRAIN_ITERS}");
    CliRun t = CliRun.of(with(List.of("export", "--to", "torchtitan"), LLAMA31));
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("    config.training.steps = 31\n")
        .contains("dataloader, optimizer, checkpoint\n")
        .doesNotContain("optimizer, training.steps");
    CliRun toml = CliRun.of(with(List.of("export", "--to", "torchtitan", "--framework-version",
        "0.2.2"), LLAMA31));
    assertThat(toml.code()).as(toml.err()).isZero();
    assertThat(toml.out()).contains("\nsteps = 31\n").doesNotContain("steps = 1000")
        .contains("# placeholders to edit: [training] dataset,");
  }

  @Test
  void theLargestTokenCountRoundsUpAndALargerOneIsRefused() {
    // 10^16 - 1 = 65,536 x 152,587,890,624 + 65,535 (10^16 is 2^16 x 5^16), so the run takes
    // 152,587,890,625 iterations of 65,536 tokens: rounded up.
    List<String> flags = new ArrayList<>(LLAMA2.subList(0, LLAMA2.size() - 2));
    flags.addAll(List.of("--train-tokens", "9999999999999999"));
    CliRun sim = CliRun.of(with(List.of("simulate"), flags));
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(sim.out()).contains("training run: 152587890625 iterations");
    CliRun m = CliRun.of(with(List.of("export", "--to", "megatron"), flags));
    assertThat(m.out()).contains("  : \"${TRAIN_ITERS:=152587890625}\"");
    // Past 10^16 tokens, up to 2^63 - 1, is refused by every command that reads the flag.
    for (String past : new String[] {"10000000000000001", Long.toString(Long.MAX_VALUE)}) {
      flags.set(flags.size() - 1, past);
      for (List<String> head : List.of(List.of("simulate"), List.of("export", "--to",
          "megatron"))) {
        CliRun.of(with(head, flags)).refusedInOneLine(ExitCodes.BAD_INPUT, "meshplan: error: "
            + "--train-tokens must be a whole number from 1 to 10,000,000,000,000,000 tokens, got "
            + past);
      }
    }
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb", "--train-tokens",
        "10000000000000001").refusedInOneLine(ExitCodes.BAD_INPUT, "--train-tokens must be a "
        + "whole number from 1 to 10,000,000,000,000,000 tokens");
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb", "--train-iterations",
        "10000000001").refusedInOneLine(ExitCodes.BAD_INPUT, "--train-iterations must be a "
        + "whole number from 1 to 10,000,000,000 iterations, got 10000000001");
  }

  @Test
  void withoutItTheFilesAskForTheIterationsAsBefore() {
    List<String> flags = new ArrayList<>(LLAMA2.subList(0, LLAMA2.size() - 2));
    CliRun m = CliRun.of(with(List.of("export", "--to", "megatron"), flags));
    assertThat(m.out()).contains("${TRAIN_ITERS:?set TRAIN_ITERS to the number of training"
        + " iterations}");
    flags.addAll(List.of("--train-tokens", "0"));
    CliRun.of(with(List.of("simulate"), flags)).refusedInOneLine(ExitCodes.BAD_INPUT,
        "meshplan: error: --train-tokens must be a whole number from 1 to "
        + "10,000,000,000,000,000 tokens, got 0");
    CliRun.of(with(List.of("export", "--to", "megatron"), flags)).refusedInOneLine(
        ExitCodes.BAD_INPUT, "--train-tokens must be a whole number from 1 to");
  }

  private static String[] with(List<String> head, List<String> tail) {
    List<String> all = new ArrayList<>(head);
    all.addAll(tail);
    return all.toArray(String[]::new);
  }
}
