package io.meshplan.sweep;

import io.meshplan.util.Require;

/**
 * What training a million tokens costs at a price per GPU-hour.
 *
 * <p>One iteration occupies {@code gpus} GPUs for {@code iterationSeconds}, that is {@code gpus *
 * iterationSeconds / 3600} GPU-hours, and trains {@code tokensPerIteration} tokens (global batch
 * times sequence length). So
 *
 * <pre>
 * USD per million tokens = price * gpus * iterationSeconds / 3600 / (tokensPerIteration / 1e6)
 * </pre>
 *
 * <p>For example 64 GPUs at 2 USD per GPU-hour, 10 s per iteration, 1024 sequences of 4096 tokens:
 * 64 * 10 / 3600 = 0.17778 GPU-hours cost 0.35556 USD per iteration, for 4.194304 million tokens,
 * so 0.084771 USD per million tokens.
 */
public final class TokenCost {
  private TokenCost() {}

  /**
   * The cost.
   *
   * @param usdPerGpuHour price of one GPU for one hour, USD
   * @param gpus GPUs in the cluster
   * @param iterationSeconds seconds per iteration
   * @param tokensPerIteration tokens per iteration
   * @return USD per million tokens
   */
  public static double usdPerMillionTokens(double usdPerGpuHour, int gpus,
      double iterationSeconds, long tokensPerIteration) {
    Require.that(usdPerGpuHour >= 0 && Double.isFinite(usdPerGpuHour),
        "the GPU-hour price must be a finite number >= 0");
    Require.positive(gpus, "gpus");
    Require.positive(tokensPerIteration, "tokens per iteration");
    return usdPerGpuHour * gpus * iterationSeconds / 3600.0 / (tokensPerIteration / 1e6);
  }
}
