package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;

/**
 * The mixture-of-experts layer of the Hugging Face MoE families, as their transformers modeling
 * files build it:
 *
 * <ul>
 *   <li>{@code mixtral} (Jiang et al. 2024): {@code num_local_experts} experts (default 8), each
 *       a SwiGLU MLP of {@code intermediate_size}, {@code num_experts_per_tok} (default 2) per
 *       token, a router without bias.
 *   <li>{@code qwen3_moe} (Qwen3 Technical Report, 2025): {@code num_experts} (default 128) SwiGLU
 *       experts of {@code moe_intermediate_size} (default 768), {@code num_experts_per_tok}
 *       (default 8), no shared expert. Layer {@code i} is a mixture-of-experts layer when it is
 *       not in {@code mlp_only_layers} and {@code (i + 1) % decoder_sparse_step == 0}; the others
 *       are dense MLPs of {@code intermediate_size}.
 *   <li>{@code olmoe} (Muennighoff et al. 2024): {@code num_experts} SwiGLU experts of {@code
 *       intermediate_size}, {@code num_experts_per_tok} per token, on every block, a router
 *       without bias, no shared expert.
 *   <li>{@code gpt_oss} (OpenAI 2025, gpt-oss model card): {@code num_local_experts} (default
 *       128) experts of {@code intermediate_size} (default 2880) with biases on the fused
 *       gate/up and the down matrices, a router with a bias, {@code num_experts_per_tok} (default
 *       4). The released configs also carry OpenAI's own name {@code experts_per_token}, which
 *       transformers does not read; the two must agree.
 * </ul>
 */
final class HfMoe {
  /** The most experts read ({@link MoeShape#MAX_EXPERTS}). */
  static final int MAX_EXPERTS = MoeShape.MAX_EXPERTS;

  private HfMoe() {}

  /**
   * Whether a {@code model_type} is one of the MoE families.
   *
   * @param type the {@code model_type}
   * @return true for {@code mixtral}, {@code qwen3_moe} and {@code gpt_oss}
   */
  static boolean routed(String type) {
    return type.equals("mixtral") || type.equals("qwen3_moe") || type.equals("gpt_oss")
        || type.equals("llama4_text") || type.equals("olmoe");
  }

  /**
   * Llama 4's experts: {@code num_local_experts} of {@code intermediate_size}, a shared expert
   * of the same size, on the blocks of {@code moe_layers} (or every {@code
   * interleave_moe_layer_step}-th block, from block {@code step - 1}, as transformers'
   * Llama4TextConfig lays them out); the other blocks dense with {@code intermediate_size_mlp}.
   */
  private static MoeShape llama4(HfFields f, int layers) {
    int experts = experts(f, "num_local_experts");
    int topK = topK(f, experts, "num_local_experts");
    int ffn = f.positive("intermediate_size");
    java.util.Set<Integer> routed = layerSet(f, "moe_layers", layers);
    JsonNode given = f.root().get("moe_layers");
    if (given == null || given.isNull()) {
      int step = f.positive("interleave_moe_layer_step");
      for (int i = step - 1; i < layers; i += step) {
        routed.add(i);
      }
    }
    if (routed.isEmpty()) {
      throw new InputException(f.where() + ": no block routes to experts (moe_layers, "
          + "interleave_moe_layer_step); meshplan reads Llama 4 configs with experts");
    }
    java.util.List<Integer> dense = new java.util.ArrayList<>();
    for (int i = 0; i < layers; i++) {
      if (!routed.contains(i)) {
        dense.add(i);
      }
    }
    MoeShape moe = new MoeShape(experts, topK, ffn, ffn, false);
    return dense.isEmpty() ? moe : moe.withDenseLayers(dense, f.positive("intermediate_size_mlp"));
  }

  /**
   * Reads the experts of a config of an MoE family.
   *
   * @param type {@code mixtral}, {@code qwen3_moe} or {@code gpt_oss}
   * @param f the config's fields, with the family's defaults
   * @param layers the number of blocks
   * @return the layer's shape
   * @throws InputException naming the field when the layers are not all MoE layers or the
   *     expert counts are inconsistent
   */
  static MoeShape read(String type, HfFields f, int layers) {
    if (type.equals("llama4_text")) {
      return llama4(f, layers);
    }
    boolean qwen = type.equals("qwen3_moe");
    java.util.List<Integer> dense = qwen ? denseLayers(f, layers) : java.util.List.of();
    String expertsKey = qwen || type.equals("olmoe") ? "num_experts" : "num_local_experts";
    int experts = experts(f, expertsKey);
    int topK = topK(f, experts, expertsKey);
    if (type.equals("gpt_oss") && f.given("experts_per_token")
        && f.positive("experts_per_token") != topK) {
      throw new InputException(f.where() + ": field 'experts_per_token' "
          + f.positive("experts_per_token") + " disagrees with num_experts_per_tok " + topK
          + " (transformers reads num_experts_per_tok); make them equal");
    }
    int expertFfn = f.positive(qwen ? "moe_intermediate_size" : "intermediate_size");
    MoeShape moe = new MoeShape(experts, topK, expertFfn, 0, type.equals("gpt_oss"));
    return dense.isEmpty() ? moe : moe.withDenseLayers(dense, f.positive("intermediate_size"));
  }

