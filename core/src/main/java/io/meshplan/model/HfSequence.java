package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.Optional;

/**
 * The default sequence of a model read from its {@code config.json}: the sequence it was
 * pre-trained on, so that a config and the preset of the same model plan the same workload.
 *
 * <p>{@code max_position_embeddings} is the longest context a model serves, which a long-context
 * stage reaches after pre-training; where a config says the context before that stage, it is the
 * workload: {@code rope_scaling.original_max_position_embeddings} (Llama 3.1's {@code llama3}
 * scaling, DeepSeek-V3's and gpt-oss's YaRN), else the top-level {@code
 * original_max_position_embeddings} (Phi-3's LongRoPE), else {@code max_position_embeddings}.
 * That is then capped at {@link #CAP} tokens, the longest main pre-training sequence of the
 * reports behind the catalog's presets: Llama 3 pre-trains on 8,192 tokens and extends to 128K in
 * a separate long-context stage (Dubey et al. 2024, "The Llama 3 Herd of Models", sections 3.4.1
 * and 3.4.2); DeepSeek-V3 on 4K, then YaRN to 32K and 128K (arXiv:2412.19437, sections 4.2 and
 * 4.3); Qwen3 on 4,096 in its general and reasoning stages and 32,768 only in its long-context
 * stage (Qwen3 Technical Report, section 3.2). Mixtral, pre-trained at 32K (Jiang et al. 2024,
 * section 2), is the exception the cap cuts; its preset keeps 32,768. Whenever the default is
 * below {@code max_position_embeddings}, a note says so.
 *
 * @param tokens the default sequence, tokens
 * @param note what was chosen and why, when it is below {@code max_position_embeddings}
 */
public record HfSequence(int tokens, Optional<String> note) {
  /** The longest default sequence, tokens (see the class comment). */
  public static final int CAP = 8192;

  /** Checks the length. */
  public HfSequence {
    if (tokens <= 0) {
      throw new IllegalArgumentException("a sequence must be positive, got " + tokens);
    }
    note = note == null ? Optional.empty() : note;
  }

  /**
   * The default sequence of a config.
   *
   * @param text the config object (a Gemma 3's {@code text_config})
   * @param where the file, for messages
   * @param maxPositions its {@code max_position_embeddings}
   * @return the sequence and, when it is below {@code maxPositions}, a note
   */
  static HfSequence of(JsonNode text, String where, int maxPositions) {
    int trained = maxPositions;
    String from = "max_position_embeddings " + maxPositions;
    JsonNode scaling = text.path("rope_scaling");
    JsonNode original = scaling.isObject() ? scaling.path("original_max_position_embeddings")
        : text.path("original_max_position_embeddings");
    String key = scaling.isObject() ? "rope_scaling.original_max_position_embeddings"
        : "original_max_position_embeddings";
    if (!original.isMissingNode() && !original.isNull()) {
      if (!original.isIntegralNumber() || !original.canConvertToInt() || original.asInt() <= 0) {
        throw new InputException(where + ": field '" + key + "' must be a positive integer below"
            + " 2^31, got " + original);
      }
      if (original.asInt() < maxPositions) {
        trained = original.asInt();
        from = key + " " + trained + ", the context before max_position_embeddings "
            + maxPositions;
      }
    }
    int tokens = Math.min(trained, CAP);
    if (tokens == maxPositions) {
      return new HfSequence(tokens, Optional.empty());
    }
    String why = trained > CAP ? from + ", capped at " + CAP + ", the longest pre-training"
        + " sequence meshplan takes by default" : from;
    return new HfSequence(tokens, Optional.of(where + ": planning sequences of " + tokens
        + " tokens (" + why + "); give --seq for another length"));
  }
}
