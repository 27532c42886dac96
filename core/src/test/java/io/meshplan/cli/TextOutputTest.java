package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command's text output reads well: no line longer than 120 characters (except the wide
 * tables {@code shard --costs} asks for), no trailing spaces, and no count of one with a plural
 * noun ("1 stages"). The width applies to reports; the scripts and manifests that {@code export},
 * {@code deploy} and {@code bench} print are files for their tools (a launch command is one
 * line), and a warning or refusal on standard error is one line by contract, so those are
 * checked for trailing spaces and plurals only.
 */
class TextOutputTest {
  static final int MAX_WIDTH = 120;
  private static final Pattern ONE_PLURAL = Pattern.compile("(?<![\\w.,-])1 (stages|microbatches"
      + "|GPUs|nodes|layers|points|sequences|chunks|pods|workers|devices|threads|runs|ranks"
      + "|replicas|groups|files|instructions|messages|sizes|rows|ports|solves|values)\\b");

  @TempDir Path dir;

  private List<String[]> commands() throws Exception {
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: [opt-125m]\nseq: [256]\ngpus: [a100-80gb]\n"
        + "clusters: [1x1, 1x2]\nglobalBatch: [8]\n");
    String[] one = {"--model", "llama2-7b", "--layers", "2", "--hidden", "512", "--heads", "8",
        "--kv-heads", "8", "--ffn", "1024", "--vocab", "1000", "--seq", "256"};
    List<String[]> c = new ArrayList<>();
    c.add(cat(new String[] {"plan", "--cluster", "1x1:a100-80gb", "--global-batch", "1",
        "--quiet"}, one));
    c.add(cat(new String[] {"plan", "--cluster", "1x8:v100-32gb", "--global-batch", "8"}, one));
    c.add(cat(new String[] {"plan", "--cluster", "2x8:h100-80gb", "--global-batch", "16",
        "--megatron-grid"}, one));
    c.add(new String[] {"plan", "--hlo", "examples/train_step.hlo", "--cluster",
        "1x2:a100-80gb", "--microbatches", "1"});
    c.add(cat(new String[] {"simulate", "--cluster", "1x1:a100-80gb", "--tp", "1", "--pp", "1",
        "--dp", "1", "--micro-batch", "1", "--global-batch", "1"}, one));
    c.add(cat(new String[] {"simulate", "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "2",
        "--dp", "2", "--vpp", "1", "--micro-batch", "1", "--global-batch", "8",
        "--sequence-parallel", "--tp-comm-overlap", "--overlap-grad-reduce"}, one));
    c.add(cat(new String[] {"simulate", "--cluster", "1x8:a100-80gb", "--tp", "2", "--pp", "2",
        "--dp", "2", "--vpp", "2", "--micro-batch", "1", "--global-batch", "8"},
        cat(new String[] {"--model", "llama2-7b", "--layers", "8"},
            java.util.Arrays.copyOfRange(one, 4, one.length))));
    c.add(new String[] {"sweep", "--grid", grid.toString(), "--quiet"});
    c.add(new String[] {"calibrate", "--train", "examples/calibrate/megatron_a100_8gpu.log",
        "--cluster", "1x8:a100-80gb", "--out", dir.resolve("t.yaml").toString()});
    c.add(new String[] {"shard", "--model", "alpa-mlp", "--mesh", "1x1", "--alpha", "1,1",
        "--beta", "1,0.01", "--memory", "1000MB"});
    c.add(new String[] {"shard", "--model", "alpa-mlp", "--mesh", "2x2", "--alpha", "1,1",
        "--beta", "1,0.01", "--memory", "1000MB"});
    c.add(new String[] {"doctor", "--sysfs-root", "examples/sysfs/roce-bond"});
    c.add(new String[] {"calibrate", "examples/alpa_profile_communication_4x8_a100.txt",
        "--cluster", "4x8:a100-80gb", "--out", dir.resolve("p.yaml").toString(), "--report"});
    c.add(cat(new String[] {"export", "--to", "megatron", "--cluster", "1x1:a100-80gb", "--tp",
        "1", "--pp", "1", "--dp", "1", "--micro-batch", "1", "--global-batch", "1"}, one));
    c.add(new String[] {"deploy", "--target", "slurm", "--cluster", "1x1:a100-80gb", "--name",
        "one", "--", "train.py"});
    c.add(new String[] {"bench", "--cluster", "1x2:a100-80gb", "--launcher", "torchrun"});
    return c;
  }

  private static String[] cat(String[] a, String[] b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  @Test
  void everyCommandsTextIsNarrowTrimmedAndCountsRight() throws Exception {
    List<String> problems = new ArrayList<>();
    for (String[] args : commands()) {
      CliRun r = CliRun.of(args);
      String cmd = String.join(" ", args);
      assertThat(r.code()).as(cmd + "\n" + r.err()).isZero();
      assertThat(r.out()).as(cmd).isNotBlank();
      boolean artifact = List.of("export", "deploy", "bench").contains(args[0]);
      problems.addAll(problems(cmd, r.out(), !artifact));
      problems.addAll(problems(cmd, r.err(), false));
    }
    assertThat(problems).isEmpty();
  }

  static List<String> problems(String cmd, String text, boolean narrow) {
    List<String> out = new ArrayList<>();
    for (String line : text.split("\n", -1)) {
      if (narrow && line.length() > MAX_WIDTH) {
        out.add(cmd + ": " + line.length() + " characters: " + line);
      }
      if (!line.equals(line.stripTrailing())) {
        out.add(cmd + ": trailing space: '" + line + "'");
      }
      Matcher m = ONE_PLURAL.matcher(line);
      if (m.find()) {
        out.add(cmd + ": '" + m.group() + "' in: " + line);
      }
    }
    return out;
  }
}
