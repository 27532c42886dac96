package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;

/**
 * The causal depthwise convolution of the state-space and linear-attention mixers ({@link
 * Mamba2Mixer}, {@link GdnMixer}), followed by SiLU: {@code y[t] = silu(sum_k w[k] x[t - K + 1 +
 * k] + bias)} per channel, as {@code causal_conv1d} computes it (the sequence padded by {@code K -
 * 1} zeros in front).
 */
final class CausalConv {
  private CausalConv() {}

  /**
   * The convolution of {@code x} {@code [b, s, width]}.
   *
   * @param t the tape
   * @param f the forward builder, which names the weights
   * @param x the input
   * @param taps the kernel's taps K
   * @param bias whether it has a bias per channel
   * @param name the weight's name
   * @return {@code [b, s, width]}
   */
  static int apply(Tape t, DecoderForward f, int x, int taps, boolean bias, String name) {
    TensorShape xs = t.shape(x);
    int b = xs.dim(0);
    int s = xs.dim(1);
    int width = xs.dim(2);
    DType dt = xs.dtype();
    int w = f.weight(name, width, taps);
    int[] out = {b, s, width};
    int padded = taps > 1
        ? t.concatenate(1, t.fill(TensorShape.of(dt, b, taps - 1, width), 0.0), x) : x;
    int sum = -1;
    for (int i = 0; i < taps; i++) {
      int shifted = t.slice(padded, new int[] {0, i, 0}, new int[] {b, i + s, width});
      int tap = t.reshape(t.slice(w, new int[] {0, i}, new int[] {width, i + 1}), width);
      int term = t.mul(shifted, t.broadcast(tap, out, 2));
      sum = sum < 0 ? term : t.add(sum, term);
    }
    if (bias) {
      sum = t.add(sum, t.broadcast(f.weight(name + "_bias", width), out, 2));
    }
    return t.mul(sum, t.unary(Opcode.LOGISTIC, sum));
  }
}
