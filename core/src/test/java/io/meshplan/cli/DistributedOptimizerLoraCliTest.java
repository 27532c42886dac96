package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The distributed optimizer (ZeRO-1) of a LoRA run gathers its adapters, not its frozen base:
 * Megatron-Core's data-parallel buffers hold the parameters that require gradients only
 * ({@code distributed_data_parallel.py} lines 175-181, d98e8a6).
 */
class DistributedOptimizerLoraCliTest {
  private static final List<String> RUN = List.of("simulate", "--model", "llama2-70b",
      "--cluster", "1x8:b200", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "8", "--seq", "8192", "--finetune", "lora", "--lora-rank", "16",
      "--lora-targets", "attention", "--dtype", "fp8", "--fp8-param-gather",
      "--activation-func-fp8-input-store", "--prices", "kernel");

  /**
   * 65,536,000 adapter parameters: ZeRO-0 all-reduces their fp32 gradients, 2 x 7/8 x
   * 262,144,000 = 458,752,000 bytes per GPU (0.43 GiB); ZeRO-1 reduce-scatters them and gathers
   * the bf16 adapters, 7/8 x (262,144,000 + 131,072,000) = 344,064,000 bytes (0.32 GiB). The
   * base's 64.85 GiB of weights are not gathered (they were: 56.96 GiB a GPU, 68 ms).
   */
  @Test
  void onlyTheAdaptersAreGathered() {
    CliRun zero0 = CliRun.of(RUN);
    assertThat(zero0.code()).as(zero0.err()).isZero();
    assertThat(zero0.out()).contains("tp 0.00 GiB, dp 0.43 GiB, pp 0.00 GiB");
    CliRun zero1 = CliRun.of(RUN, "--distributed-optimizer");
    assertThat(zero1.code()).as(zero1.err()).isZero();
    assertThat(zero1.out()).contains("tp 0.00 GiB, dp 0.32 GiB, pp 0.00 GiB",
        "optimizer state 0.09\n");
  }
}
