package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;

/**
 * The LLaMA forward pass of the Alpa simulation document: per block RMSNorm, multi-head
 * self-attention (grouped-query when {@code kvHeads < heads}), residual, RMSNorm, SwiGLU feed-forward,
 * residual (Touvron et al. 2023). Softmax subtracts the row maximum; both row reductions are {@code
 * reduce} ops, which shard alike whatever their combiner. The causal mask is an input of shape
 * {@code [seq, seq]} added to the scores. Every block records its scope {@code layer_<i>/...} so
 * layer clustering can find the blocks.
 */
public final class LlamaForwardBuilder {
  private LlamaForwardBuilder() {}

  /**
   * Builds the forward graph.
   *
   * @param spec the model; uses batch, seq, hidden, heads, kvHeads, layers, ffn and dtype
   * @param forceReplicatedOutput whether the final hidden states must be replicated
   * @return the graph
   */
  public static Graph build(ModelSpec spec, boolean forceReplicatedOutput) {
    int h = spec.hidden();
    DType t = spec.dtype();
    GraphBuilder b = new GraphBuilder(spec.name() + "_forward");
    int x = b.parameter(TensorShape.of(t, spec.batch(), spec.seq(), h));
    int mask = b.parameter(TensorShape.of(t, spec.seq(), spec.seq()));
    int invH = b.constant(t, 1.0 / h);
    int eps = b.constant(t, 1e-5);
    int scale = b.constant(t, 1.0 / Math.sqrt(spec.headDim()));
    int[] bsh = {spec.batch(), spec.seq(), h};
    for (int layer = 0; layer < spec.layers(); layer++) {
      String p = "layer_" + layer + "/";
      b.scope(p + "attention_norm");
      int xn = rmsNorm(b, x, invH, eps, bsh, t);
      b.scope(p + "attention");
      x = b.binary(Opcode.ADD, x, attention(b, spec, xn, mask, scale));
      b.scope(p + "ffn_norm");
      xn = rmsNorm(b, x, invH, eps, bsh, t);
      b.scope(p + "feed_forward");
      x = b.binary(Opcode.ADD, x, feedForward(b, spec, xn));
    }
    b.scope("output");
    if (forceReplicatedOutput) {
      b.forceReplicated(x);
    }
    return b.build();
  }

  /**
   * Self-attention with its four projection weights; {@code mask} is the causal mask input and
   * {@code scale} the constant 1/sqrt(head dim). Returns the output projection.
   */
  private static int attention(GraphBuilder b, ModelSpec spec, int xn, int mask, int scale) {
    int bs = spec.batch();
    int s = spec.seq();
    int h = spec.hidden();
    int nh = spec.heads();
    int kvh = spec.kvHeads();
    int d = spec.headDim();
    DType t = spec.dtype();
    int[] scores = {bs, nh, s, s};
    int wq = b.parameter(TensorShape.of(t, h, nh * d));
    int wk = b.parameter(TensorShape.of(t, h, kvh * d));
    int wv = b.parameter(TensorShape.of(t, h, kvh * d));
    int wo = b.parameter(TensorShape.of(t, nh * d, h));
    int q = b.reshape(b.dot(xn, wq), bs, s, nh, d);
    int k = heads(b, b.dot(xn, wk), bs, s, nh, kvh, d);
    int v = heads(b, b.dot(xn, wv), bs, s, nh, kvh, d);
    // scores[b, n, i, j] = sum_d q[b, i, n, d] * k[b, j, n, d]
    int sc = b.dot(q, k, new int[] {0, 2}, new int[] {3}, new int[] {0, 2}, new int[] {3});
    sc = b.binary(Opcode.MULTIPLY, sc, b.broadcast(scale, scores));
    sc = b.binary(Opcode.ADD, sc, b.broadcast(mask, scores, 2, 3));
    int max = b.reduce(sc, 3);
    int shifted = b.binary(Opcode.SUBTRACT, sc, b.broadcast(max, scores, 0, 1, 2));
    int e = b.unary(Opcode.EXP, shifted);
    int sum = b.reduce(e, 3);
    int probs = b.binary(Opcode.DIVIDE, e, b.broadcast(sum, scores, 0, 1, 2));
    // ctx[b, n, i, d] = sum_j probs[b, n, i, j] * v[b, j, n, d]
    int ctx = b.dot(probs, v, new int[] {0, 1}, new int[] {3}, new int[] {0, 2}, new int[] {1});
    ctx = b.reshape(b.transpose(ctx, 0, 2, 1, 3), bs, s, h);
    return b.dot(ctx, wo);
  }

  /** The SwiGLU feed-forward with its three weights; returns the down projection. */
  private static int feedForward(GraphBuilder b, ModelSpec spec, int xn) {
    DType t = spec.dtype();
    int h = spec.hidden();
    int f = spec.ffn();
    int w1 = b.parameter(TensorShape.of(t, h, f));
    int w3 = b.parameter(TensorShape.of(t, h, f));
    int w2 = b.parameter(TensorShape.of(t, f, h));
    int gate = b.dot(xn, w1);
    int up = b.dot(xn, w3);
    int silu = b.binary(Opcode.MULTIPLY, gate, b.unary(Opcode.LOGISTIC, gate));
    return b.dot(b.binary(Opcode.MULTIPLY, silu, up), w2);
  }

  private static int rmsNorm(GraphBuilder b, int x, int invH, int eps, int[] bsh, DType t) {
    int sq = b.binary(Opcode.MULTIPLY, x, x);
    int ms = b.reduce(sq, 2);
    int[] bs = {bsh[0], bsh[1]};
    ms = b.binary(Opcode.MULTIPLY, ms, b.broadcast(invH, bs));
    ms = b.binary(Opcode.ADD, ms, b.broadcast(eps, bs));
    int r = b.unary(Opcode.RSQRT, ms);
    int xn = b.binary(Opcode.MULTIPLY, x, b.broadcast(r, bsh, 0, 1));
    int g = b.parameter(TensorShape.of(t, bsh[2]));
    return b.binary(Opcode.MULTIPLY, xn, b.broadcast(g, bsh, 2));
  }

  /** Splits a projection into heads, repeating key/value heads for grouped-query attention. */
  private static int heads(GraphBuilder b, int proj, int bs, int s, int nh, int kvh, int d) {
    int r = b.reshape(proj, bs, s, kvh, d);
    if (kvh == nh) {
      return r;
    }
    int rep = b.broadcast(r, new int[] {bs, s, kvh, nh / kvh, d}, 0, 1, 2, 4);
    return b.reshape(rep, bs, s, nh, d);
  }
}