  /**
   * {@code num_experts_per_tok}: a positive integer up to the expert count.
   *
   * @param f the fields
   * @param experts the routed experts
   * @param expertsKey the field the experts were read from, for the message
   * @return experts per token
   */
  /**
   * The layer numbers a config's list field holds ({@code mlp_only_layers}, {@code moe_layers}),
   * each from 0 to {@code layers - 1}.
   *
   * @return the numbers, empty when the field is absent or null
   * @throws InputException naming the field or entry that is not a layer number
   */
  private static java.util.Set<Integer> layerSet(HfFields f, String key, int layers) {
    java.util.Set<Integer> out = new java.util.HashSet<>();
    JsonNode list = f.root().get(key);
    if (list == null || list.isNull()) {
      return out;
    }
    if (!list.isArray()) {
      throw new InputException(f.where() + ": field '" + key + "' must be a list of layer "
          + "numbers, got " + shown(list));
    }
    for (int i = 0; i < list.size(); i++) {
      JsonNode e = list.get(i);
      if (!e.isIntegralNumber() || !e.canConvertToInt() || e.asInt() < 0
          || e.asInt() >= layers) {
        throw new InputException(f.where() + ": " + key + "[" + i + "] is " + shown(e)
            + "; layers are numbered 0 to " + (layers - 1));
      }
      out.add(e.asInt());
    }
    return out;
  }

  /** A value for a message, cut at 40 characters (a config may hold anything there). */
  private static String shown(JsonNode n) {
    return io.meshplan.util.Words.clipped(n.toString());
  }

  /**
   * The group-limited routing of DeepSeek's router: {@code n_group} groups (1 when absent) and
   * the {@code topk_group} of them a token's experts may come from, both read whatever
   * {@code n_group} is (a topk_group of "8" or 2 of 1 group was not looked at).
   *
   * @param f the fields
   * @param experts the routed experts
   * @param topK the experts a token goes to
   * @return {n_group, topk_group}
   * @throws InputException when the groups cannot route topK of the experts
   */
  static int[] groupLimit(HfFields f, int experts, int topK) {
    int groups = f.positive("n_group", 1);
    int topGroups = f.positive("topk_group", 1);
    if (topGroups > groups || groups > 1 && (experts % groups != 0
        || (long) topGroups * (experts / groups) < topK)) {
      throw new InputException(f.where() + ": n_group " + groups + " and topk_group "
          + topGroups + " do not route " + topK + " of " + experts + " experts");
    }
    return new int[] {groups, topGroups};
  }

  static int topK(HfFields f, int experts, String expertsKey) {
    int topK = f.positive("num_experts_per_tok");
    if (topK > experts) {
      throw new InputException(f.where() + ": field 'num_experts_per_tok' " + topK
          + " is more than the " + experts + " experts (" + expertsKey + ")");
    }
    return topK;
  }

  /**
   * The expert count: a positive integer up to {@link #MAX_EXPERTS}; 0 is a dense model.
   *
   * @param f the fields
   * @param key the field
   * @return the routed experts
   */
  static int experts(HfFields f, String key) {
    JsonNode n = f.root().get(key);
    if (n != null && !n.isNull() && n.isIntegralNumber() && n.canConvertToInt()
        && n.asInt() == 0) {
      throw new InputException(f.where() + ": field '" + key + "' is 0; meshplan reads "
          + "mixture-of-experts configs whose every layer routes to experts (without experts, "
          + "use the dense family's model_type)");
    }
    int experts = f.positive(key);
    if (experts > MAX_EXPERTS) {
      throw new InputException(f.where() + ": field '" + key + "' must be at most "
          + MAX_EXPERTS + ", got " + experts);
    }
    return experts;
  }

  /**
   * Qwen3-MoE's dense blocks: those in {@code mlp_only_layers} and those where {@code (i + 1) %
   * decoder_sparse_step != 0}.
   */
  private static java.util.List<Integer> denseLayers(HfFields f, int layers) {
    int step = f.positive("decoder_sparse_step", 1);
    java.util.Set<Integer> only = layerSet(f, "mlp_only_layers", layers);
    JsonNode list = f.root().get("mlp_only_layers");
    java.util.List<Integer> dense = new java.util.ArrayList<>();
    for (int i = 0; i < layers; i++) {
      if (only.contains(i) || (i + 1) % step != 0) {
        dense.add(i);
      }
    }
    if (dense.size() == layers) {
      throw new InputException(f.where() + ": no block routes to experts (decoder_sparse_step "
          + step + ", mlp_only_layers " + (list == null ? "null" : shown(list)) + ", " + layers
          + " blocks); without experts, "
          + "use model_type qwen3");
    }
    return dense;
  }
}
