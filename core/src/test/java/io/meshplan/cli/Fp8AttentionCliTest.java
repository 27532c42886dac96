package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --attention cudnn-fp8} on the command line: priced under FP8 training, refused else. */
class Fp8AttentionCliTest {
  private static final List<String> RUN = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "2x4:gb200", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "16", "--seq", "8192", "--prices", "kernel");

  /**
   * On a GB200 at 8,192 tokens FP8 attention runs 2,047 / 1,574 forward and 1,454 / 1,332
   * backward of bf16's speed (per-tensor FP8, cuDNN's GB200 run): the iteration is faster.
   */
  @Test
  void fp8AttentionIsPricedUnderTheFp8Recipe() {
    CliRun bf16 = CliRun.of(RUN, "--dtype", "fp8", "--fp8-recipe", "tensorwise", "--attention",
        "cudnn");
    CliRun fp8 = CliRun.of(RUN, "--dtype", "fp8", "--fp8-recipe", "tensorwise", "--attention",
        "cudnn-fp8");
    assertThat(bf16.code()).as(bf16.err()).isZero();
    assertThat(fp8.code()).as(fp8.err()).isZero();
    assertThat(seconds(fp8.out())).isLessThan(seconds(bf16.out()));
  }

  @Test
  void itNeedsTheFp8RecipeAndAMeasuredGpu() {
    CliRun.of(RUN, "--attention", "cudnn-fp8").refusedInOneLine(2, "cudnn-fp8 attention runs "
        + "under the FP8 recipe (Transformer Engine's fp8_dot_product_attention needs its FP8 "
        + "autocast); the training precision is bf16: give --dtype fp8, or --attention cudnn");
    List<String> a100 = new java.util.ArrayList<>(RUN);
    a100.set(a100.indexOf("2x4:gb200"), "1x8:a100-80gb");
    CliRun.of(a100, "--attention", "cudnn-fp8").refusedInOneLine(2, "no published cudnn-fp8 "
        + "attention benchmark on ampere");
  }

  private static double seconds(String out) {
    String line = out.lines().filter(l -> l.startsWith("iteration ")).findFirst().orElseThrow();
    return Double.parseDouble(line.split(" ")[1]);
  }
}
