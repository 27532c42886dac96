package io.meshplan.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A name given twice in a list-valued option is refused in one line with exit 2 instead of being
 * taken once without a word: {@code calibrate --folds}, {@code --recompute-modules}, {@code
 * --lora-targets}, {@code deploy --env} and a sweep grid's lists. (Repeated input files of
 * {@code calibrate} are read once with a warning, as before: the same file is the same data.)
 */
class RepeatedListValuesCliTest {
  @TempDir Path dir;

  private static final List<String> FOLDS = List.of("sc21", "llm-foundry", "megatron-core",
      "nemo", "meta", "automodel");

  /** A word in a random mix of cases: the options read names case-insensitively. */
  private static String anyCase(SplittableRandom r, String w) {
    StringBuilder sb = new StringBuilder();
    for (char c : w.toCharArray()) {
      sb.append(r.nextBoolean() ? Character.toUpperCase(c) : c);
    }
    return sb.toString();
  }

  /**
   * Seeded lists of distinct folds with one of them repeated at a random place, in a random
   * case, as one comma list or as repeated options; and {@code public} beside a fold.
   */
  @Test
  void aFoldNamedTwiceIsRefused() {
    SplittableRandom r = new SplittableRandom(40);
    for (int i = 0; i < 12; i++) {
      List<String> names = new ArrayList<>(FOLDS);
      java.util.Collections.shuffle(names, new java.util.Random(r.nextLong()));
      List<String> list = new ArrayList<>(names.subList(0, 1 + r.nextInt(FOLDS.size())));
      String twice = list.get(r.nextInt(list.size()));
      list.add(r.nextInt(list.size() + 1), anyCase(r, twice));
      List<String> args = new ArrayList<>(List.of("calibrate", "--train", "--out",
          dir.resolve("p" + i + ".yaml").toString()));
      if (r.nextBoolean()) {
        args.addAll(List.of("--folds", String.join(",", list)));
      } else {
        list.forEach(f -> args.addAll(List.of("--folds", f)));
      }
      CliRun.of(args.toArray(String[]::new)).refusedInOneLine(2, "--folds names "
          + twice.toLowerCase(Locale.ROOT) + " twice; give each fold once");
      assertNothingWritten(dir.resolve("p" + i + ".yaml"));
    }
    for (String f : List.of("public,nemo", "meta,public", "public,public")) {
      CliRun.of("calibrate", "--train", "--folds", f, "--out", dir.resolve("q.yaml").toString())
          .refusedInOneLine(2, "--folds public already holds every fold (sc21, llm-foundry, "
              + "megatron-core, nemo, meta, automodel, maxtext, mlperf, mlperf-nvidia); give public "
              + "alone, or fold names, each once");
    }
  }

  private static void assertNothingWritten(Path p) {
    org.assertj.core.api.Assertions.assertThat(Files.exists(p)).isFalse();
  }

  /** The selective-recompute modules, separated by commas or spaces, in any case. */
  @Test
  void aRecomputeModuleNamedTwiceIsRefused() {
    for (String list : List.of("moe_act,moe_act", "core_attn,layernorm,CORE_ATTN",
        "moe_act layernorm,moe_act")) {
      String twice = list.startsWith("core") ? "core_attn" : "moe_act";
      CliRun.of("simulate", "--model", "mixtral-8x7b", "--layers", "4", "--hidden", "1024",
          "--heads", "8", "--kv-heads", "8", "--ffn", "2048", "--seq", "1024", "--cluster",
          "1x8:h100-80gb", "--tp", "1", "--pp", "2", "--dp", "4", "--ep", "4", "--micro-batch",
          "1", "--global-batch", "32", "--recompute", "selective", "--recompute-modules", list)
          .refusedInOneLine(2, "--recompute-modules names " + twice + " twice; give each "
              + "module once");
    }
  }

  /** A projection named twice, directly or through a group word that holds it. */
  @Test
  void aLoraTargetNamedTwiceIsRefused() {
    for (String[] c : new String[][] {{"q_proj,q_proj", "q_proj"},
        {"attention,v_proj", "v_proj"}, {"mlp,all-linear", "gate_proj"}}) {
      CliRun.of("simulate", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb", "--seq",
          "4096", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch",
          "64", "--finetune", "lora", "--lora-rank", "8", "--lora-targets", c[0])
          .refusedInOneLine(2, "LoRA targets adapt " + c[1] + " twice");
    }
  }

  /** Two values for one variable: neither is taken silently. */
  @Test
  void anEnvironmentVariableGivenTwiceIsRefused() {
    CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb", "--env",
        "NCCL_IB_HCA=mlx5_0", "--env", "NCCL_DEBUG=INFO", "--env", "NCCL_IB_HCA=mlx5_1", "--",
        "train.py").refusedInOneLine(2, "--env NCCL_IB_HCA is given twice; give each variable "
            + "once");
  }

  /** A value listed twice in a grid would plan each of its points twice. */
  @Test
  void aSweepGridValueListedTwiceIsRefused() throws Exception {
    String base = "models: [opt-125m]\nseq: [1024]\ngpus: [a100-80gb]\nclusters: [1x4]\n"
        + "globalBatch: [64]\n";
    String[][] cases = {
        {"models: [opt-125m, opt-1.3b, opt-125m]", "field 'models[2]': 'opt-125m'"},
        {"seq: [1024, 2048, 1024]", "field 'seq[2]': '1024'"},
        {"clusters: [1x4, 1x8, 1x4]", "field 'clusters[2]': '1x4'"},
        {"globalBatch: [64, 64]", "field 'globalBatch[1]': '64'"}};
    for (String[] c : cases) {
      String key = c[0].substring(0, c[0].indexOf(':'));
      StringBuilder grid = new StringBuilder();
      for (String line : base.split("\n")) {
        grid.append(line.startsWith(key + ":") ? c[0] : line).append('\n');
      }
      Path g = dir.resolve("grid.yaml");
      Files.writeString(g, grid.toString());
      CliRun.of("sweep", "--grid", g.toString(), "--quiet").refusedInOneLine(2,
          c[1] + " repeats an earlier value; list each once");
    }
  }
}
