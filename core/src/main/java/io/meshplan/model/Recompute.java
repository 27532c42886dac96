package io.meshplan.model;

import io.meshplan.util.Words;

/**
 * Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models", MLSys'23).
 */
public enum Recompute {
  /** Every activation the backward needs is kept from the forward. */
  NONE("none"),
  /** Only the attention core (QK^T, softmax, dropout, attention over V) is recomputed. */
  SELECTIVE("selective"),
  /** Only each block's input is kept; the whole block forward runs again before its backward. */
  FULL("full"),
  /**
   * torchtitan's per-op selective activation checkpointing ({@code activation_checkpoint.mode =
   * "selective"} with {@code selective_ac_option = "op"}; {@code SelectiveAC} in {@code
   * torchtitan/distributed/activation_checkpoint.py}): each block runs under a checkpoint whose
   * policy saves the output of every matrix multiplication except every second one in the block
   * (counted in forward order) and of the attention kernel, and recomputes everything else. The
   * whole block forward is replayed before its backward (the checkpoint does not stop early),
   * reusing the saved outputs, so the kept bytes are the block's input and the saved outputs,
   * and the recomputation is every other operation of the block. In a mixture-of-experts block
   * (torchtitan's MoE models, v0.2.2 {@code models/deepseek_v3/infra/parallelize.py}, {@code
   * _op_sac_save_list}) the policy also saves the all-to-alls' outputs, the router's gate is
   * recomputed and left out of the count ({@code per_op_sac_force_recompute_mm_shapes_by_fqns},
   * default {@code ["moe.router.gate"]}), and the grouped expert GEMMs, not on the list, are
   * recomputed.
   */
  OP("op"),
  /**
   * MaxText's {@code remat_policy=full} ({@link MaxTextRemat}): nothing but each block's input is
   * saved, and the backward recomputes only what it reads, as JAX's rematerialization does.
   */
  MAXTEXT_FULL("maxtext:full"),
  /** MaxText's {@code minimal}: every weight product's output ({@link MaxTextRemat}). */
  MAXTEXT_MINIMAL("maxtext:minimal"),
  /** MaxText's {@code minimal_flash}: {@code minimal} and the attention's output. */
  MAXTEXT_MINIMAL_FLASH("maxtext:minimal_flash"),
  /** MaxText's {@code save_dot_with_context_except_mlp}: attention's products and output. */
  MAXTEXT_SAVE_DOT_WITH_CONTEXT_EXCEPT_MLP("maxtext:save_dot_with_context_except_mlp"),
  /** MaxText's {@code save_dot_except_mlpwi}: attention's products and the MLP's output. */
  MAXTEXT_SAVE_DOT_EXCEPT_MLPWI("maxtext:save_dot_except_mlpwi"),
  /** MaxText's {@code save_dot_except_mlp}: the query, key, value and output projections. */
  MAXTEXT_SAVE_DOT_EXCEPT_MLP("maxtext:save_dot_except_mlp"),
  /** MaxText's {@code save_qkv_proj}: the query, key and value projections. */
  MAXTEXT_SAVE_QKV_PROJ("maxtext:save_qkv_proj"),
  /** MaxText's {@code save_out_proj}: the attention's output projection. */
  MAXTEXT_SAVE_OUT_PROJ("maxtext:save_out_proj");

  private final String label;

  Recompute(String label) {
    this.label = label;
  }

  /**
   * The modes {@code plan} searches: Megatron-LM's three, which every export target runs
   * (torchtitan's per-op mode is stated, simulated and exported, not searched).
   */
  public static final java.util.List<Recompute> SEARCHED = java.util.List.of(NONE, SELECTIVE,
      FULL);

  /**
   * The mode nearest to this one that a framework recomputing whole layers or listed modules
   * runs (Megatron-LM, DeepSpeed): full for torchtitan's per-op mode and MaxText's policies, which
   * keep as much or more, so what fits with them fits with full; this mode otherwise.
   *
   * @return the mode
   */
  public Recompute layerwise() {
    return this == OP || maxText() ? FULL : this;
  }

  /**
   * Whether this is one of MaxText's remat policies ({@link MaxTextRemat}).
   *
   * @return true for the {@code maxtext:} modes
   */
  public boolean maxText() {
    return label.startsWith(MaxTextRemat.PREFIX);
  }

  /**
   * The lower-case name used on the command line and in plan files.
   *
   * @return {@code none}, {@code selective}, {@code full}, {@code op} or {@code maxtext:} and a
   *     MaxText policy's name
   */
  public String label() {
    return label;
  }

  /**
   * Parses a label.
   *
   * @param text {@code none}, {@code selective}, {@code full} or {@code op} (any case), or
   *     {@code maxtext:} and a MaxText policy's name ({@link MaxTextRemat#parse})
   * @return the value
   * @throws io.meshplan.util.InputException naming the valid values
   */
  public static Recompute parse(String text) {
    if (text != null && text.chars().anyMatch(Character::isISOControl)) {
      throw new io.meshplan.util.InputException("recompute has a control character in it; give "
          + "one mode: none, selective, full, op or maxtext:POLICY");
    }
    if (text != null && Words.trimmed(text).toLowerCase(java.util.Locale.ROOT)
        .startsWith(MaxTextRemat.PREFIX)) {
      return MaxTextRemat.parse(text);
    }
    for (Recompute r : values()) {
      if (r.label().equalsIgnoreCase(text == null ? "" : Words.trimmed(text))) {
        return r;
      }
    }
    java.util.List<String> labels = java.util.Arrays.stream(values()).map(Recompute::label)
        .toList();
    throw new io.meshplan.util.InputException("recompute '" + text + "' is unknown; use "
        + String.join(", ", labels.subList(0, labels.size() - 1)) + " or "
        + labels.get(labels.size() - 1) + " (maxtext:POLICY is a MaxText remat_policy)");
  }
}
