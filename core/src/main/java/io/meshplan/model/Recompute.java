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
  FULL,
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
  OP;

  /**
   * The modes {@code plan} searches: Megatron-LM's three, which every export target runs
   * (torchtitan's per-op mode is stated, simulated and exported, not searched).
   */
  public static final java.util.List<Recompute> SEARCHED = java.util.List.of(NONE, SELECTIVE,
      FULL);

  /**
   * The mode nearest to this one that a framework recomputing whole layers or listed modules
   * runs (Megatron-LM, DeepSpeed): full for torchtitan's per-op mode, which keeps more, so what
   * fits with it fits with full; this mode otherwise.
   *
   * @return the mode
   */
  public Recompute layerwise() {
    return this == OP ? FULL : this;
  }

  /**
   * The lower-case name used on the command line and in plan files.
   *
   * @return {@code none}, {@code selective}, {@code full} or {@code op}
   */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * Parses a label.
   *
   * @param text {@code none}, {@code selective}, {@code full} or {@code op} (any case)
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
        + "' is unknown; use none, selective, full or op");
  }
}
