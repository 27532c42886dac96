package io.meshplan.model;

/**
 * The values a block's checkpointing policy saves for its backward pass, beside those {@link
 * DecoderForward#keep} keeps: torchtitan's per-op policy ({@link Recompute#OP}) saves products by
 * their order in the block, MaxText's policies ({@link MaxTextRemat}) values by their names.
 * Outside a block, and under the other modes, nothing.
 */
final class SavedValues {
  private final Tape t;
  private final TrainingOptions o;

  SavedValues(Tape t, TrainingOptions o) {
    this.t = t;
    this.o = o;
  }

  /**
   * Keeps a value that torchtitan's per-op checkpointing policy saves ({@link Recompute#OP}): the
   * output of a matrix multiplication or of the attention kernel, in a block; under the other
   * modes nothing (the value's own keep rule decides).
   */
  int product(int id) {
    return perOp() ? t.keep(id) : id;
  }

  /**
   * Keeps, under torchtitan's per-op checkpointing policy ({@link Recompute#OP}), the bytes of a
   * saved value that this one feeds, while the block's replay still computes this one ({@link
   * Tape#keepRerun}); under the other modes nothing.
   */
  int productRerun(int id) {
    return perOp() ? t.keepRerun(id) : id;
  }

  /**
   * Keeps a value that MaxText names {@code name} when the run's MaxText policy saves that name
   * ({@link MaxTextRemat}); under the other modes nothing. Whether its bytes are held depends on
   * whether the backward reads it, as with every kept value.
   */
  int named(int id, String name) {
    boolean saved = t.layer().kind() == LayerRef.Kind.BLOCK
        && MaxTextRemat.saves(o.recompute(), name);
    return saved ? t.keep(id) : id;
  }

  private boolean perOp() {
    return t.layer().kind() == LayerRef.Kind.BLOCK && o.recompute() == Recompute.OP;
  }
}
