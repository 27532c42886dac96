package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A training precision the GPU lacks is refused by every command that takes one. */
class DtypeCliTest {
  private static final String LINE = "--dtype bf16 needs BF16 math, which the v100-32gb does not"
      + " have; it trains in f32 (15.7 TFLOP/s), f16 (125.0 TFLOP/s)";
  private static final String[] CONFIG = {"--model", "llama2-7b", "--layers", "2", "--cluster",
      "1x8:v100-32gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
      "--global-batch", "8", "--dtype", "bf16"};

  @TempDir Path dir;

  private static String[] with(String head, String... tail) {
    String[] all = new String[CONFIG.length + tail.length + 1];
    all[0] = head;
    System.arraycopy(CONFIG, 0, all, 1, CONFIG.length);
    System.arraycopy(tail, 0, all, CONFIG.length + 1, tail.length);
    return all;
  }

  @Test
  void bf16OnV100IsRefusedEverywhere() throws Exception {
    CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster", "1x8:v100-32gb",
        "--dtype", "bf16").refusedInOneLine(2, LINE);
    CliRun.of(with("simulate")).refusedInOneLine(2, LINE);
    CliRun.of(with("export", "--to", "megatron")).refusedInOneLine(2, LINE);
    Path grid = dir.resolve("grid.yaml");
    // A grid whose GPUs all lack a listed precision is refused; one GPU that has it keeps the
    // grid, and the others' points are rejected in their rows (Fp8CliTest).
    Files.writeString(grid, "models: [opt-125m]\nseq: [1024]\ngpus: [v100-16gb, v100-32gb]\n"
        + "clusters: [1x8]\nglobalBatch: [32]\ndtype: [f16, bf16]\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(2, "grid.yaml: key 'dtype':"
        + " no GPU of the grid trains in bf16; the training precision bf16 needs BF16 math, which"
        + " the v100-32gb does not have");
  }

  /**
   * f32 on a V100 runs at most at the FP32 peak: 15.7 TFLOP/s, where it was priced at the fp16
   * tensor-core peak (37.6 TFLOP/s per GPU in issue 23's probe).
   */
  @Test
  void f32OnV100StaysUnderTheFp32Peak() {
    CliRun r = CliRun.of("simulate", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:v100-32gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
        "--global-batch", "8", "--dtype", "f32", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    double tflops = Double.parseDouble(r.out().replaceAll("(?s).*\"hardwareTflopsPerGpu\"\\s*:"
        + "\\s*([0-9.eE+-]+).*", "$1"));
    assertThat(tflops).isPositive().isLessThanOrEqualTo(15.7);
  }
}
