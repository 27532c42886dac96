package io.meshplan.model;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;

/**
 * The layers of a hybrid model as Megatron-Core's hybrid stack lays them out ({@code
 * megatron/core/ssm/mamba_hybrid_layer_allocation.py}; Hugging Face's {@code
 * hybrid_override_pattern} of Nemotron-H): one symbol per layer, each layer one pre-normed
 * residual sublayer: {@code M} a Mamba-2 mixer ({@link MambaShape}), {@code G} a Gated DeltaNet
 * mixer ({@link GdnShape}), {@code S} a Mamba-1 mixer ({@link Mamba1Shape}; meshplan's symbol,
 * Megatron-Core has no Mamba-1 layer), {@code *} self-attention, {@code -} a dense MLP, {@code E} a
 * mixture-of-experts MLP. A model whose layers each hold a mixer and an MLP (Qwen3-Next) is
 * written as two sublayers per layer ({@code GE}), as Megatron-Core's hybrid stack counts them.
 * A model without a pattern is an ordinary decoder, whose every block holds attention and an
 * MLP.
 *
 * @param symbols one symbol per layer, or empty for an ordinary decoder
 * @param mamba the Mamba-2 mixer of the {@code M} layers, or null without them
 * @param gdn the Gated DeltaNet mixer of the {@code G} layers, or null without them
 * @param attentionGate whether the attention layers gate their output per channel, {@code o
 *     sigmoid(x W_g)}, with the gate's matrix beside the queries' (Qwen3-Next's doubled {@code
 *     q_proj})
 * @param mamba1 the Mamba-1 mixer of the {@code S} layers, or null without them
 * @param mtp the layers of one multi-token prediction module, symbols of the same kinds, or
 *     empty without one: Nemotron 3 Super's {@code mtp_hybrid_override_pattern} {@code *E} (an
 *     attention and an expert layer), Megatron-Core's MTP pattern after the unified pattern's
 *     {@code /} ({@code megatron/core/models/hybrid/hybrid_layer_allocation.py} at d98e8a6,
 *     45-71, 200-268). Each of its symbols is one the model's own layers have, whose prices it
 *     shares
 */
