package io.meshplan.cli;

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
      + "frameworks ran before 2023), or auto: flash on A100 and later, unfused on V100 "
      + "(default: ${DEFAULT-VALUE}). One of: ${COMPLETION-CANDIDATES}.")
  String attention = "auto";

  /**
   * The attention asked for.
   *
   * @return empty for auto (the GPU's default, or a plan file's)
   * @throws InputException for an unknown value
   */
  Optional<Attention> chosen() {
    String word = Choices.pick("--attention", attention, new Choices.Attentions());
    return word.equals("auto") ? Optional.empty() : Optional.of(Attention.parse(word));
  }
}
