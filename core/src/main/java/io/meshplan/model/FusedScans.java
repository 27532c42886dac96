package io.meshplan.model;

import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;

/**
 * What the fused scans of the hybrid mixers share ({@link Mamba2Mixer}'s SSD scan, {@link
 * GdnMixer}'s gated delta rule): a backward that yields each of the five operands' gradients
 * from the kept operands and the output's gradient, one backward kernel each and only where a
 * gradient is needed, and the step sizes' softplus.
 */
final class FusedScans {
  private FusedScans() {}

  /** One gradient kernel of a scan. */
  @FunctionalInterface
  interface Gradient {
    /**
     * Adds the kernel.
     *
     * @param tp the backward's tape
     * @param output the operand whose gradient it yields
     * @param fwd the forward operands as the backward reads them
     * @param dy the output's gradient
     * @return the gradient's id
     */
    int of(Tape tp, int output, int[] fwd, int dy);
  }

  /**
   * Gives the scan {@code y} of operands {@code ins} its backward.
   *
   * @param t the tape
   * @param y the scan's output
   * @param ins its operands
   * @param gradient the backward kernel
   */
  static void differentiate(Tape t, int y, int[] ins, Gradient gradient) {
    t.customVjp(y, (bp, dy) -> {
      int[] fwd = new int[ins.length];
      for (int i = 0; i < ins.length; i++) {
        fwd[i] = bp.fwd(ins[i]);
      }
      for (int i = 0; i < ins.length; i++) {
        if (bp.needsGrad(ins[i])) {
          bp.accumulate(ins[i], gradient.of(bp.tape(), i, fwd, dy));
        }
      }
    });
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
