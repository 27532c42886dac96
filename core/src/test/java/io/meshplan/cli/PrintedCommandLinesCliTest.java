package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command line meshplan prints runs as printed: the nearest configuration of an export
 * that cannot express its input names the model as the user did (a preset, or the config.json
 * path, shell-quoted), and each printed line is split as a shell would and run back through the
 * command line. Where the plan does not say where its model's config.json is, no command line is
 * printed, only the flags to add {@code --model} to.
 */
class PrintedCommandLinesCliTest {
  private static final String CONFIG = "core/src/test/resources/hf/llama-2-7b-hf.json";

  /** Splits shell text into words: bare words and single-quoted parts, as ShellQuote writes. */
  static List<String> shellWords(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder w = null;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (ch == ' ') {
        if (w != null) {
          words.add(w.toString());
          w = null;
        }
        continue;
      }
      w = w == null ? new StringBuilder() : w;
      if (ch == '\'') {
        int end = line.indexOf('\'', i + 1);
        w.append(line, i + 1, end);
        i = end;
      } else if (ch == '\\') {
        w.append(line.charAt(++i));
      } else {
        w.append(ch);
      }
    }
    if (w != null) {
      words.add(w.toString());
    }
    return words;
  }

  /** Runs every line of a run's standard output that is a meshplan command, and returns them. */
  private static List<String> runPrintedCommands(CliRun r) {
    List<String> lines = r.out().lines().map(String::strip)
        .filter(l -> l.startsWith("meshplan ")).toList();
    for (String line : lines) {
      List<String> words = shellWords(line);
      CliRun again = CliRun.of(words.subList(1, words.size()).toArray(String[]::new));
      assertThat(again.code()).as(line + "\n" + again.err()).isZero();
      assertThat(again.err()).as(line).doesNotContain("error");
    }
    return lines;
  }

  private static CliRun exportVpp(String model) {
    // DeepSpeed's pipeline engine has no interleaved schedule: the nearest drops --vpp.
    return CliRun.of("export", "--to", "deepspeed", "--model", model, "--layers", "8", "--seq",
        "1024", "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--vpp",
        "2", "--micro-batch", "1", "--global-batch", "64");
  }

  @Test
  void theNearestConfigurationOfAConfigJsonNamesItsPathQuotedAndRuns(@TempDir Path dir)
      throws IOException {
    Path spaced = Files.createDirectories(dir.resolve("my models/Llama 2's 7B"));
    Files.copy(Path.of(CONFIG), spaced.resolve("config.json"));
    for (String model : List.of(CONFIG, spaced.toString(),
        spaced.resolve("config.json").toString(), "llama2-7b")) {
      CliRun r = exportVpp(model);
      assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
      List<String> lines = runPrintedCommands(r);
      assertThat(lines).as(model).hasSize(1);
      List<String> words = shellWords(lines.get(0));
      assertThat(words.get(words.indexOf("--model") + 1)).isEqualTo(model);
      assertThat(words).doesNotContain("--vpp");
    }
  }

  /**
   * The plan of a config.json model does not say where the config is: the nearest configuration
   * of its interleaved plan (16 layers on 4 nodes) exported to DeepSpeed is given as flags, which
   * run once --model names the config.
   */
  @Test
  void aPlanOfAConfigJsonGivesFlagsNotACommandThatFails(@TempDir Path dir) {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", CONFIG, "--layers", "16", "--seq", "1024",
        "--cluster", "4x8:h100-80gb:ib-ndr400", "--global-batch", "32", "--out",
        plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("interleaved 1F1B");
    CliRun r = CliRun.of("export", "--to", "deepspeed", "--plan", plan.toString());
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(runPrintedCommands(r)).isEmpty();
    String flags = r.out().lines().filter(l -> l.startsWith("  --layers")).findFirst()
        .orElseThrow().strip();
    List<String> args = new ArrayList<>(List.of("export", "--to", "deepspeed", "--model",
        CONFIG));
    args.addAll(shellWords(flags));
    CliRun again = CliRun.of(args.toArray(String[]::new));
    assertThat(again.code()).as(again.err()).isZero();
  }

  /**
   * Megatron-LM trains every weight, so the nearest configuration of a LoRA job keeps gradients
   * and Adam state for all 8.03 billion of Llama 3.1 8B's: 176 GiB per GPU as the layout stood,
   * on H100s that may use 76 GiB. It is given with the distributed optimizer and full
   * recomputation, the least change that fits (ZeRO-1 alone or full recomputation alone does not),
   * and it exports as printed.
   */
  @Test
  void aNearestConfigurationThatWouldNotFitIsGivenAsOneThatDoes() {
    CliRun r = CliRun.of("export", "--to", "megatron", "--model", "llama3.1-8b", "--cluster",
        "1x8:h100", "--tp", "1", "--pp", "1", "--dp", "8", "--seq", "8192", "--global-batch",
        "32", "--micro-batch", "1", "--dtype", "fp8", "--finetune", "lora", "--lora-rank", "16");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err()).contains("it writes no LoRA adapters");
    assertThat(r.out()).contains("nearest configuration megatron can express, with the optimizer"
        + " state sharded (ZeRO stage 1) and full recomputation so that it fits:")
        .doesNotContain("does not fit");
    List<String> lines = runPrintedCommands(r);
    assertThat(lines).hasSize(1);
    assertThat(shellWords(lines.get(0))).contains("--distributed-optimizer")
        .containsSubsequence("--recompute", "full");
  }

  /**
   * Where no variant fits (Llama 2 70B trained in full on eight GPUs needs terabytes), the
   * nearest configuration is printed with a line that says so, rather than left for export to
   * refuse when it is run.
   */
  @Test
  void aNearestConfigurationThatCannotFitSaysSo() {
    CliRun r = CliRun.of("export", "--to", "deepspeed", "--model", "llama2-70b", "--cluster",
        "1x8:h100", "--tp", "1", "--pp", "1", "--dp", "8", "--seq", "4096", "--global-batch",
        "32", "--micro-batch", "1", "--dtype", "bf16", "--finetune", "lora");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.out()).contains("nearest configuration deepspeed can express:")
        .containsPattern("it does not fit: it needs [0-9.]+TiB per GPU, and 76GiB is available,"
            + " also with its state sharded \\(ZeRO\\) and full recomputation where deepspeed"
            + " has them");
  }

  @Test
  void theShellSplitterReadsWhatShellQuoteWrites() {
    List<String> words = List.of("a", "b c", "it's", "$HOME", "x=y");
    assertThat(shellWords(io.meshplan.util.ShellQuote.join(words))).isEqualTo(words);
  }
}
