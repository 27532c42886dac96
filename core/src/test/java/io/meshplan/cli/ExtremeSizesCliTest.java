package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.testing.Cases;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model and batch sizes at the edges of int and long (#36, section 4): near 2^31, 2^30, and
 * products that overflow an int or a long, through simulate, export and plan. Every combination
 * ends priced (exit 0) or refused in one line (exit 2 for a size past its bound, 3 when nothing
 * fits), never an internal error (exit 1) and never a stack trace.
 */
class ExtremeSizesCliTest {
  @TempDir Path dir;

  /** Sizes where arithmetic breaks: powers of two near the int range, and their neighbours. */
  private static final long[] EDGES = {1, 2, 3, 7, 64, 4096, 46341, 65537, 1 << 20, 1 << 24,
      (1 << 24) + 1, 1 << 30, (1L << 31) - 1, 2_000_000_000};

  private static final List<String> MODELS = List.of("gpt", "opt-125m", "llama2-7b",
      "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3");

  private static long size(Cases.Gen g) {
    return g.random().nextInt(3) == 0 ? EDGES[g.random().nextInt(EDGES.length)]
        : (1L << g.between(0, 31)) - (g.bool() ? 1 : 0);
  }

  /** One command line: a command, a model, some sizes, a split and a batch. */
  private List<String> line(Cases.Gen g, int index) {
    List<String> a = new ArrayList<>();
    int kind = g.between(0, 9);
    String cmd = kind < 5 ? "simulate" : kind < 9 ? "export" : "plan";
    a.add(cmd);
    if (cmd.equals("export")) {
      a.addAll(List.of("--to", g.oneOf("megatron", "torchtitan", "deepspeed")));
    }
    a.addAll(List.of("--model", g.oneOf(MODELS)));
    // Heads, key/value heads and hidden size that divide one another, so that the sizes, not
    // their divisibility, are what is tested; then some sizes of any value.
    long heads = 1L << g.between(0, 17);
    long hidden = Math.min(heads << g.between(0, 16), Integer.MAX_VALUE);
    if (g.bool()) {
      a.addAll(List.of("--heads", "" + heads, "--kv-heads", "" + Math.max(1,
          heads >> g.between(0, 3)), "--hidden", "" + hidden));
    }
    for (String flag : List.of("--ffn", "--vocab", "--seq", "--layers")) {
      if (g.between(0, 2) == 0 && !cmd.equals("plan")) {
        a.addAll(List.of(flag, "" + size(g)));
      }
    }
    if (cmd.equals("plan")) {
      // The planner at one extreme size at least (ordinary sizes are planned elsewhere), on one
      // layer and two GPUs, which keeps a plan that is priced quick.
      a.addAll(List.of(g.oneOf("--hidden", "--ffn", "--vocab", "--seq"),
          "" + EDGES[g.between(EDGES.length - 7, EDGES.length - 1)], "--cluster",
          "1x2:h100-80gb", "--layers", "1", "--global-batch", "" + (g.bool() ? 8 : size(g)),
          "--quiet"));
      return a;
    }
    a.addAll(List.of("--cluster", "1x8:h100-80gb"));
    long micro = g.bool() ? 1 : size(g);
    // micro x 8 x k overflows an int for large factors and a long for the largest: picocli
    // refuses what is not an int, and the rest must be refused by name.
    java.math.BigInteger global = java.math.BigInteger.valueOf(micro).multiply(
        java.math.BigInteger.valueOf(8)).multiply(java.math.BigInteger.valueOf(g.bool() ? 1
            : size(g)));
    a.addAll(List.of("--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "" + micro,
        "--global-batch", global.toString()));
    if (cmd.equals("export")) {
      a.addAll(List.of("--out", dir.resolve("out-" + index).toString(), "--force"));
    }
    return a;
  }

  @Test
  void everyCombinationIsPricedOrRefusedInOneLine() {
    List<List<String>> edges = List.of(
        // The example, and the widest hidden size that is still an int.
        List.of("simulate", "--model", "gpt", "--hidden", "2000000000", "--cluster",
            "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
            "--global-batch", "8"),
        List.of("simulate", "--model", "gpt", "--heads", "1", "--hidden", "2147483647",
            "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8",
            "--micro-batch", "1", "--global-batch", "8"),
        // A sequence of 2^31 - 1 tokens, and microbatches of 2^31 - 1 sequences.
        List.of("export", "--to", "torchtitan", "--model", "llama2-7b", "--seq", "2147483647",
            "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8",
            "--micro-batch", "1", "--global-batch", "8", "--out",
            dir.resolve("seq.py").toString()),
        List.of("simulate", "--model", "qwen3-30b-a3b", "--seq", "1048576", "--cluster",
            "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "65536",
            "--global-batch", "524288"),
        // A global batch past a long.
        List.of("simulate", "--model", "gpt", "--cluster", "1x8:h100-80gb", "--tp", "1",
            "--pp", "1", "--dp", "8", "--micro-batch", "2147483647", "--global-batch",
            "73786976277658337272"));
    int[] counter = {0};
    int[] outcomes = new int[4];
    Cases.check(3631, 60, edges, g -> line(g, counter[0]++), args -> {
      CliRun r = CliRun.of(args.toArray(String[]::new));
      String what = String.join(" ", args) + "\n" + r.err();
      assertThat(r.code()).as(what).isIn(ExitCodes.OK, ExitCodes.BAD_INPUT,
          ExitCodes.INFEASIBLE);
      assertThat(r.err()).as(what).doesNotContain("\tat ").doesNotContain("internal error");
      if (r.code() != ExitCodes.OK) {
        assertThat(r.err()).as(what).hasLineCount(1).startsWith("meshplan: ");
      }
      outcomes[r.code()]++;
    });
    // The cases reach every outcome: priced, refused and infeasible.
    assertThat(outcomes[ExitCodes.OK]).isPositive();
    assertThat(outcomes[ExitCodes.BAD_INPUT]).isPositive();
    assertThat(outcomes[ExitCodes.INFEASIBLE]).isPositive();
  }
}
