package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --cp-comm-type a2a}: head-parallel (DeepSpeed-Ulysses) context parallelism, as
 * Megatron-Core's {@code cp_comm_type a2a} runs it; its price, its rules and its exports.
 */
class UlyssesContextCliTest {
  @TempDir Path dir;

  private static final List<String> RUN = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "1x8:h100-80gb", "--seq", "8192", "--tp", "1", "--pp", "1", "--dp", "2",
      "--cp", "4", "--micro-batch", "1", "--global-batch", "8", "--recompute", "full",
      "--distributed-optimizer",
      "--prices", "kernel");

  private static String line(String out, String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
  }

  private static double iteration(String out) {
    return Double.parseDouble(line(out, "iteration ").split(" ")[1]);
  }

  /**
   * The all-to-alls are exposed (the ring's transfers hide under the attention), and each GPU's
   * attention runs over the whole 8,192 tokens for a quarter of the heads, which cuDNN's H200
   * table runs faster than a 2,048-token share (644 and 541 TFLOP/s forward and backward at
   * 8,192 tokens, 484 and 370 at 2,048; {@code FusedAttentionKernels.HOPPER_LENGTHS}): here that
   * outweighs the exchange.
   */
  @Test
  void itExposesItsAllToAllsAndRunsTheWholeSequencesAttention() {
    CliRun ring = CliRun.of(RUN, "--cp-comm-type", "p2p");
    CliRun a2a = CliRun.of(RUN, "--cp-comm-type", "a2a");
    assertThat(a2a.code()).as(a2a.err()).isZero();
    assertThat(line(ring.out(), "exposed communication")).doesNotContain("a2a/ring");
    assertThat(line(a2a.out(), "exposed communication")).contains("a2a/ring 0.0");
    assertThat(iteration(a2a.out())).isLessThan(iteration(ring.out()));
  }

  @Test
  void headsThatDoNotSplitAndPackedDocumentsAreRefused() {
    // Llama 3 8B: 8 key/value heads; TP 2 leaves 4 a rank, which CP 8 cannot split.
    CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "2x8:h100-80gb", "--seq", "8192",
        "--tp", "2", "--pp", "1", "--dp", "1", "--cp", "8", "--micro-batch", "1",
        "--global-batch", "1", "--cp-comm-type", "a2a")
        .refusedInOneLine(2, "--cp-comm-type a2a splits each tensor rank's heads over the 8 GPUs "
            + "of its context group: 16 query and 4 key/value heads per rank do not split 8 ways");
    CliRun.of(RUN, "--cp-comm-type", "a2a", "--mean-doc-len", "1024")
        .refusedInOneLine(2, "packed documents under head-parallel context parallelism "
            + "(--cp-comm-type a2a) are not modelled");
    CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb", "--tp", "1",
        "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "8", "--cp-comm-type",
        "a2a")
        .refusedInOneLine(2, "--cp-comm-type needs --cp above 1");
  }

  /**
   * Megatron-LM takes {@code --cp-comm-type a2a} (arguments.py:3221, d98e8a6); torchtitan has
   * no head-parallel exchange, so its export refuses and writes nothing.
   */
  @Test
  void megatronWritesItAndTorchtitanRefusesIt() throws Exception {
    List<String> flags = RUN.subList(1, RUN.size() - 2);
    Path m = dir.resolve("m.sh");
    List<String> megatron = new java.util.ArrayList<>(List.of("export", "--to", "megatron",
        "--out", m.toString()));
    megatron.addAll(flags);
    CliRun meg = CliRun.of(megatron, "--cp-comm-type", "a2a");
    assertThat(meg.code()).as(meg.err()).isZero();
    assertThat(Files.readString(m)).contains("--cp-comm-type a2a");
    Path t = dir.resolve("t.py");
    List<String> torchtitan = new java.util.ArrayList<>(List.of("export", "--to", "torchtitan",
        "--out", t.toString()));
    torchtitan.addAll(flags);
    CliRun tt = CliRun.of(torchtitan, "--cp-comm-type", "a2a");
    assertThat(tt.code()).isEqualTo(3);
    assertThat(tt.err()).contains("it has no head-parallel (Ulysses, --cp-comm-type a2a) "
        + "exchange");
    assertThat(t).doesNotExist();
  }
}
