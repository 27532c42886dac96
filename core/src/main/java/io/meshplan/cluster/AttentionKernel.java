package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which fused attention kernel a run used: the software that runs the attention core, priced by
 * GPU architecture and head dimension in {@link FusedAttentionKernels#of(Architecture,
 * AttentionKernel)}. Where no kernel is named, a GPU runs its architecture's default ({@link
 * #defaultFor}), the kernel today's stacks run there.
 */
public enum AttentionKernel {
  /**
   * FlashAttention-2 (Dao, arXiv:2307.08691), the CUDA kernels of the {@code flash-attn} 2.x
   * package; Ampere and Hopper.
   */
  FLASH2,
  /** FlashAttention-3 (Shah et al., arXiv:2407.08608): written for Hopper only. */
  FLASH3,
  /** cuDNN's fused scaled-dot-product attention, which Transformer Engine calls. */
  CUDNN,
  /**
   * A FlashAttention-2-era kernel written in Triton, as PyTorch 2.0-era stacks (llm-foundry's
   * {@code attn_impl: triton}) ran it.
   */
  TRITON,
  /**
   * cuDNN's fused attention with FP8 operands, which Transformer Engine runs under its FP8 recipe
   * with {@code fp8_dot_product_attention} (Megatron-LM's {@code --fp8-dot-product-attention},
   * Megatron-Bridge's {@code mixed_precision.fp8_dot_product_attention}): per-tensor scaled FP8
   * under delayed, current and NVFP4 scaling, MXFP8 under MXFP8 block scaling
   * ({@link FusedAttentionKernels#fp8}). Needs the FP8 training precision.
   */
  CUDNN_FP8;

  /**
   * The word on the command line and in plan files.
   *
   * @return e.g. {@code flash2}, {@code cudnn-fp8}
   */
  public String word() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * The words, in declaration order.
   *
   * @return {@code flash2, flash3, cudnn, triton, cudnn-fp8}
   */
  public static List<String> words() {
    return Arrays.stream(values()).map(AttentionKernel::word).toList();
  }

  /**
   * Reads a word, case-insensitive.
   *
   * @param word the word
   * @return the kernel
   * @throws InputException naming the word and the kernels
   */
  public static AttentionKernel parse(String word) {
    String w = word == null ? "" : Words.trimmed(word).toLowerCase(Locale.ROOT);
    for (AttentionKernel k : values()) {
      if (k.word().equals(w)) {
        return k;
      }
    }
    throw new InputException("attention kernel '" + word + "' is unknown; use one of "
        + String.join(", ", words()));
  }

  /**
   * The kernel today's stacks run on an architecture, whose prices are meshplan's default
   * fused-attention prices there: FlashAttention-2 on Ampere and on AMD's CDNA 3 (the ROCm
   * port and AMD's kernels), cuDNN (through Transformer Engine) on Hopper and Blackwell, none on
   * Volta and on CDNA 4 (no priced kernel).
   *
   * @param architecture the GPU's architecture
   * @return the kernel, or empty where there are no fused kernels
   */
  public static Optional<AttentionKernel> defaultFor(Architecture architecture) {
    return switch (architecture) {
      case VOLTA -> Optional.empty();
      case AMPERE, CDNA3 -> Optional.of(FLASH2);
      case HOPPER, BLACKWELL -> Optional.of(CUDNN);
      case CDNA4 -> Optional.empty();
    };
  }
}
