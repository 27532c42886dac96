package io.meshplan.model;

import io.meshplan.graph.Opcode;

/**
 * The Gated DeltaNet mixer of a hybrid model's {@code G} layers ({@link GdnShape}), as
 * transformers' {@code Qwen3NextGatedDeltaNet} and Megatron-Core's {@code gated_delta_net} run it:
 * the projections of queries, keys, values, output gate, write strengths and decays; the causal
 * convolution with SiLU over the queries, keys and values ({@link CausalConv}, no bias); the key
 * heads repeated to the value heads; the chunked gated delta rule as one fused kernel ({@link
 * io.meshplan.graph.Opcode#GDN_SCAN}: flash-linear-attention's {@code chunk_gated_delta_rule},
 * chunks of 64, the L2 norms of queries and keys inside it), priced at the GPU's matrix-product
 * rate as no kernel timing per FLOP is published for it (flash-linear-attention's README gives
 * times on one GB200, not a rate); the RMSNorm per value head, gated by {@code silu(z)}; and the
 * output projection.
 *
 * <p>Tensor parallelism splits key and value heads ({@link GdnShape#splits}); each projection
 * is its own column-parallel matrix, the parts of {@code in_proj_qkvz} and {@code in_proj_ba}
 * that each rank holds.
 */
final class GdnMixer {
  private final Tape t;
  private final DecoderForward f;
  private final GdnShape m;
  private final int b;
  private final int s;
  private final int h;
  private final int chunk;

  GdnMixer(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.f = f;
    this.m = spec.arch().hybrid().gdn();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
    this.chunk = Mamba2Mixer.chunk(m.chunk(), s);
  }

  /**
   * The mixer on the normed layer input {@code xn} {@code [b, s, h]}.
   *
   * @param xn the normed input
   * @return the projected output {@code [b, s, h]}
   */
  int layer(int xn) {
    int kw = (int) m.keyWidth();
    int vw = (int) m.valueWidth();
    int hv = m.valueHeads();
    int q = CausalConv.apply(t, f, f.keep(f.linear(xn, h, kw, "in_q")), m.convKernel(), false,
        "conv_q");
    int k = CausalConv.apply(t, f, f.keep(f.linear(xn, h, kw, "in_k")), m.convKernel(), false,
        "conv_k");
    int v = CausalConv.apply(t, f, f.keep(f.linear(xn, h, vw, "in_v")), m.convKernel(), false,
        "conv_v");
    int z = f.keep(f.linear(xn, h, vw, "in_z"));
    int[] perHead = {b, s, hv};
    int beta = t.unary(Opcode.LOGISTIC, f.linear(xn, h, hv, "in_b"));
    int a = t.add(f.linear(xn, h, hv, "in_a"),
        t.broadcast(f.weight("dt_bias", hv), perHead, 2));
    int decay = t.unary(Opcode.NEGATE, t.unary(Opcode.EXP, f.weight("a_log", hv)));
    int g = t.mul(FusedScans.softplus(t, a), t.broadcast(decay, perHead, 2));
    int[] one = {b, s, hv, 1};
    int o = FusedScans.scan(t, Opcode.GDN_SCAN, chunk, heads(q), heads(k),
        t.reshape(v, b, s, hv, m.valueHeadDim()), f.keep(t.reshape(g, one)),
        f.keep(t.reshape(beta, one)));
    int normed = f.rmsLast(f.keep(o), "head_norm");
    int z4 = t.reshape(z, b, s, hv, m.valueHeadDim());
    int gated = f.keepGemmInput(t.reshape(t.mul(normed, t.mul(z4,
        t.unary(Opcode.LOGISTIC, z4))), b, s, vw));
    return f.linear(gated, vw, h, "out_proj");
  }

  /**
   * Queries or keys {@code [b, s, H_k d_k]} repeated to the value heads {@code [b, s, H_v,
   * d_k]}.
   */
  private int heads(int x) {
    int hk = m.keyHeads();
    int r = m.valueHeads() / hk;
    int d = m.keyHeadDim();
    int x4 = t.reshape(x, b, s, hk, d);
    int rep = r == 1 ? x4 : t.broadcast(x4, new int[] {b, s, hk, r, d}, 0, 1, 2, 4);
    return f.keep(t.reshape(rep, b, s, hk * r, d));
  }

}
