package io.meshplan.model;

/**
 * Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models", MLSys'23).
 */
public enum Recompute {
  /** Every activation the backward needs is kept from the forward. */
  NONE,
  /** Only the attention core (QK^T, softmax, dropout, attention over V) is recomputed. */
  SELECTIVE,
  /** Only each block's input is kept; the whole block forward runs again before its backward. */
  FULL;

  /**
   * The lower-case name used on the command line and in plan files.
   *
   * @return {@code none}, {@code selective} or {@code full}
   */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * Parses a label.
   *
   * @param text {@code none}, {@code selective} or {@code full} (any case)
   * @return the value
   * @throws io.meshplan.util.InputException naming the valid values
   */
  public static Recompute parse(String text) {
    for (Recompute r : values()) {
      if (r.label().equalsIgnoreCase(text == null ? "" : text.trim())) {
        return r;
      }
    }
    throw new io.meshplan.util.InputException("recompute '" + text
        + "' is unknown; use none, selective or full");
  }
}
