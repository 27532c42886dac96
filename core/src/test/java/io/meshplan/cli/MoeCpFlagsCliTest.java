package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Expert and context parallelism flags that the model or the sequence cannot take: one line,
 * exit 2, no stack trace.
 */
class MoeCpFlagsCliTest {
  private static CliRun simulate(String model, String seq, String... more) {
    String[] base = {"simulate", "--model", model, "--seq", seq, "--cluster",
        "2x8:h100-80gb:ib-ndr400", "--micro-batch", "1",
        "--global-batch", "64"};
    String[] all = new String[base.length + more.length];
    System.arraycopy(base, 0, all, 0, base.length);
    System.arraycopy(more, 0, all, base.length, more.length);
    return CliRun.of(all);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      // Mixtral has 8 experts: 3 does not divide them.
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --ep 3|--ep 3 does not divide the model's 8 experts",
      // EP 16 x ETP 1 does not divide a stage of 8 GPUs (pp 2 x dp 8).
      "mixtral-8x7b|4096|--tp 1 --pp 2 --dp 8 --ep 8 --etp 2|--ep 8 x --etp 2 does not divide the 8 GPUs of a pipeline stage (--tp x --dp)",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 16 --ep 2|expert parallelism needs a mixture-of-experts model",
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --moe-capacity-factor 0|--moe-capacity-factor must be a number"
          + " from 1/1024 to 1024",
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --moe-imbalance 0.5|--moe-imbalance must be a number of at"
          + " least 1 and at most",
      // 2^-1074 drops every token and 1e308 none: neither is a recipe.
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --moe-capacity-factor 4.9e-324|--moe-capacity-factor "
          + "must be a number from 1/1024 to 1024",
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --moe-capacity-factor 1e308|--moe-capacity-factor "
          + "must be a number from 1/1024 to 1024",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 16 --moe-capacity-factor 1.25|--moe-capacity-factor needs a"
          + " mixture-of-experts model",
      // 4098 tokens do not split into 2 x 2 = 4 equal chunks.
      "llama3-8b|4098|--pp 1 --tp 1 --dp 8 --cp 2|--cp 2 needs the sequence of 4098 tokens to split"
          + " into 2 x 2 = 4 equal chunks",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 8 --cp 2 --attention unfused|context parallelism runs fused attention",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 8 --cp 2 --cp-comm-type ring|--cp-comm-type 'ring' is unknown",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 16 --cp-comm-type p2p|--cp-comm-type needs --cp above 1",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 16 --cp 0|--cp must be at least 1",
      // A GPU cannot take more than every token's copies: at most E = 8 times the mean.
      "mixtral-8x7b|4096|--pp 1 --tp 1 --dp 16 --moe-imbalance 1e12|--moe-imbalance must be a"
          + " number of at least 1 and at most the 8 experts",
      "llama3-8b|4096|--pp 1 --tp 1 --dp 16 --cp 2147483647|--tp 1 x --pp 1 x --dp 16 x --cp"
          + " 2147483647 is too large"})
  void badExpertOrContextFlagsEndInOneLine(String model, String seq, String flags,
      String message) {
    CliRun r = simulate(model, seq, flags.split(" "));
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err().strip()).startsWith("meshplan: error: ").contains(message)
        .doesNotContain("\n").doesNotContain("Exception");
  }

  /**
   * A saved plan whose stage names an expert-parallel size the model cannot take (3 does not
   * divide Mixtral's 8 experts, 64 is more than the stage's GPUs) or context parallelism on a
   * sequence of 4,096 tokens that 2 x 3 chunks do not split: one line naming the field, exit 2.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "\"expertParallel\" : 8|\"expertParallel\" : 3|stages[0].expertParallel: 3",
      "\"expertParallel\" : 8|\"expertParallel\" : 64|stages[0].expertParallel: 64",
      "\"expertParallel\" : 8|\"expertParallel\" : 8, \"contextParallel\" : 3|stages[0]"})
  void savedPlansWithLayoutsTheModelCannotTakeAreRefused(String from, String to, String field,
      @TempDir Path dir) throws java.io.IOException {
    Path plan = dir.resolve("plan.json");
    // Two layers and a short sequence keep the plan quick; EP 8 is its choice on 16 GPUs.
    CliRun made = CliRun.of("plan", "--model", "mixtral-8x7b", "--layers", "2", "--seq", "4096",
        "--cluster", "2x8:h100-80gb:ib-ndr400", "--global-batch", "64", "--out", plan.toString(),
        "--quiet");
    assertThat(made.code()).as(made.err()).isZero();
    String text = Files.readString(plan);
    assertThat(text).contains(from);
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, text.replace(from, to));
    CliRun r = CliRun.of("simulate", "--plan", bad.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err().strip()).startsWith("meshplan: error: " + bad + ": ").contains(field)
        .doesNotContain("\n").doesNotContain("Exception");
  }

  /**
   * The busiest of EP GPUs takes at most every token's rows, EP times the mean: an imbalance
   * past --ep prices as --ep (one GPU holding every expert has no busier peer), one under it as
   * itself.
   */
  @org.junit.jupiter.api.Test
  void theImbalanceIsPricedAtMostAtTheExpertParallelSize() {
    String[] base = {"simulate", "--model", "mixtral-8x7b", "--layers", "2", "--seq", "4096",
        "--cluster", "2x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "16",
        "--global-batch", "64", "--micro-batch", "1", "--json"};
    java.util.function.BiFunction<String, String, Double> seconds = (ep, imbalance) -> {
      String[] a = java.util.Arrays.copyOf(base, base.length + 4);
      a[base.length] = "--ep";
      a[base.length + 1] = ep;
      a[base.length + 2] = "--moe-imbalance";
      a[base.length + 3] = imbalance;
      CliRun r = CliRun.of(a);
      assertThat(r.code()).as(r.err()).isZero();
      try {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out())
            .get("iterationSeconds").asDouble();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
    assertThat(seconds.apply("1", "8")).isEqualTo(seconds.apply("1", "1"));
    assertThat(seconds.apply("2", "8")).isEqualTo(seconds.apply("2", "2"));
    assertThat(seconds.apply("2", "1.5")).isGreaterThan(seconds.apply("2", "1"))
        .isLessThan(seconds.apply("2", "2"));
  }
}
