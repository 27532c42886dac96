package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --attention} naming the fused kernel a run used: its prices and its refusals. */
class AttentionKernelCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static CliRun simulate(String cluster, String attention) {
    List<String> a = new ArrayList<>(List.of("simulate", "--model", "llama3-8b", "--cluster",
        cluster, "--tp", "4", "--pp", "1", "--dp", "2", "--global-batch", "16",
        "--micro-batch", "1", "--prices", "kernel"));
    if (attention != null) {
      a.addAll(List.of("--attention", attention));
    }
    return CliRun.of(a.toArray(String[]::new));
  }

  /** {@code flash} is the GPU's default kernel: the output is the default's, byte for byte. */
  @Test
  void flashIsTheDefault() {
    for (String c : new String[] {"1x8:h100-80gb", "1x8:a100-80gb"}) {
      CliRun d = simulate(c, null);
      assertThat(d.code()).as(d.err()).isZero();
      assertThat(simulate(c, "flash").out()).isEqualTo(d.out());
    }
    // The default kernels by name: cuDNN on Hopper, FlashAttention-2 on Ampere.
    assertThat(simulate("1x8:h100-80gb", "cudnn").out())
        .isEqualTo(simulate("1x8:h100-80gb", null).out());
    assertThat(simulate("1x8:a100-80gb", "flash2").out())
        .isEqualTo(simulate("1x8:a100-80gb", null).out());
  }

  /**
   * Llama 3 8B (head dimension 128, sequence 8192) on an H100 node at TP 4, DP 2: 1.8148 s with
   * cuDNN's 0.60 / 0.50 of peak at 4,096 tokens, 0.60 x 644 / 591 = 0.6538 and 0.50 x 541 / 474
   * = 0.5707 at 8,192 (the H200 table, FusedAttentionKernels.HOPPER_LENGTHS); FlashAttention-2's
   * 0.35 / 0.30 at every length make the attention core 1.87x / 1.90x as long, and the iteration
   * 2.0026 s (compute 1.4798 s to 1.6675 s, +0.1877 s; communication unchanged at 0.3126 s, its
   * collectives at the 370.8 GB/s NCCL reaches on the H100's NVLink).
   * Triton is priced as FlashAttention-2; FlashAttention-3 as cuDNN.
   */
  @Test
  void flash2IsSlowerOnHopper() {
    assertThat(simulate("1x8:h100-80gb", null).out()).contains("iteration 1.8148 s");
    CliRun fa2 = simulate("1x8:h100-80gb", "flash2");
    assertThat(fa2.code()).as(fa2.err()).isZero();
    assertThat(fa2.out()).contains("iteration 2.0026 s")
        .contains("exposed communication (stage 0): 0.3126 s");
    assertThat(simulate("1x8:h100-80gb", "triton").out()).isEqualTo(fa2.out());
    assertThat(simulate("1x8:h100-80gb", "flash3").out())
        .isEqualTo(simulate("1x8:h100-80gb", null).out());
  }

  @Test
  void kernelsTheGpuCannotRunEndInOneLine() {
    simulate("1x8:a100-80gb", "flash3").refusedInOneLine(2,
        "a100-80gb: flash3 attention (FlashAttention-3) runs on Hopper GPUs only");
    simulate("1x8:v100-32gb", "flash3").refusedInOneLine(2, "runs on Hopper GPUs only");
    simulate("1x8:v100-32gb", "flash2").refusedInOneLine(2,
        "no fused attention kernel runs on volta");
    simulate("1x8:a100-80gb", "flash9").refusedInOneLine(2,
        "--attention 'flash9' is unknown; use auto, flash, unfused, flash2, flash3, cudnn, "
            + "triton or cudnn-fp8");
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:a100-80gb", "--attention",
        "flash3").refusedInOneLine(2, "runs on Hopper GPUs only");
    CliRun.of("export", "--to", "megatron", "--model", "llama3-8b", "--cluster",
        "1x8:h100-80gb", "--tp", "4", "--pp", "1", "--dp", "2", "--global-batch", "16",
        "--micro-batch", "1", "--attention", "flash2").refusedInOneLine(3,
        "export writes no named attention kernel (--attention flash2)");
  }

  /**
   * Simulate's JSON names a named kernel; a plan file records it, re-simulates with it, and
   * export refuses it in one line.
   */
  @Test
  void theKernelTravelsThroughJsonAndPlanFiles() throws Exception {
    List<String> a = new ArrayList<>(List.of("simulate", "--model", "llama3-8b", "--cluster",
        "1x8:h100-80gb", "--tp", "4", "--pp", "1", "--dp", "2", "--global-batch", "16",
        "--micro-batch", "1", "--json", "--prices", "kernel"));
    CliRun plain = CliRun.of(a.toArray(String[]::new));
    assertThat(plain.code()).as(plain.err()).isZero();
    assertThat(plain.out()).doesNotContain("attentionKernel");
    a.addAll(List.of("--attention", "flash2"));
    CliRun named = CliRun.of(a.toArray(String[]::new));
    JsonNode j = JSON.readTree(named.out());
    assertThat(j.get("attentionKernel").asText()).isEqualTo("flash2");
    assertThat(j.get("iterationSeconds").asDouble()).isBetween(2.00255, 2.00265);

    Path plan = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "16", "--attention", "flash2", "--out",
        plan.toString(), "--json");
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode file = JSON.readTree(Files.readString(plan));
    assertThat(file.get("attention").asText()).isEqualTo("flash");
    assertThat(file.get("attentionKernel").asText()).isEqualTo("flash2");
    CliRun again = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(again.code()).as(again.err()).isZero();
    JsonNode s = JSON.readTree(again.out());
    assertThat(s.get("attentionKernel").asText()).isEqualTo("flash2");
    assertThat(s.get("iterationSeconds").asDouble())
        .isEqualTo(file.get("iterationSeconds").asDouble());
    // --attention flash re-prices the same plan with the default kernel (cuDNN): faster.
    CliRun flash = CliRun.of("simulate", "--plan", plan.toString(), "--json", "--attention",
        "flash");
    assertThat(JSON.readTree(flash.out()).get("iterationSeconds").asDouble())
        .isLessThan(s.get("iterationSeconds").asDouble());
    assertThat(flash.out()).doesNotContain("attentionKernel");
    CliRun.of("export", "--to", "megatron", "--plan", plan.toString())
        .refusedInOneLine(3, "export writes no named attention kernel (--attention flash2)");

    // A file whose kernel is unknown, or named beside unfused attention, is refused in one line.
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, Files.readString(plan).replace("\"flash2\"", "\"flash9\""));
    CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2,
        "attentionKernel: attention kernel 'flash9' is unknown");
    Path unfused = dir.resolve("unfused.json");
    Files.writeString(unfused, Files.readString(plan)
        .replace("\"attention\" : \"flash\",\n  \"attentionKernel\"",
            "\"attention\" : \"unfused\",\n  \"attentionKernel\""));
    CliRun.of("simulate", "--plan", unfused.toString()).refusedInOneLine(2,
        "an attention kernel needs fused attention");
  }
}
