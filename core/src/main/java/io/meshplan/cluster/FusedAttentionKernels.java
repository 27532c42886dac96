package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How fast fused attention kernels (FlashAttention-2/3, cuDNN) run on a GPU: the fraction of the
 * dense 16-bit peak their forward and their backward reach on long causal sequences at head
 * dimension 128, from the kernels' published benchmarks. The backward is slower: it recomputes
 * the scores and its five matrix products share each tile's softmax work.
 *
 * <ul>
 *   <li>A100 (Ampere): FlashAttention-2 (Dao, arXiv:2307.08691, abstract and section 4.1) reaches
 *       50-73% of the A100's peak, the forward at the top of that range and the backward lower;
 *       0.70 forward and 0.55 backward.
 *   <li>H100 and H200 (Hopper, the same SMs and clocks): FlashAttention-3 (Shah et al.,
 *       arXiv:2407.08608) reaches 740 TFLOP/s, 75% of 989, at its best forward shape; PyTorch's
 *       operator benchmark measured FlashAttention-3's forward at head dimension 128 and 16k
 *       tokens per batch at 566 TFLOP/s for sequence 2048 and 614 for 8192 (pytorch/benchmark
 *       commit ff65cb6, 2024), 0.57-0.62 of 989; 0.60 forward. The paper's backward is 1.5-1.75x
 *       FlashAttention-2's, which runs at 0.30-0.35 of Hopper's peak; 0.50 backward.
 *   <li>B200: no published kernel benchmark was at hand; it takes Hopper's fractions of its own
 *       peak.
 *   <li>V100 (Volta): FlashAttention-2 needs Ampere or later; no fused kernel.
 * </ul>
 *
 * @param forwardEfficiency the forward's fraction of the dense peak, in (0, 1]
 * @param backwardEfficiency the backward's fraction of the dense peak, in (0, 1]
 */
public record FusedAttentionKernels(double forwardEfficiency, double backwardEfficiency) {
  /** Checks the fractions. */
  public FusedAttentionKernels {
    Require.that(forwardEfficiency > 0 && forwardEfficiency <= 1,
        "forward efficiency must be in (0, 1]");
    Require.that(backwardEfficiency > 0 && backwardEfficiency <= 1,
        "backward efficiency must be in (0, 1]");
  }

  /**
   * The fused attention kernels of a GPU, if it has any: GPUs with bf16 tensor cores (Ampere and
   * later).
   *
   * @param gpu the GPU
   * @return the kernels' efficiencies, or empty on GPUs FlashAttention-2 does not run on
   */
  public static Optional<FusedAttentionKernels> of(GpuSpec gpu) {
    if (gpu.peak(Precision.BF16).isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(gpu.nvlinkGeneration() <= 3 ? new FusedAttentionKernels(0.70, 0.55)
        : new FusedAttentionKernels(0.60, 0.50));
  }

  /**
   * Checks that a GPU has fused attention kernels.
   *
   * @param gpu the GPU
   * @throws InputException naming the GPU when it has none
   */
  public static void require(GpuSpec gpu) {
    if (of(gpu).isEmpty()) {
      throw new InputException("flash attention needs Ampere or later, and the " + gpu.name()
          + " has no bf16 tensor cores; use unfused attention");
    }
  }
}
