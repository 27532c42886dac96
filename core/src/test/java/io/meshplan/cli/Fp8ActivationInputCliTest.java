package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --activation-func-fp8-input-store}: each SwiGLU's inputs kept for the backward pass as
 * FP8 copies, as Megatron-Core's {@code activation_func_fp8_input_store} keeps them; its memory,
 * its unchanged time, its plan file, its refusals and its exports.
 */
class Fp8ActivationInputCliTest {
  @TempDir Path dir;

  /** MLPerf's Llama 2 70B LoRA on one B200 node as Lenovo ran it (FP8_ACT=1). */
  private static final List<String> RUN = List.of("simulate", "--model", "llama2-70b",
      "--cluster", "1x8:b200", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "8", "--seq", "8192", "--finetune", "lora", "--lora-rank", "16",
      "--lora-targets", "attention", "--dtype", "fp8", "--fp8-param-gather", "--attention",
      "cudnn-fp8", "--prices", "kernel");

  private static String line(String out, String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
  }

  /**
   * The gate and up projections' outputs, 8,192 tokens x 28,672 each, are kept in one byte
   * instead of two: 80 layers x 2 x 8,192 x 28,672 x 1 byte = 37,580,963,840 bytes = 35.00 GiB
   * less (113.68 to 78.68 GiB of activations), which brings the run inside the B200's 171 GiB as
   * it ran. The time is the same: the fused kernel writes one byte per element more in the
   * forward pass and reads one byte less in the backward pass.
   */
  @Test
  void theSwigluInputsTakeOneByteAnElementAtTheSameTime() {
    CliRun bf16 = CliRun.of(RUN);
    assertThat(bf16.code()).isEqualTo(3);
    assertThat(bf16.out()).contains("activations 113.68 ", "does not fit: stage 0 needs 181GiB");
    CliRun fp8 = CliRun.of(RUN, "--activation-func-fp8-input-store");
    assertThat(fp8.code()).as(fp8.err()).isZero();
    assertThat(fp8.out()).contains("activations 78.68 ", "fits: stage 0 needs 146GiB");
    assertThat(line(fp8.out(), "iteration ")).isEqualTo(line(bf16.out(), "iteration "));
  }

  /** Llama 3 8B planned on 8 H100s with the flag, written to {@code name}. */
  private Path plan(String name) {
    Path plan = dir.resolve(name);
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--global-batch", "16", "--activation-func-fp8-input-store", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    return plan;
  }

  @Test
  void aPlanFileKeepsItAndRefusesItWithoutSwiglu() throws Exception {
    Path plan = plan("p.json");
    String json = Files.readString(plan);
    assertThat(json).contains("\"fp8ActivationInput\" : true");
    CliRun again = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(again.code()).as(again.err()).isIn(0, 3);
    Path word = dir.resolve("word.json");
    Files.writeString(word, json.replace("\"fp8ActivationInput\" : true",
        "\"fp8ActivationInput\" : \"yes\""));
    CliRun.of("simulate", "--plan", word.toString())
        .refusedInOneLine(2, "field 'fp8ActivationInput' must be true or false");
    Path gelu = dir.resolve("gelu.json");
    Files.writeString(gelu, json.replace("\"mlp\" : \"swiglu\"", "\"mlp\" : \"gelu\""));
    CliRun.of("simulate", "--plan", gelu.toString())
        .refusedInOneLine(2, "the activation input is stored in FP8 for SwiGLU only");
    assertThat(Files.readString(plan)).isEqualTo(json);
  }

  @Test
  void itIsRefusedForOtherMlps() {
    CliRun.of("simulate", "--model", "opt-1.3b", "--cluster", "1x8:h100-80gb",
        "--activation-func-fp8-input-store")
        .refusedInOneLine(2, "--activation-func-fp8-input-store stores a SwiGLU's input, as "
            + "Megatron-Core does for SwiGLU only; this model's MLP is relu");
    CliRun.of("simulate", "--model", "gpt-1.7b", "--cluster", "1x8:h100-80gb",
        "--activation-func-fp8-input-store")
        .refusedInOneLine(2, "this model's MLP is gelu");
  }

  /**
   * Megatron-LM's command line has no argument for it (d98e8a6, {@code arguments.py} lists the
   * field among those "no CLI argument exists for"): every export refuses it and writes nothing.
   */
  @Test
  void noExportWritesIt() throws Exception {
    Path plan = plan("q.json");
    for (String to : List.of("megatron", "torchtitan", "deepspeed")) {
      Path out = dir.resolve(to + ".out");
      CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", to, "--out",
          out.toString());
      assertThat(e.code()).as(to).isEqualTo(3);
      assertThat(e.err()).contains("export cannot keep the SwiGLU inputs in FP8 "
          + "(--activation-func-fp8-input-store");
      assertThat(out).doesNotExist();
    }
  }
}
