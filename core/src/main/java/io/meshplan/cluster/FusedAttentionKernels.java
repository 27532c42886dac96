package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How fast fused attention kernels (FlashAttention-2/3, cuDNN) run on a GPU: the fraction of the
 * dense 16-bit peak their forward and their backward reach on long causal sequences, from the
 * kernels' published benchmarks, at head dimension 128 and above and at head dimension 64 and
 * below. The backward is slower: it recomputes the scores and its five matrix products share each
 * tile's softmax work. A narrow head is slower per FLOP: each score costs the same softmax and
 * masking work while its matrix products shrink with the head dimension. Between 64 and 128 the
 * fraction is interpolated linearly; outside, the nearer end holds.
 *
 * <ul>
 *   <li>A100 (Ampere): FlashAttention-2 (Dao, arXiv:2307.08691, abstract and section 4.1) reaches
 *       50-73% of the A100's peak, the forward at the top of that range and the backward lower;
 *       0.70 forward and 0.55 backward. No kernel benchmark at head dimension 64 was at hand: the
 *       same fractions at every head dimension.
 *   <li>H100 and H200 (Hopper, the same SMs and clocks): FlashAttention-3 (Shah et al.,
 *       arXiv:2407.08608) reaches 740 TFLOP/s, 75% of 989, at its best forward shape; PyTorch's
 *       operator benchmark measured FlashAttention-3's forward at head dimension 128 and 16k
 *       tokens per batch at 566 TFLOP/s for sequence 2048 and 614 for 8192 (pytorch/benchmark
 *       commit ff65cb6, 2024), 0.57-0.62 of 989; 0.60 forward. The paper's backward is 1.5-1.75x
 *       FlashAttention-2's, which runs at 0.30-0.35 of Hopper's peak; 0.50 backward. cuDNN's own
 *       training benchmark on an H200 with cuDNN 9.19.1 (NVIDIA/cudnn-frontend,
 *       benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn, March 2026) agrees at
 *       head dimension 128 (Llama 3.1's 64 query and 8 key/value heads, causal, sequence 4096:
 *       591 TFLOP/s forward, 474 backward, 0.60 and 0.48 of 989), and measured GPT-OSS's heads of
 *       64 (64 query and 8 key/value heads, causal with a 1024-token window, sequence 4096,
 *       batch 2) at 336 forward and 289 backward: 0.34 forward and 0.29 backward at head
 *       dimension 64. Those were counted over the window's score pairs, so they include the
 *       partly masked tiles at the band's edges.
 *   <li>B200: Hopper's fractions of its own peak. cuDNN's training benchmark on a GB200 (the same
 *       Blackwell GPU at 2,500 TFLOP/s dense; NVIDIA/cudnn-frontend, {@code
 *       benchmark/sdpa_benchmark_training/results/llama3.1/gb200}, cuDNN 9.22, April 2026)
 *       measured Llama 3.1's heads, causal, batch 2, at 1,408 TFLOP/s forward and 1,148 backward
 *       for sequence 4096 (0.56 and 0.46) and 1,574 and 1,332 for 8192 (0.63 and 0.53): within 7%
 *       of Hopper's 0.60 and 0.50.
 *   <li>V100 (Volta): FlashAttention-2 needs Ampere or later; no fused kernel.
 * </ul>
 *
 * @param forwardEfficiency the forward's fraction of the dense peak at head dimension 128 and
 *     above, in (0, 1]
 * @param backwardEfficiency the backward's fraction of the dense peak at head dimension 128 and
 *     above, in (0, 1]
 * @param narrowForwardEfficiency the forward's fraction at head dimension 64 and below, in (0, 1]
 * @param narrowBackwardEfficiency the backward's fraction at head dimension 64 and below, in (0,
 *     1]
 */
public record FusedAttentionKernels(double forwardEfficiency, double backwardEfficiency,
    double narrowForwardEfficiency, double narrowBackwardEfficiency) {
  /** The head dimension, and above, at which the kernels run at their full fractions. */
  public static final int WIDE_HEAD = 128;
  /** The head dimension, and below, at which they run at their narrow fractions. */
  public static final int NARROW_HEAD = 64;
  /** Ampere's kernels (FlashAttention-2 on the A100, above): 0.70 forward, 0.55 backward. */
  public static final FusedAttentionKernels AMPERE =
      new FusedAttentionKernels(0.70, 0.55, 0.70, 0.55);
  /**
   * Hopper's kernels, which Blackwell's match (FlashAttention-3 and cuDNN on the H100, H200 and
   * GB200, above): 0.60 and 0.50 at head dimension 128, 0.34 and 0.29 at 64.
   */
  public static final FusedAttentionKernels HOPPER =
      new FusedAttentionKernels(0.60, 0.50, 0.34, 0.29);

  /** Checks the fractions. */
  public FusedAttentionKernels {
    Require.that(forwardEfficiency > 0 && forwardEfficiency <= 1,
        "forward efficiency must be in (0, 1]");
    Require.that(backwardEfficiency > 0 && backwardEfficiency <= 1,
        "backward efficiency must be in (0, 1]");
    Require.that(narrowForwardEfficiency > 0 && narrowForwardEfficiency <= 1,
        "narrow-head forward efficiency must be in (0, 1]");
    Require.that(narrowBackwardEfficiency > 0 && narrowBackwardEfficiency <= 1,
        "narrow-head backward efficiency must be in (0, 1]");
  }

  /**
   * The fraction of the dense peak a kernel reaches at a head dimension: the narrow fraction at
   * {@link #NARROW_HEAD} and below, the full one at {@link #WIDE_HEAD} and above, linear between.
   *
   * @param backward whether it is the backward kernel
   * @param headDim the elements of one head's query, >= 1
   * @return the fraction, in (0, 1]
   */
  public double efficiency(boolean backward, int headDim) {
    Require.positive(headDim, "head dimension");
    double wide = backward ? backwardEfficiency : forwardEfficiency;
    double narrow = backward ? narrowBackwardEfficiency : narrowForwardEfficiency;
    double t = (Math.min(Math.max(headDim, NARROW_HEAD), WIDE_HEAD) - NARROW_HEAD)
        / (double) (WIDE_HEAD - NARROW_HEAD);
    return narrow + (wide - narrow) * t;
  }

  /**
   * The fused attention kernels of a GPU, if it has any: those of its architecture ({@link
   * Architecture#attention}), Ampere and later.
   *
   * @param gpu the GPU
   * @return the kernels' efficiencies, or empty on GPUs FlashAttention-2 does not run on
   */
  public static Optional<FusedAttentionKernels> of(GpuSpec gpu) {
    return gpu.architecture().attention();
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
