package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What each command's help promises holds: every model preset a help lists runs through that
 * command (an answer, exit 0 or 3 for "does not fit"/"cannot express", never a refusal of the
 * model or an internal error), and what a command cannot run it does not list. The same for every
 * other list of names a help or a refusal shows: the config.json model_types, the GPUs and
 * fabrics of --cluster, and the words of every option that takes one of a fixed set ({@link
 * HelpListsCliTest}).
 */
class HelpTruthCliTest {
  /** The presets under "Model presets (--model):" in a command's help. */
  static List<String> listedPresets(String command) {
    return listed(command, "Model presets (--model):");
  }

  /** The names in the indented lines under a heading of a command's help. */
  static List<String> listed(String command, String heading) {
    CliRun help = CliRun.of(command, "--help");
    assertThat(help.code()).isZero();
    List<String> lines = help.out().lines().toList();
    int at = lines.indexOf(heading);
    assertThat(at).as(help.out()).isNotNegative();
    List<String> names = new ArrayList<>();
    for (int i = at + 1; i < lines.size() && lines.get(i).startsWith("  "); i++) {
      Arrays.stream(lines.get(i).split(",")).map(String::trim).filter(s -> !s.isEmpty())
          .forEach(names::add);
    }
    return names;
  }

  /** The command line that runs a preset small: one layer, short sequences, one or few GPUs. */
  static String[] small(String command, String preset) {
    String[] common = {"--model", preset, "--layers", "1", "--seq", "128"};
    String[] rest = switch (command) {
      case "plan" -> new String[] {"--cluster", "1x1:h100-80gb", "--global-batch", "1"};
      case "simulate" -> new String[] {"--cluster", "1x1:h100-80gb", "--tp", "1", "--pp", "1",
          "--dp", "1", "--micro-batch", "1", "--global-batch", "1"};
      case "export" -> new String[] {"--to", "deepspeed", "--cluster", "1x1:h100-80gb", "--tp",
          "1", "--pp", "1", "--dp", "1", "--micro-batch", "1", "--global-batch", "1"};
      default -> new String[] {"--mesh", "2", "--batch", "1"};
    };
    List<String> all = new ArrayList<>(List.of(command));
    all.addAll(List.of(common));
    all.addAll(List.of(rest));
    return all.toArray(String[]::new);
  }

  static Stream<Arguments> listed() {
    return Stream.of("plan", "simulate", "export", "shard")
        .flatMap(c -> listedPresets(c).stream().map(p -> Arguments.of(c, p)));
  }

  @ParameterizedTest(name = "{0} --model {1}")
  @MethodSource("listed")
  void everyListedPresetRunsThroughItsCommand(String command, String preset) {
    CliRun r = CliRun.of(small(command, preset));
    assertThat(r.code()).as(r.err()).isIn(0, 3);
    assertThat(r.err()).doesNotContain("internal error").doesNotContain("--model " + preset);
  }

  @Test
  void eachHelpListsExactlyTheFamiliesItsCommandRuns() {
    // 14 LLaMA presets + alpa-mlp for shard, whose LLaMA graph has no experts; 14 LLaMA + 11
    // mixture-of-experts (Llama 4's two and DeepSeek-V2's two among them) + 19 GPT/OPT presets
    // + 5 hybrids
    // (nemotron-h-8b, nemotron-3-nano-30b-a3b, nemotron-3-super-120b-a12b, qwen3-next-80b-a3b,
    // jamba-v0.1) for the rest,
    // which shard does not list.
    assertThat(listedPresets("shard")).hasSize(15).contains("alpa-mlp", "llama3.1-405b")
        .doesNotContain("gpt", "opt-125m", "gpt3-175b", "mixtral-8x7b", "gpt-oss-20b",
            "qwen3-next-80b-a3b");
    for (String c : List.of("plan", "simulate", "export")) {
      assertThat(listedPresets(c)).as(c).hasSize(50).contains("gpt", "opt-125m", "llama2-7b",
          "mixtral-8x7b", "qwen3-235b-a22b", "gpt-oss-120b", "llama4-scout", "llama4-maverick",
          "deepseek-v3", "deepseek-v2", "deepseek-v2-lite", "nemotron-h-8b", "nemotron-3-nano-30b-a3b", "nemotron-3-super-120b-a12b",
          "qwen3-next-80b-a3b", "jamba-v0.1")
          .doesNotContain("alpa-mlp");
    }
  }

  @Test
  void aPresetACommandDoesNotRunIsRefusedNamingTheCommandThatDoes() {
    for (String c : List.of("plan", "simulate", "export")) {
      String[] args = small(c, "alpa-mlp");
      CliRun r = CliRun.of(args);
      r.refusedInOneLine(2, "--model alpa-mlp is Alpa's MLP test step, not a transformer "
          + "decoder: a model for meshplan shard");
    }
    CliRun.of(small("shard", "gpt")).refusedInOneLine(2, "GPT, OPT and GPT-NeoX models are "
        + "planned by meshplan plan");
  }

  @Test
  void batchIsShardsFlagAndElsewhereRefusedWithAPointer() {
    assertThat(CliRun.of("shard", "--help").out()).contains("--batch");
    for (String c : List.of("plan", "simulate", "export")) {
      CliRun help = CliRun.of(c, "--help");
      assertThat(help.out()).as(c).doesNotContain("--batch");
      List<String> args = new ArrayList<>(List.of(small(c, "llama2-7b")));
      args.addAll(List.of("--batch", "4"));
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertThat(r.code()).isEqualTo(2);
      assertThat(r.err().lines().findFirst().orElseThrow()).startsWith("meshplan: error: "
          + "--batch 4 only sets the batch of shard's forward graph; " + c + " takes "
          + "--global-batch (sequences per iteration) and ");
    }
  }

  @Test
  void checkLocalWithoutAllReducePerfIsRefusedNotSkipped() {
    // The build machine has no nccl-tests; were it to have them, the check would run instead.
    org.junit.jupiter.api.Assumptions.assumeTrue(io.meshplan.calibrate.LocalCheck.find(
        System.getenv("NCCL_TESTS"), System.getenv("PATH")) == null, "nccl-tests is built here");
    CliRun.of("bench", "--cluster", "1x8:h100-80gb", "--check-local")
        .refusedInOneLine(2, "--check-local: all_reduce_perf not found");
  }
}
