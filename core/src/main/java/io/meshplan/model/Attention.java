package io.meshplan.model;

import io.meshplan.util.Words;
import java.util.Locale;

/** How a transformer's attention core (scores, softmax, weighted sum) runs. */
public enum Attention {
  /**
   * One fused kernel (FlashAttention-2/3, cuDNN): the scores are never stored, the backward
   * recomputes them, and causal masking skips half of their work (Dao, arXiv:2307.08691). Needs
   * Ampere or later.
   */
  FLASH,
  /**
   * Separate kernels that write the batch x heads x sequence x sequence scores, their softmax
   * and dropout to memory and keep them for the backward pass, as frameworks ran attention
   * before 2023 (Megatron-LM in Narayanan et al. SC'21; Korthikanti et al. MLSys'23).
   */
  UNFUSED;

  /**
   * The name on the command line and in plan files.
   *
   * @return {@code flash} or {@code unfused}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Reads a label.
   *
   * @param text {@code flash} or {@code unfused}, any case
   * @return the mode
   * @throws IllegalArgumentException for anything else
   */
  public static Attention parse(String text) {
    for (Attention a : values()) {
      if (a.label().equalsIgnoreCase(Words.trimmed(text))) {
        return a;
      }
    }
    throw new IllegalArgumentException("attention '" + text + "' is unknown; use flash or "
        + "unfused");
  }
}
