package io.meshplan.model;

/**
 * The queries, keys and values of multi-head latent attention ({@link Mla}; DeepSeek-V2,
 * arXiv:2405.04434, section 2.1.2 and 2.1.3; Megatron-Core's {@code MLASelfAttention}): the
 * query latent and its norm, the key/value latent and its norm, the up-projections, the decoupled
 * rotary part of each query head and the rotary key every head shares. The attention core and
 * the output projection are {@link DecoderForward}'s.
 */
final class LatentAttention {
  private final Tape t;
  private final DecoderForward f;
  private final Mla m;
  private final int a;
  private final int b;
  private final int s;
  private final int h;

  LatentAttention(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.f = f;
    this.m = spec.arch().attn().mla();
    this.a = spec.heads();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
  }

  /**
   * The attention inputs from the normed block input {@code xn} {@code [b, s, h]}.
   *
   * @param xn the normed input
   * @return Q {@code [b, s, a, d_n + d_r]}, K {@code [b, s, a, d_n + d_r]} and V {@code [b, s,
   *     a, d_v]}, each kept for the backward pass
   */
  int[] queriesKeysValues(int xn) {
    int qk = m.qkDim();
    int nope = m.nopeDim();
    int rope = m.ropeDim();
    int ql;
    if (m.qLoraRank() > 0) {
      int cq = f.keepGemmInput(f.rmsLast(f.linear(xn, h, m.qLoraRank(), "wq_a"), "q_a_norm"));
      ql = f.linear(cq, m.qLoraRank(), a * qk, "wq_b");
    } else {
      ql = f.linear(xn, h, a * qk, "wq");
    }
    int q4 = t.reshape(ql, b, s, a, qk);
    int qNope = t.slice(q4, new int[4], new int[] {b, s, a, nope});
    int qRope = f.rope(t.slice(q4, new int[] {0, 0, 0, nope}, new int[] {b, s, a, qk}));
    int q = t.concatenate(3, qNope, qRope);
    int r = m.kvLoraRank();
    int ckv = f.linear(xn, h, r + rope, "wkv_a");
    int c = f.keepGemmInput(f.rmsLast(t.slice(ckv, new int[3], new int[] {b, s, r}),
        "kv_a_norm"));
    int kRope = f.rope(t.reshape(t.slice(ckv, new int[] {0, 0, r}, new int[] {b, s, r + rope}),
        b, s, 1, rope));
    int dv = m.valueDim();
    int kv = t.reshape(f.linear(c, r, a * (nope + dv), "wkv_b"), b, s, a, nope + dv);
    int kNope = t.slice(kv, new int[4], new int[] {b, s, a, nope});
    int v = t.slice(kv, new int[] {0, 0, 0, nope}, new int[] {b, s, a, nope + dv});
    int shared = t.broadcast(t.reshape(kRope, b, s, rope), new int[] {b, s, a, rope}, 0, 1, 3);
    int k = t.concatenate(3, kNope, shared);
    f.keep(q, RecomputeModule.MLA_UP_PROJ);
    f.keep(k, RecomputeModule.MLA_UP_PROJ);
    f.keep(v, RecomputeModule.MLA_UP_PROJ);
    return new int[] {q, k, v};
  }
}
