package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every size guard that gates work, at its edge (accepted) and just past it, and at the largest
 * int or long (refused before any work, with one line and exit 2, never a wrapped product).
 */
class SizeGuardsCliTest {
  private static final String[] SIM = {"simulate", "--model", "llama2-7b", "--cluster",
      "1x8:h100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1"};
  private static final String[] PLAN = {"plan", "--model", "llama2-7b", "--cluster",
      "1x8:h100-80gb"};
  private static final String INT_MAX = Integer.toString(Integer.MAX_VALUE);
  private static final String LONG_MAX = Long.toString(Long.MAX_VALUE);

  /**
   * A row: the command line, the exit code, a text of the refusal (null when it runs and prints
   * its figures, exit 0, or 3 when the configuration does not fit).
   */
  record Row(List<String> args, int code, String says) {
    @Override
    public String toString() {
      return String.join(" ", args) + " -> " + code;
    }
  }

  private static Row row(String[] base, int code, String says, String... more) {
    List<String> a = new ArrayList<>(List.of(base));
    a.addAll(List.of(more));
    return new Row(a, code, says);
  }

  static List<Row> rows() {
    String layers = "--layers must be at most 131072";
    return List.of(
        // ModelSpec.MAX_LAYERS = 2^17 = 131,072 = 1,024 x gpt-1t's 128 layers.
        // It runs, and its 131,072 layers on one pipeline stage do not fit: exit 3, figures printed.
        row(SIM, 3, null, "--global-batch", "8", "--layers", "131072"),
        row(SIM, 2, layers + ", got 131073", "--global-batch", "8", "--layers", "131073"),
        // Once looped out of memory: a 2e9-element list of stage layers.
        row(SIM, 2, layers + ", got 2000000000", "--global-batch", "8", "--layers", "2000000000"),
        row(SIM, 2, layers + ", got " + INT_MAX, "--global-batch", "8", "--layers", INT_MAX),
        row(SIM, 2, "'" + LONG_MAX + "' is out of range", "--global-batch", "8", "--layers", LONG_MAX),
        // Once ran until killed: 1.6e9^2 x 4 shapes = 1.024e19 wrapped past 2^63 - 1 = 9.22e18.
        row(PLAN, 2, layers + ", got 1600000000", "--layers", "1600000000"),
        row(PLAN, 2, layers + ", got " + INT_MAX, "--layers", INT_MAX),
        // At the layer limit the stage table refuses: 131072^2 x 4 = 68,719,476,736 > 2^25.
        row(PLAN, 2, "has 68719476736 cells, more than the limit of 33554432", "--layers",
            "131072"),
        // 2896^2 x 4 = 33,547,264 <= 2^25 = 33,554,432 < 2897^2 x 4 = 33,570,436.
        row(PLAN, 2, "has 33570436 cells", "--layers", "2897"),
        // SearchRules.MAX_MICROBATCHES = 2^16 = 65,536 microbatches of 1 sequence on dp 1.
        row(SIM, 0, null, "--global-batch", "65536"),
        row(SIM, 2, "65537 microbatches per iteration are more than the limit of 65536",
            "--global-batch", "65537"),
        row(SIM, 2, INT_MAX + " microbatches per iteration", "--global-batch", INT_MAX),
        // Checked.MAX_DEVICES = 2^20 = 1,048,576 GPUs = 131,072 x 8; 131,073 x 8 = 1,048,584.
        row(new String[] {"simulate", "--model", "llama2-7b", "--cluster", "131073x8:h100-80gb",
            "--tp", "8", "--pp", "1", "--dp", "131073", "--micro-batch", "1",
            "--global-batch", "131073"}, 2, "is 1048584, more than the limit of 1048576"),
        // 2^31 - 1 x 8 = 17,179,869,176 GPUs, past an int.
        row(new String[] {"plan", "--model", "llama2-7b"}, 2,
            "is 17179869176, more than the limit of 1048576", "--cluster",
            INT_MAX + "x8:h100-80gb"),
        // ModelSpec.MAX_SEQ = 2^24 = 16,777,216 tokens (#36: before it, a tensor of 8 x
        // (2^31 - 1) x 32000 s32 = 2,199,023,254,528,000 B > 2^50 B refused it later).
        row(PLAN, 2, "--seq must be at most 16777216, got " + INT_MAX, "--seq", INT_MAX),
        row(PLAN, 2, "--seq must be at most 16777216, got 16777217", "--seq", "16777217"),
        // --vpp 2^31 - 1 chunks: 32 layers do not split into 8 x (2^31 - 1) chunks.
        row(new String[] {"simulate", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb",
            "--tp", "1", "--pp", "8", "--dp", "1", "--micro-batch", "1", "--global-batch", "8"},
            2, "are not divisible by --pp 8 x --vpp " + INT_MAX, "--vpp", INT_MAX),
        // An H100 has 80 GiB = 85,899,345,920 B; one byte more is refused.
        row(SIM, 0, null, "--global-batch", "8", "--memory", "85899345920B"),
        row(SIM, 2, "--memory 85899345921B is more than the 80GiB of physical memory of one "
            + "h100-80gb", "--global-batch", "8", "--memory", "85899345921B"),
        row(PLAN, 2, "--memory 1TB is more than the 80GiB", "--memory", "1TB"),
        row(new String[] {"shard", "--model", "alpa-mlp", "--mesh", "2x4", "--cluster",
            "1x8:h100-80gb"}, 2, "--memory 81GiB is more than the 80GiB", "--memory", "81GiB"),
        // shard's graph limit of 200,000 instructions: 61 x 3279 + 5 = 200,024.
        row(new String[] {"shard", "--model", "llama2-7b", "--mesh", "2x4"}, 2,
            "about 200024 instructions", "--layers", "3279"),
        row(new String[] {"shard", "--model", "llama2-7b", "--mesh", "2x4"}, 2,
            layers + ", got " + INT_MAX, "--layers", INT_MAX));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void eachGuardHoldsAtItsEdge(Row r) {
    CliRun run = CliRun.of(r.args().toArray(String[]::new));
    if (r.says() == null) {
      assertThat(run.code()).as(run.err()).isEqualTo(r.code());
      assertThat(run.out()).isNotEmpty();
      return;
    }
    assertThat(run.code()).as(run.err()).isEqualTo(r.code());
    List<String> lines = run.err().lines().filter(l -> !l.startsWith("Try '")).toList();
    assertThat(lines).as(run.err()).hasSize(1);
    assertThat(lines.get(0)).startsWith(r.code() == 3 ? "meshplan: infeasible: "
        : "meshplan: error: ").contains(r.says());
    assertThat(run.out()).isEmpty();
  }
}
