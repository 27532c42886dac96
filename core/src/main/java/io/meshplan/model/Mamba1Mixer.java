package io.meshplan.model;

import io.meshplan.graph.Opcode;

/**
 * The Mamba-1 mixer of a hybrid model's {@code S} layers ({@link Mamba1Shape}), as Jamba runs it
 * (transformers' {@code JambaMambaMixer}, whose inner norms keep it off the fused {@code
 * mamba_inner_fn} and on {@code selective_scan_fn}): the input and gate projections, the causal
 * convolution with SiLU ({@link CausalConv}), {@code x_proj} to the step's low-rank input and
 * {@code B} and {@code C} (each RMS-normalized in Jamba), {@code dt_proj} and its softplus, the
 * selective scan as one fused kernel ({@link io.meshplan.graph.Opcode#SELECTIVE_SCAN}: the
 * states stay on chip and only its output is written, as the paper's section 3.3 describes; priced
 * by its bytes and its elementwise FLOPs), the skip {@code D u}, the gate {@code silu(z)} and
 * {@code out_proj}.
 *
 * <p>Tensor parallelism splits the channels: {@code in_proj} and {@code dt_proj} by columns,
 * {@code x_proj} and {@code out_proj} by rows (their partial sums reduced), the convolution,
 * {@code A_log} and {@code D} by channels; {@code B} and {@code C} are whole on every rank.
 */
final class Mamba1Mixer {
  private final Tape t;
  private final DecoderForward f;
  private final Mamba1Shape m;
  private final int b;
  private final int s;
  private final int h;

  Mamba1Mixer(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.f = f;
    this.m = spec.arch().hybrid().mamba1();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
  }

  /**
   * The mixer on the normed layer input {@code xn} {@code [b, s, h]}.
   *
   * @param xn the normed input
   * @return the projected output {@code [b, s, h]}
   */
  int layer(int xn) {
    int d = m.inner();
    int n = m.state();
    int r = m.dtRank();
    int z = f.keep(f.linear(xn, h, d, "in_z", m.projBias()));
    int x = f.keep(f.linear(xn, h, d, "in_x", m.projBias()));
    int u = f.keep(CausalConv.apply(t, f, x, m.convKernel(), m.convBias(), "conv_x"));
    int xdbl = f.linear(u, d, r + 2 * n, "x_proj");
    int dtIn = norm(t.slice(xdbl, new int[3], new int[] {b, s, r}), "dt_norm");
    int bIn = f.keep(norm(t.slice(xdbl, new int[] {0, 0, r}, new int[] {b, s, r + n}),
        "b_norm"));
    int cIn = f.keep(norm(t.slice(xdbl, new int[] {0, 0, r + n}, new int[] {b, s, r + 2 * n}),
        "c_norm"));
    int dtLin = f.linear(f.keepGemmInput(dtIn), r, d, "dt_proj");
    int[] bsd = {b, s, d};
    int delta = f.keep(FusedScans.softplus(t, t.add(dtLin,
        t.broadcast(f.weight("dt_proj_bias", d), bsd, 2))));
    int a = t.unary(Opcode.NEGATE, t.unary(Opcode.EXP, f.weight("a_log", d, n)));
    int y = FusedScans.scan(t, Opcode.SELECTIVE_SCAN, 1, u, delta, a, bIn, cIn);
    int skip = t.mul(u, t.broadcast(f.weight("d", d), bsd, 2));
    int gated = f.keepGemmInput(t.mul(f.keep(t.add(y, skip)),
        t.mul(z, t.unary(Opcode.LOGISTIC, z))));
    return f.linear(gated, d, h, "out_proj", m.projBias());
  }

  /** Jamba's RMSNorm of the step input, B or C, or nothing without inner norms. */
  private int norm(int x, String name) {
    return m.innerNorms() ? f.rmsLast(x, name) : x;
  }
}
