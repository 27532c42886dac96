package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;

/**
 * Which layers of a Hugging Face model attend within a sliding window, as the transformers
 * modeling files decide it: an explicit {@code layer_types} list when the config has one; else
 * Gemma 2 alternates windowed and global layers (the second of each pair global), Gemma 3 makes
 * every {@code sliding_window_pattern}-th layer (default 6) global, Qwen2 and Qwen3 window the
 * layers from {@code max_window_layers} on when {@code use_sliding_window} is true, Qwen3-MoE
 * windows every layer when it is true, GPT-OSS alternates windowed and global layers (the second
 * of each pair global), and Mistral, Mixtral, Phi-3 and StarCoder2 window every layer when
 * {@code sliding_window} is not null. Mixtral and Qwen3-MoE ignore {@code layer_types}, as their
 * modeling files do.
 */
final class HfWindows {
  private static final String SLIDING = "sliding_attention";
  private static final String FULL = "full_attention";

  private HfWindows() {}

  /**
   * The attention shape with its window.
   *
   * @param type the {@code model_type}
   * @param f the config's fields
   * @param layers the number of blocks
   * @param base the shape without a window
   * @return the shape with the window, its period and its first layer
   */
  static AttentionShape of(String type, HfFields f, int layers, AttentionShape base) {
    // Mixtral and Qwen3-MoE window every layer or none; their modeling files have no
    // layer_types.
    if (f.given("layer_types") && !type.equals("mixtral") && !type.equals("qwen3_moe")) {
      return fromTypes(f, layers, base);
    }
    return switch (type) {
      case "gemma2" -> with(base, f.positive("sliding_window"), 2, 0);
      case "gemma3_text" -> with(base, f.positive("sliding_window"),
          f.positive("sliding_window_pattern", 6), 0);
      case "qwen2", "qwen3" -> f.bool("use_sliding_window", false)
          ? with(base, f.positive("sliding_window"), 0, f.positive("max_window_layers")) : base;
      case "qwen3_moe" -> f.bool("use_sliding_window", false)
          ? with(base, f.positive("sliding_window"), 0, 0) : base;
      case "gpt_oss" -> f.root().path("sliding_window").isNull() ? base
          : with(base, f.positive("sliding_window"), 2, 0);
      case "llama4_text" -> llama4(f, layers, base);
      case "mistral", "mixtral", "phi3", "starcoder2" -> f.given("sliding_window")
          ? with(base, f.positive("sliding_window"), 0, 0) : base;
      default -> base;
    };
  }

  /**
   * Llama 4's attention: chunks of {@code attention_chunk_size} tokens on its rotary layers and
   * global attention on the others, the NoPE layers ({@code no_rope_layers}, 1 for a rotary
   * layer, or every {@code no_rope_layer_interval}-th layer without), as transformers'
   * Llama4TextConfig lays them out; no chunking when the chunk size is null.
   */
  /**
   * Refuses a non-null {@code sliding_window} where meshplan prices a family's attention over
   * the whole sequence (Jamba, Nemotron-H): a window would change the cost it prices.
   *
   * @param f the config's fields
   * @param type the {@code model_type}
   */
  static void refuseWindow(HfFields f, String type) {
    JsonNode w = f.root().get("sliding_window");
    if (w != null && !w.isNull()) {
      throw new io.meshplan.util.InputException(f.where() + ": field 'sliding_window' is "
          + io.meshplan.util.Words.clipped(w.toString()) + ", but meshplan prices a " + type
          + " model's attention layers over the whole sequence (as released: null)");
    }
  }

  private static AttentionShape llama4(HfFields f, int layers, AttentionShape base) {
    if (f.root().has("attention_chunk_size") && f.root().get("attention_chunk_size").isNull()) {
      return base;
    }
    int chunk = f.positive("attention_chunk_size");
    int every = f.positive("no_rope_layer_interval");
    JsonNode list = f.root().get("no_rope_layers");
    if (list == null || list.isNull() || list.isArray() && list.isEmpty()) {
      return base.withChunks(chunk, every);
    }
    if (!list.isArray() || list.size() != layers) {
      throw new InputException(f.where() + ": field 'no_rope_layers' must list 1 (rotary) or 0 "
          + "(no rotary positions) for each of the " + layers + " layers");
    }
    boolean[] rotary = new boolean[layers];
    int nope = -1;
    for (int i = 0; i < layers; i++) {
      JsonNode e = list.get(i);
      // Compared as a long: 2^32 + 1 is not 1 (an int read would wrap to it).
      if (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() != 0
          && e.longValue() != 1) {
        throw new InputException(f.where() + ": no_rope_layers[" + i + "] is " + e
            + "; it must be 1 (rotary, chunked attention) or 0 (no rotary positions, global)");
      }
      rotary[i] = e.asInt() == 1;
      if (!rotary[i] && nope < 0) {
        nope = i;
      }
    }
    AttentionShape s = base.withChunks(chunk, nope < 0 ? 0 : nope + 1);
    if (!matches(s, rotary)) {
      throw new InputException(f.where() + ": the pattern of no_rope_layers is not supported; "
          + "meshplan models a global layer without rotary positions every k layers");
    }
    return s;
  }

  private static AttentionShape with(AttentionShape b, int window, int every, int from) {
    return b.withWindow(window, every, from);
  }

  /** Reads {@code layer_types}: all one kind, a full prefix then windows, or a period. */
  private static AttentionShape fromTypes(HfFields f, int layers, AttentionShape base) {
    JsonNode n = f.root().get("layer_types");
    if (!n.isArray() || n.size() != layers) {
      throw new InputException(f.where() + ": field 'layer_types' must list one type for each "
          + "of the " + layers + " layers");
    }
    boolean[] sliding = new boolean[layers];
    int count = 0;
    for (int i = 0; i < layers; i++) {
      String t = n.get(i).asText();
      if (!n.get(i).isTextual() || !t.equals(SLIDING) && !t.equals(FULL)) {
        throw new InputException(f.where() + ": layer_types[" + i + "] is " + n.get(i)
            + "; meshplan knows '" + SLIDING + "' and '" + FULL + "'");
      }
      sliding[i] = t.equals(SLIDING);
      count += sliding[i] ? 1 : 0;
    }
    if (count == 0) {
      return base;
    }
    int window = f.positive("sliding_window");
    int firstFull = 0;
    while (firstFull < layers && sliding[firstFull]) {
      firstFull++;
    }
    int from = layers - count;
    AttentionShape[] candidates = {with(base, window, firstFull + 1, 0),
        with(base, window, 0, from)};
    for (AttentionShape c : candidates) {
      if (matches(c, sliding)) {
        return c;
      }
    }
    throw new InputException(f.where() + ": the pattern of layer_types is not supported; "
        + "meshplan models a global layer every k layers or global layers before windowed ones");
  }

  private static boolean matches(AttentionShape s, boolean[] sliding) {
    for (int i = 0; i < sliding.length; i++) {
      if (s.windowed(i) != sliding[i]) {
        return false;
      }
    }
    return true;
  }
}
