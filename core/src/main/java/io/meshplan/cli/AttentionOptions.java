package io.meshplan.cli;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.model.Attention;
import io.meshplan.util.InputException;
import java.util.Optional;
import picocli.CommandLine.Option;

/** {@code --attention}, shared by {@code plan}, {@code simulate} and {@code export}. */
final class AttentionOptions {
  @Option(names = "--attention", defaultValue = "auto",
      completionCandidates = Choices.Attentions.class, description = "How the attention core "
      + "runs: flash (one fused kernel: FlashAttention-2/3 or cuDNN, which never stores the "
      + "sequence x sequence scores), unfused (scores, softmax and dropout in memory, as "
      + "frameworks ran before 2023), or auto: flash on A100 and later, unfused on V100; "
      + "or the fused kernel a run used, priced from its published benchmarks: flash2 "
      + "(FlashAttention-2), flash3 (FlashAttention-3, Hopper only), cudnn (cuDNN, as "
      + "Transformer Engine runs it), triton (the FlashAttention-2 kernel in Triton, priced as "
      + "flash2), cudnn-fp8 (cuDNN with FP8 operands, as Transformer Engine's "
      + "fp8_dot_product_attention runs it under --dtype fp8; Hopper and Blackwell); flash is "
      + "the GPU's default kernel: flash2 on Ampere, cudnn on Hopper and Blackwell (default: "
      + "${DEFAULT-VALUE}). One of: ${COMPLETION-CANDIDATES}.")
  String attention = "auto";

  /**
   * The attention asked for.
   *
   * @return empty for auto (the GPU's default, or a plan file's)
   * @throws InputException for an unknown value
   */
  Optional<Attention> chosen() {
    String word = Choices.pick("--attention", attention, new Choices.Attentions());
    if (word.equals("auto")) {
      return Optional.empty();
    }
    return Optional.of(kernel().isPresent() ? Attention.FLASH : Attention.parse(word));
  }

  /**
   * The fused kernel asked for by name.
   *
   * @return the kernel, or empty for auto, flash (the GPU's default kernel) and unfused
   * @throws InputException for an unknown value
   */
  Optional<AttentionKernel> kernel() {
    String word = Choices.pick("--attention", attention, new Choices.Attentions());
    return AttentionKernel.words().contains(word) ? Optional.of(AttentionKernel.parse(word))
        : Optional.empty();
  }
}
