package io.meshplan.model;

import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;

/**
 * What the fused scans of the hybrid mixers share ({@link Mamba2Mixer}'s SSD scan, {@link
 * GdnMixer}'s gated delta rule, {@link Mamba1Mixer}'s selective scan): a backward that yields
 * each of the five operands' gradients from the kept operands and the output's gradient, one
 * backward kernel each and only where a gradient is needed, and the step sizes' softplus.
 */
final class FusedScans {
  private FusedScans() {}

  /**
   * A fused scan ({@link Tape#scan}) with its backward: one gradient kernel per operand that
   * needs a gradient, each reading the kept operands and the output's gradient.
   *
   * @param t the tape
   * @param op the forward opcode
   * @param chunk the chunk length
   * @param ins the scan's five operands
   * @return the scan's output
   */
  static int scan(Tape t, Opcode op, int chunk, int... ins) {
    int y = t.scan(op, chunk, ins);
    t.customVjp(y, (bp, dy) -> {
      int[] fwd = new int[ins.length];
      for (int i = 0; i < ins.length; i++) {
        fwd[i] = bp.fwd(ins[i]);
      }
      for (int i = 0; i < ins.length; i++) {
        if (bp.needsGrad(ins[i])) {
          bp.accumulate(ins[i], bp.tape().scanGrad(op, i, chunk, dy, fwd));
        }
      }
    });
    return y;
  }

  /**
   * {@code log(1 + exp(x))}.
   *
   * @param t the tape
   * @param x the input
   * @return its softplus
   */
  static int softplus(Tape t, int x) {
    TensorShape xs = t.shape(x);
    return t.unary(Opcode.LOG, t.add(t.unary(Opcode.EXP, x), t.fill(xs, 1.0)));
  }
}
