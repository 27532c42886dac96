package io.meshplan.cli;

import io.meshplan.model.Attention;
import io.meshplan.util.InputException;
import java.util.Optional;
import picocli.CommandLine.Option;

/** {@code --attention}, shared by {@code plan}, {@code simulate} and {@code export}. */
final class AttentionOptions {
  @Option(names = "--attention", defaultValue = "auto", description = "How the attention core "
      + "runs: flash (one fused kernel: FlashAttention-2/3 or cuDNN, which never stores the "
      + "sequence x sequence scores), unfused (scores, softmax and dropout in memory, as "
      + "frameworks ran before 2023), or auto: flash on A100 and later, unfused on V100 "
      + "(default: ${DEFAULT-VALUE}).")
  String attention = "auto";

  /**
   * The attention asked for.
   *
   * @return empty for auto (the GPU's default, or a plan file's)
   * @throws InputException for an unknown value
   */
  Optional<Attention> chosen() {
    if ("auto".equalsIgnoreCase(attention.trim())) {
      return Optional.empty();
    }
    try {
      return Optional.of(Attention.parse(attention));
    } catch (IllegalArgumentException e) {
      throw new InputException("--attention '" + attention + "' is unknown; use flash, unfused "
          + "or auto");
    }
  }
}