public record HybridPattern(String symbols, MambaShape mamba, GdnShape gdn,
    boolean attentionGate, Mamba1Shape mamba1, String mtp) implements java.io.Serializable {
  private static final long serialVersionUID = 2L;

  /**
   * A pattern without a multi-token prediction module.
   *
   * @param symbols one symbol per layer, or empty for an ordinary decoder
   * @param mamba the Mamba-2 mixer, or null without {@code M} layers
   * @param gdn the Gated DeltaNet mixer, or null without {@code G} layers
   * @param attentionGate whether the attention layers gate their output
   * @param mamba1 the Mamba-1 mixer, or null without {@code S} layers
   */
  public HybridPattern(String symbols, MambaShape mamba, GdnShape gdn, boolean attentionGate,
      Mamba1Shape mamba1) {
    this(symbols, mamba, gdn, attentionGate, mamba1, "");
  }

  /** An ordinary decoder: no pattern. */
  public static final HybridPattern NONE = new HybridPattern("", null);

  /** A Mamba-2 layer. */
  public static final char MAMBA = 'M';
  /** A Mamba-1 (selective scan) layer. */
  public static final char SELECTIVE = 'S';
  /** A Gated DeltaNet layer. */
  public static final char GDN = 'G';
  /** A self-attention layer. */
  public static final char ATTENTION = '*';
  /** A dense MLP layer. */
  public static final char MLP = '-';
  /** A mixture-of-experts MLP layer. */
  public static final char MOE = 'E';

  /** Validates the symbols and that Mamba layers have a mixer. */
  public HybridPattern {
    Require.nonNull(symbols, "symbols");
    // By code point: a character outside the Basic Multilingual Plane is one layer, named whole.
    for (int i = 0, layer = 0; i < symbols.length(); layer++) {
      int c = symbols.codePointAt(i);
      int at = layer;
      Require.that(c < Character.MIN_SUPPLEMENTARY_CODE_POINT && known((char) c), () -> "hybrid "
          + "layer " + at + " is " + io.meshplan.util.Words.character(c) + "; the symbols are M "
          + "(Mamba-2), S (Mamba-1), G (Gated DeltaNet), * (attention), - (MLP) and E (mixture "
          + "of experts)");
      i += Character.charCount(c);
    }
    Require.that(symbols.indexOf(MAMBA) < 0 == (mamba == null), () -> "Mamba layers need a mixer "
        + "shape, and a mixer shape Mamba layers");
    Require.that(symbols.indexOf(GDN) < 0 == (gdn == null),
        "Gated DeltaNet layers need a mixer shape, and a mixer shape Gated DeltaNet layers");
    Require.that(symbols.indexOf(SELECTIVE) < 0 == (mamba1 == null), () -> "Mamba-1 layers need a "
        + "mixer shape, and a mixer shape Mamba-1 layers");
    Require.nonNull(mtp, "mtp");
    int mtpLayers = mtp.codePointCount(0, mtp.length());
    Require.that(mtpLayers <= MAX_MTP_LAYERS, () -> "a multi-token prediction module of "
        + mtpLayers + " layers; at most " + MAX_MTP_LAYERS);
    for (int i = 0, layer = 0; i < mtp.length(); layer++) {
      int c = mtp.codePointAt(i);
      int at = layer;
      Require.that(symbols.indexOf(c) >= 0, () -> "multi-token prediction layer " + at + " is "
          + io.meshplan.util.Words.character(c) + ", a kind of layer the model's own pattern "
          + "does not have; meshplan prices a prediction layer as the model's own layers of its "
          + "kind");
      i += Character.charCount(c);
    }
  }

  /** The most layers of one multi-token prediction module (Nemotron 3 Super's has 2). */
  public static final int MAX_MTP_LAYERS = 64;

  /**
   * Refuses a prediction module that names no layer or more than {@link #MAX_MTP_LAYERS}: what a
   * config.json field or a flag gives as a module must name its layers ({@link #withMtp}
   * clears the module with none).
   *
   * @param what the field or flag, for the message
   * @param layers the module's symbols
   * @throws InputException naming {@code what} and the count
   */
  public static void requireModuleLayers(String what, String layers) {
    int n = layers.codePointCount(0, layers.length());
    if (n == 0 || n > MAX_MTP_LAYERS) {
      throw new InputException(what + " must name 1 to " + MAX_MTP_LAYERS + " layers, got " + n);
    }
  }

  /**
   * This pattern with a multi-token prediction module of these layers.
   *
   * @param layers the module's symbols, empty for none
   * @return the pattern
   */
  public HybridPattern withMtp(String layers) {
    return new HybridPattern(symbols, mamba, gdn, attentionGate, mamba1, layers);
  }

  /**
   * A pattern of Mamba-2, attention and MLP layers.
   *
   * @param symbols one symbol per layer
   * @param mamba the Mamba-2 mixer, or null without {@code M} layers
   */
  public HybridPattern(String symbols, MambaShape mamba) {
    this(symbols, mamba, null, false, null);
  }

  /** Every symbol of a pattern meshplan builds or reads. */
  private static final String ALL_SYMBOLS = "MSG*-E";

  private static boolean known(char c) {
    return ALL_SYMBOLS.indexOf(c) >= 0;
  }

  /**
   * The symbols of Nemotron-H's {@code hybrid_override_pattern}: Mamba-2, attention, MLP and
   * mixture of experts. transformers' {@code configuration_nemotron_h.py} names {@code M}, {@code
   * *} and {@code -} in its check of the pattern (the fork Knarf04/transformers at 8b8d091),
   * NVIDIA's Nemotron 3 code of the same file adds {@code E} ("M: Mamba2, *: Attention, -: MLP,
   * E: MoE"), and huggingface/transformers at cfeb552 maps {@code M}, {@code E} and {@code *} to
   * its layer types. {@code S} and {@code G} are meshplan's own symbols for the Jamba and
   * Qwen3-Next layouts it builds, never a Nemotron-H config's.
   */
  public static final String NEMOTRON_H_SYMBOLS = "M*-E";

  /**
   * Reads Nemotron-H's {@code hybrid_override_pattern}, with the symbols its config may hold
   * ({@link #NEMOTRON_H_SYMBOLS}).
   *
   * @param text the symbols, e.g. {@code M-M-M*-}
   * @param layers the model's layers, which the pattern must name one by one
   * @param mamba the mixer of its Mamba layers
   * @return the pattern
   * @throws InputException naming a symbol, among those Nemotron-H's pattern takes, or a length
   *     that is wrong
   */
  public static HybridPattern parse(String text, int layers, MambaShape mamba) {
    check(text, layers, NEMOTRON_H_SYMBOLS);
    return parse(text, layers, mamba, null, false);
  }

  /**
   * Checks a pattern's length and that each symbol is one of {@code accepted}, whose names the
   * refusal lists.
   */
  private static void check(String text, int layers, String accepted) {
    int n = text.codePointCount(0, text.length());
    if (n != layers) {
      throw new InputException("hybrid_override_pattern names " + n + " layers, not the model's "
          + layers);
    }
    for (int i = 0, layer = 0; i < text.length(); layer++) {
      int c = text.codePointAt(i);
      i += Character.charCount(c);
      if (accepted.indexOf(c) < 0) {
        StringBuilder names = new StringBuilder();
        for (int k = 0; k < accepted.length(); k++) {
          names.append(k == 0 ? "" : k == accepted.length() - 1 ? " and " : ", ")
              .append(accepted.charAt(k)).append(" (").append(name(accepted.charAt(k)))
              .append(')');
        }
        throw new InputException("hybrid_override_pattern's layer " + layer + " is "
            + io.meshplan.util.Words.character(c) + "; the symbols are " + names);
      }
    }
  }

  private static String name(char symbol) {
    return switch (symbol) {
      case MAMBA -> "Mamba-2";
      case SELECTIVE -> "Mamba-1";
      case GDN -> "Gated DeltaNet";
      case ATTENTION -> "attention";
      case MLP -> "MLP";
      default -> "mixture of experts";
    };
  }

  /**
   * Reads a pattern with every kind of mixer.
   *
   * @param text the symbols
   * @param layers the model's layers (sublayers), which the pattern must name one by one
   * @param mamba the mixer of its Mamba layers, kept only when it has some
   * @param gdn the mixer of its Gated DeltaNet layers, kept only when it has some
   * @param attentionGate whether its attention gates its output
   * @return the pattern
   * @throws InputException naming a symbol or length that is wrong
   */
  public static HybridPattern parse(String text, int layers, MambaShape mamba, GdnShape gdn,
      boolean attentionGate) {
    return parse(text, layers, mamba, gdn, attentionGate, null);
  }

  /**
   * Reads a pattern with every kind of mixer, Mamba-1 too.
   *
   * @param text the symbols
   * @param layers the model's layers (sublayers), which the pattern must name one by one
   * @param mamba the mixer of its Mamba-2 layers, kept only when it has some
   * @param gdn the mixer of its Gated DeltaNet layers, kept only when it has some
   * @param attentionGate whether its attention gates its output
   * @param mamba1 the mixer of its Mamba-1 layers, kept only when it has some
   * @return the pattern
   * @throws InputException naming a symbol or length that is wrong
   */
  public static HybridPattern parse(String text, int layers, MambaShape mamba, GdnShape gdn,
      boolean attentionGate, Mamba1Shape mamba1) {
    check(text, layers, ALL_SYMBOLS);
    return new HybridPattern(text, text.indexOf(MAMBA) >= 0 ? mamba : null,
        text.indexOf(GDN) >= 0 ? gdn : null, attentionGate,
        text.indexOf(SELECTIVE) >= 0 ? mamba1 : null);
  }

  /**
   * Whether the model is a hybrid.
   *
   * @return true when it has a pattern
   */
  public boolean on() {
    return !symbols.isEmpty();
  }

  /**
   * The symbol of a layer.
   *
   * @param layer the layer, from 0
   * @return its symbol
   */
  public char at(int layer) {
    return symbols.charAt(layer);
  }

  /**
   * The layers of one symbol among {@code first..last}.
   *
   * @param symbol the symbol
   * @param first the first layer
   * @param last the last layer, inclusive
   * @return how many
   */
  public int count(char symbol, int first, int last) {
    int n = 0;
    for (int i = Math.max(first, 0); i <= last && i < symbols.length(); i++) {
      n += symbols.charAt(i) == symbol ? 1 : 0;
    }
    return n;
  }

  /**
   * The first layer of a symbol.
   *
   * @param symbol the symbol
   * @return its index, or -1 when the pattern has none
   */
  public int first(char symbol) {
    return symbols.indexOf(symbol);
  }

  /**
   * The same pattern cut to its first {@code layers} layers (a shorter model for tests), with its
   * multi-token prediction module where the shorter pattern still has each of its layers' kinds.
   *
   * @param layers the layers kept
   * @return the pattern
   */
  public HybridPattern truncated(int layers) {
    String s = symbols.substring(0, Math.min(layers, symbols.length()));
    // The prediction module stays where the shorter model still has each of its layers' kinds.
    boolean keep = mtp.chars().allMatch(c -> s.indexOf(c) >= 0);
    return new HybridPattern(s, s.indexOf(MAMBA) >= 0 ? mamba : null,
        s.indexOf(GDN) >= 0 ? gdn : null, attentionGate,
        s.indexOf(SELECTIVE) >= 0 ? mamba1 : null, keep ? mtp : "");
  }
}
