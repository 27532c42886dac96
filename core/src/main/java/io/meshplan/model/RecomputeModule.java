package io.meshplan.model;

import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * A submodule selective recomputation recomputes, as Megatron-Core's {@code --recompute-modules}
 * names them ({@code TransformerConfig.recompute_modules} in {@code
 * megatron/core/transformer/transformer_config.py}, read at d98e8a6). Its default is the attention
 * core alone, which is meshplan's {@link Recompute#SELECTIVE}.
 */
public enum RecomputeModule {
  /** The attention core: scores, softmax, dropout and the product with the values. */
  CORE_ATTN,
  /** The experts' activation function (output discarded, recomputed from its inputs). */
  MOE_ACT,
  /** The input norm and the pre-MLP norm (outputs discarded, recomputed from the block's input). */
  LAYERNORM,
  /** Multi-head latent attention's up-projections and rotary parts. */
  MLA_UP_PROJ,
  /** The dense MLP (of a dense model, or of a mixture-of-experts model's dense blocks). */
  MLP,
  /** The whole mixture-of-experts layer: router, dispatch, experts and combine. */
  MOE,
  /** The shared experts of a mixture-of-experts layer. */
  SHARED_EXPERTS;

  /** Megatron-Core's default: the attention core. */
  public static final Set<RecomputeModule> DEFAULT = Set.copyOf(EnumSet.of(CORE_ATTN));

  /**
   * Whether a recomputation mode and module list recompute a module: selective recomputation
   * with the module listed.
   *
   * @param recompute the mode
   * @param modules the modules
   * @param m the module
   * @return true when {@code m} is recomputed selectively
   */
  public static boolean recomputes(Recompute recompute, Set<RecomputeModule> modules,
      RecomputeModule m) {
    return recompute == Recompute.SELECTIVE && modules.contains(m);
  }

  /**
   * The name Megatron-LM uses.
   *
   * @return e.g. {@code core_attn}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Reads a list of module names, separated by commas or spaces.
   *
   * @param text the list
   * @return the modules, at least one
   * @throws InputException naming the unknown module and the known ones, or a module named twice
   */
  public static Set<RecomputeModule> parseList(String text) {
    EnumSet<RecomputeModule> out = EnumSet.noneOf(RecomputeModule.class);
    for (String word : Words.trimmed(text).split("[,\\s]+")) {
      if (word.isEmpty()) {
        continue;
      }
      RecomputeModule found = null;
      for (RecomputeModule m : values()) {
        if (m.label().equals(word.toLowerCase(Locale.ROOT))) {
          found = m;
        }
      }
      if (found == null) {
        throw new InputException("--recompute-modules '" + word + "' is not a module meshplan "
            + "recomputes; use " + labels(EnumSet.allOf(RecomputeModule.class)));
      }
      if (!out.add(found)) {
        throw new InputException("--recompute-modules names " + found.label() + " twice; give "
            + "each module once");
      }
    }
    if (out.isEmpty()) {
      throw new InputException("--recompute-modules names no module");
    }
    return Set.copyOf(out);
  }

  /**
   * The modules' names in declaration order, comma-separated.
   *
   * @param modules the modules
   * @return e.g. {@code core_attn,moe_act}
   */
  public static String labels(Set<RecomputeModule> modules) {
    return String.join(",", EnumSet.copyOf(modules).stream().map(RecomputeModule::label)
        .toList());
  }

  /**
   * A module list is selective recomputation's.
   *
   * @param recompute the recomputation mode
   * @throws InputException unless it is {@link Recompute#SELECTIVE}
   */
  public static void requireSelective(Recompute recompute) {
    if (recompute != Recompute.SELECTIVE) {
      throw new InputException("--recompute-modules needs --recompute selective (Megatron-LM's "
          + "--recompute-granularity selective)");
    }
  }

  /**
   * Megatron-Core's rules for the recomputed modules ({@code TransformerConfig.__post_init__}):
   * they are selective recomputation's, the experts' activation needs grouped expert GEMMs (a
   * mixture-of-experts model), so does the whole mixture-of-experts layer, the shared experts a
   * model that has them, the latent up-projections multi-head latent attention, and under
   * FP8's delayed scaling ({@link Fp8Scaling#DELAYED}) neither the experts' activation nor the
   * norms may be recomputed.
   *
   * @param recompute the recomputation mode
   * @param modules the modules
   * @param model the model
   * @throws InputException naming the rule broken
   */
  public static void check(Recompute recompute, Set<RecomputeModule> modules, ModelSpec model) {
    if (modules.equals(DEFAULT)) {
      return;
    }
    requireSelective(recompute);
    if (modules.contains(MOE_ACT) && !model.arch().moe().routed()) {
      throw new InputException("--recompute-modules moe_act needs a mixture-of-experts model "
          + "(Megatron-LM runs it only with grouped expert GEMMs)");
    }
    if (modules.contains(MOE) && !model.arch().moe().routed()) {
      throw new InputException("--recompute-modules moe needs a mixture-of-experts model; this"
          + " model is dense");
    }
    if (modules.contains(SHARED_EXPERTS)
        && !(model.arch().moe().routed() && model.arch().moe().sharedFfn() > 0)) {
      throw new InputException("--recompute-modules shared_experts needs a model with shared "
          + "experts; " + model.name() + " has none");
    }
    if (modules.contains(MLA_UP_PROJ) && !model.arch().attn().mla().on()) {
      throw new InputException("--recompute-modules mla_up_proj needs multi-head latent "
          + "attention");
    }
    if (Fp8Training.on(model.dtype()) && model.fp8Scaling() == Fp8Scaling.DELAYED
        && (modules.contains(MOE_ACT) || modules.contains(LAYERNORM))) {
      throw new InputException("--recompute-modules moe_act or layernorm does not run with FP8's"
          + " delayed scaling, as in Megatron-LM; current scaling (--fp8-recipe tensorwise) runs"
          + " them");
    }
  }
}
