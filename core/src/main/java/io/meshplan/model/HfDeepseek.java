package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;

/**
 * The Hugging Face {@code deepseek_v3} family (DeepSeek-V3 and R1; DeepSeek-AI 2024,
 * arXiv:2412.19437), as transformers' {@code DeepseekV3Config} and DeepSeek's own released
 * config name its fields:
 *
 * <ul>
 *   <li>attention: multi-head latent attention ({@link Mla}) of {@code q_lora_rank} (null for
 *       uncompressed queries), {@code kv_lora_rank}, {@code qk_nope_head_dim}, {@code
 *       qk_rope_head_dim} and {@code v_head_dim};
 *   <li>experts: {@code n_routed_experts} SwiGLU experts of {@code moe_intermediate_size}, {@code
 *       num_experts_per_tok} per token, {@code n_shared_experts} shared experts of the same size;
 *       block {@code i} routes to experts when {@code i >= first_k_dense_replace} and {@code i %
 *       moe_layer_freq == 0} (DeepSeek's modeling file; transformers reads only the first rule,
 *       and the released configs have frequency 1), the others are dense MLPs of {@code
 *       intermediate_size};
 *   <li>{@code num_nextn_predict_layers} multi-token prediction modules (absent: none), which the
 *       released checkpoints carry and training runs (transformers' inference skips them).
 * </ul>
 *
 * The router's sigmoid scores, group-limited selection ({@code n_group}, {@code topk_group}) and
 * bias-based balancing cost a few operations per token and expert, priced as the softmax router.
 */
final class HfDeepseek {
  private HfDeepseek() {}

  /**
   * Reads the latent attention.
   *
   * @param f the fields, with the family's defaults
   * @return the sizes
   */
  static Mla mla(HfFields f) {
    JsonNode q = f.root().get("q_lora_rank");
    int qLora = q != null && q.isNull() ? 0 : f.positive("q_lora_rank");
    int rope = f.positive("qk_rope_head_dim");
    if (rope % 2 != 0) {
      throw new InputException(f.where() + ": field 'qk_rope_head_dim' must be even (rotary "
          + "embeddings rotate pairs), got " + rope);
    }
    // Mla bounds the sizes (HfConfigReader names the file on its refusal).
    return new Mla(qLora, f.positive("kv_lora_rank"), f.positive("qk_nope_head_dim"), rope,
        f.positive("v_head_dim"));
  }

  /** Refuses a field that is given but not one of its names (absent or null passes). */
  private static void enumField(HfFields f, String key, List<String> names) {
    JsonNode n = f.root().get(key);
    if (n != null && !n.isNull() && !(n.isTextual() && names.contains(n.asText()))) {
      throw new InputException(f.where() + ": field '" + key + "' is "
          + io.meshplan.util.Words.clipped(n.toString()) + "; meshplan reads "
          + String.join(", ", names));
    }
  }

  /**
   * Reads the experts and the dense blocks among them.
   *
   * @param f the fields
   * @param layers the blocks
   * @return the layer's shape
   */
  static MoeShape moe(HfFields f, int layers) {
    // The router's method and scores, by the names DeepSeek's modeling code tests: a typo would
    // be priced as a router that does not exist.
    enumField(f, "topk_method", List.of("noaux_tc", "group_limited_greedy", "greedy"));
    enumField(f, "scoring_func", List.of("sigmoid", "softmax"));
    int experts = HfMoe.experts(f, "n_routed_experts");
    int topK = HfMoe.topK(f, experts, "n_routed_experts");
    int expertFfn = f.positive("moe_intermediate_size");
    JsonNode sharedNode = f.root().get("n_shared_experts");
    // Compared as a long: 2^32 is not 0 (an int read would wrap to it), and f.positive refuses it.
    int shared = sharedNode != null && (sharedNode.isNull() || sharedNode.isIntegralNumber()
        && sharedNode.canConvertToLong() && sharedNode.longValue() == 0) ? 0
        : f.positive("n_shared_experts");
    int firstMoe = nonNegative(f, "first_k_dense_replace");
    int every = f.positive("moe_layer_freq", 1);
    List<Integer> dense = new ArrayList<>();
    for (int i = 0; i < layers; i++) {
      if (i < firstMoe || i % every != 0) {
        dense.add(i);
      }
    }
    if (dense.size() == layers) {
      throw new InputException(f.where() + ": no block routes to experts (first_k_dense_replace "
          + firstMoe + ", moe_layer_freq " + every + ", " + layers + " blocks)");
    }
    int[] group = HfMoe.groupLimit(f, experts, topK);
    MoeShape moe = new MoeShape(experts, topK, expertFfn,
        Math.multiplyExact(shared, expertFfn), false)
        .withGroupLimit(group[0], group[0] == 1 ? 1 : group[1]);
    return dense.isEmpty() ? moe : moe.withDenseLayers(dense, f.positive("intermediate_size"));
  }

  /**
   * The multi-token prediction modules.
   *
   * @param f the fields
   * @return {@code num_nextn_predict_layers}, 0 when absent
   */
  static int mtp(HfFields f) {
    int depth = nonNegative(f, "num_nextn_predict_layers");
    if (depth > Architecture.MAX_MTP_DEPTH) {
      throw new InputException(f.where() + ": field 'num_nextn_predict_layers' must be at most "
          + Architecture.MAX_MTP_DEPTH + ", got " + depth);
    }
    return depth;
  }

  /** A non-negative integer field; when absent or null, the family's default, else 0. */
  private static int nonNegative(HfFields f, String key) {
    JsonNode n = f.root().get(key);
    if (n == null || n.isNull()) {
      return f.defaults().get(key) instanceof Integer d ? d : 0;
    }
    if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < 0) {
      throw new InputException(f.where() + ": field '" + key + "' must be a non-negative "
          + "integer, got " + n);
    }
    return n.asInt();
  }
}
