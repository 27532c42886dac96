package io.meshplan.model;

import io.meshplan.util.InputException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * MaxText's activation rematerialization policies ({@code remat_policy}), which name the values a
 * decoder block saves for its backward pass; every other value of the block is recomputed, and
 * only where the backward reads it, as JAX's {@code jax.checkpoint} does (a name the backward
 * never reads is no residual and costs nothing, so {@code mlpwo}, which only feeds the residual
 * add of a pre-norm block, is saved for nothing there).
 *
 * <p>Read at AI-Hypercomputer/maxtext 48f2524e (2024-05-29, the era of its A3 Llama 2 runs), {@code
 * MaxText/layers/models.py} {@code Decoder.__call__}, and at e591f30 (2026-08-22), {@code
 * src/maxtext/layers/decoders.py} {@code get_remat_policy} and {@code minimal_policy}. The names
 * are set by {@code checkpoint_name}: {@code query_proj}, {@code key_proj} and {@code value_proj}
 * on the queries, keys and values as attention reads them, after the rotary embedding ({@code
 * layers/attentions.py}); {@code out_proj} on the output projection's result; {@code mlpwi_0} and
 * {@code mlpwi_1} on a gated MLP's two input products and {@code mlpwi} on an ungated MLP's, and
 * {@code mlpwo} on its output product ({@code layers/linears.py} at e591f30); {@code context} on
 * the fused attention's output: Transformer Engine's ({@code attention=cudnn_flash_te}, the A3
 * runs' kernel) names it inside its forward rule, with its softmax statistics and RNG state
 * (NVIDIA/TransformerEngine 62a84b3, {@code transformer_engine/jax/attention.py}; MaxText's
 * {@code configs/base.yml} at e591f30 points there), and MaxText's cuDNN JAX path names it too
 * ({@code layers/attention_op.py} at e591f30, lines 2407-2408). meshplan saves the fused
 * attention's output; the softmax statistics ({@code b x heads x s} fp32 values, 1/64 of the
 * output's bytes at head size 128) are left out. MaxText's unfused attention names nothing
 * {@code context}, so under meshplan's unfused attention {@code minimal_flash} saves what
 * {@code minimal} saves.
 *
 * <ul>
 *   <li>{@code full}: nothing but the block's input.
 *   <li>{@code minimal}: every weight product's output; at 48f2524e JAX's {@code
 *       checkpoint_dots_with_no_batch_dims}, which in a dense block is the same seven products
 *       that e591f30 names (attention's two batched products are not saved).
 *   <li>{@code minimal_flash} (e591f30 also calls it {@code minimal_with_context}): {@code
 *       minimal} and {@code context}.
 *   <li>{@code save_dot_with_context_except_mlp} (e591f30): queries, keys, values, {@code
 *       context} and {@code out_proj}.
 *   <li>{@code save_dot_except_mlpwi}: queries, keys, values, {@code out_proj} and {@code mlpwo}.
 *   <li>{@code save_dot_except_mlp}: queries, keys, values and {@code out_proj}.
 *   <li>{@code save_qkv_proj}: queries, keys and values.
 *   <li>{@code save_out_proj} (e591f30): {@code out_proj}.
 * </ul>
 *
 * The offloading policies ({@code qkv_proj_offloaded}, {@code minimal_offloaded}) move saved
 * values to host memory, which meshplan does not model; {@code custom} assigns each name by its
 * own flags; the {@code *_quantization} policies save AQT's quantized tensors, and {@code none}
 * skips {@code nn.remat} at 48f2524e but is full rematerialization at e591f30: all are refused.
 */
public final class MaxTextRemat {
  /** The prefix of a MaxText policy on meshplan's command line and in plan files. */
  public static final String PREFIX = "maxtext:";
  /** Queries after the rotary embedding. */
  static final String QUERY = "query_proj";
  /** Keys after the rotary embedding. */
  static final String KEY = "key_proj";
  /** Values. */
  static final String VALUE = "value_proj";
  /** The attention's output projection. */
  static final String OUT = "out_proj";
  /** The fused attention's output. */
  static final String CONTEXT = "context";
  private static final Set<String> QKV = Set.of(QUERY, KEY, VALUE);
  private static final Set<String> MLP = Set.of("mlpwi_0", "mlpwi_1", "mlpwi", "mlpwo");

  private static final Map<Recompute, Set<String>> SAVED = Map.of(
      Recompute.MAXTEXT_FULL, Set.of(),
      Recompute.MAXTEXT_MINIMAL, union(QKV, Set.of(OUT), MLP),
      Recompute.MAXTEXT_MINIMAL_FLASH, union(QKV, Set.of(OUT, CONTEXT), MLP),
      Recompute.MAXTEXT_SAVE_DOT_WITH_CONTEXT_EXCEPT_MLP, union(QKV, Set.of(OUT, CONTEXT)),
      Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLPWI, union(QKV, Set.of(OUT, "mlpwo")),
      Recompute.MAXTEXT_SAVE_DOT_EXCEPT_MLP, union(QKV, Set.of(OUT)),
      Recompute.MAXTEXT_SAVE_QKV_PROJ, QKV,
      Recompute.MAXTEXT_SAVE_OUT_PROJ, Set.of(OUT));

  private MaxTextRemat() {}

  @SafeVarargs
  private static Set<String> union(Set<String>... sets) {
    java.util.Set<String> out = new java.util.HashSet<>();
    for (Set<String> s : sets) {
      out.addAll(s);
    }
    return Set.copyOf(out);
  }

  /**
   * Whether a policy saves the value MaxText names {@code name}.
   *
   * @param policy the recomputation mode
   * @param name a {@code checkpoint_name}
   * @return false for modes that are not MaxText's
   */
  static boolean saves(Recompute policy, String name) {
    return SAVED.getOrDefault(policy, Set.of()).contains(name);
  }

  /**
   * The name MaxText gives the output of one of meshplan's block products, other than the query,
   * key and value projections (named after the rotary embedding, where attention reads them).
   *
   * @param weight meshplan's weight name ({@code wo}, {@code w1}, {@code w3}, {@code w2})
   * @param gated whether the MLP is gated
   * @return the name, or empty for products MaxText does not name
   */
  static Optional<String> productName(String weight, boolean gated) {
    return Optional.ofNullable(switch (weight) {
      case "wo" -> OUT;
      case "w1" -> gated ? "mlpwi_0" : "mlpwi";
      case "w3" -> "mlpwi_1";
      case "w2" -> "mlpwo";
      default -> null;
    });
  }

  /**
   * Reads {@code maxtext:} and a policy's name.
   *
   * @param text the value (any case, surrounding blanks ignored)
   * @return the mode
   * @throws InputException naming the policies meshplan prices, or why a policy is refused
   */
  static Recompute parse(String text) {
    String t = io.meshplan.util.Words.trimmed(text);
    String name = t.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
    for (Recompute r : Recompute.values()) {
      if (r.maxText() && r.label().equals(PREFIX + name)) {
        return r;
      }
    }
    if (name.equals("minimal_with_context")) {
      return Recompute.MAXTEXT_MINIMAL_FLASH;
    }
    throw new InputException(refusal(name));
  }

  private static String refusal(String name) {
    if (name.endsWith("_offloaded")) {
      String onGpu = name.equals("qkv_proj_offloaded") ? "save_qkv_proj"
          : name.equals("minimal_offloaded") ? "minimal" : "full";
      return "MaxText's remat_policy " + name + " offloads saved activations to host memory, "
          + "which meshplan does not model; " + PREFIX + onGpu + " keeps "
          + (onGpu.equals("full") ? "nothing but the block's input" : "the same values")
          + " on the GPU";
    }
    if (name.equals("custom")) {
      return "MaxText's remat_policy custom sets each tensor by its own flag (remat, device or "
          + "offload), which meshplan does not read; give the named policy it matches";
    }
    if (name.endsWith("_quantization")) {
      return "MaxText's remat_policy " + name + " saves AQT's quantized tensors, which meshplan "
          + "does not model; give maxtext:minimal or maxtext:minimal_flash";
    }
    if (name.equals("none")) {
      return "MaxText's remat_policy none skips rematerialization at 48f2524e but is full "
          + "rematerialization at e591f30; give recompute none or maxtext:full as your "
          + "MaxText runs it";
    }
    return "recompute '" + PREFIX + name + "' is not a MaxText remat policy meshplan prices; use "
        + PREFIX + " with one of " + String.join(", ", java.util.Arrays.stream(Recompute.values())
            .filter(Recompute::maxText).map(r -> r.label().substring(PREFIX.length())).toList());
  }

  /**
   * MaxText's policies are priced on dense decoder blocks: attention with separate query, key
   * and value projections and a dense MLP. Mixture-of-experts, latent-attention, hybrid and LoRA
   * models name other values, or none.
   *
   * @param recompute the mode
   * @param model the model
   * @throws InputException when a MaxText policy is given for another model
   */
  public static void check(Recompute recompute, ModelSpec model) {
    if (!recompute.maxText()) {
      return;
    }
    Architecture a = model.arch();
    String other = a.moe().routed() ? "mixture-of-experts"
        : a.attn().mla().on() ? "latent-attention"
        : a.hybrid().on() ? "hybrid"
        : model.lora().on() ? "LoRA"
        : model.family() == ModelSpec.Family.ALPA_MLP ? "MLP" : null;
    if (other != null) {
      throw new InputException("recompute " + recompute.label() + ": meshplan prices MaxText's "
          + "remat policies on dense decoder models only, and " + model.name() + " is a "
          + other + " model; use recompute none, selective, full or op");
    }
  }
}
