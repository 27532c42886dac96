package io.meshplan.model;

import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;

/**
 * The mixture-of-experts layer of one block, as Megatron-Core runs it with its all-to-all token
 * dispatcher and grouped GEMMs (Megatron-Core MoE: {@code TopKRouter}, {@code
 * MoEAlltoAllTokenDispatcher}, {@code GroupedMLP}):
 * <ol>
 *   <li>router: logits {@code x W_r} ({@code [b, s, E]}), softmax, the top-k selection (one pass
 *       over the probabilities) and the {@code k} weights kept per token; the load-balancing loss
 *       of Switch Transformer (Fedus et al., JMLR 2022, eq. 4), {@code E sum_i f_i P_i}, from the
 *       probabilities' mean over tokens, its gradient one more pass over the probabilities;
 *   <li>dispatch ({@link io.meshplan.graph.Opcode#MOE_DISPATCH}): each GPU sends its tokens'
 *       copies to the experts' GPUs and sorts what it receives by local expert, {@code [G, C,
 *       h]} rows for its {@code G} local experts ({@link ExpertLayout#rowsPerExpert});
 *   <li>grouped expert GEMMs: the gate and up projections {@code [G, C, h] x [G, h, f/ETP]}, the
 *       activation, the down projection back to {@code h} (with per-expert biases where the model
 *       has them);
 *   <li>combine ({@link io.meshplan.graph.Opcode#MOE_COMBINE}): the rows travel back and each
 *       token sums its copies weighted by the router;
 *   <li>shared experts (DeepSeekMoE): a dense gated MLP on every token, added to the result.
 * </ol>
 * With a latent width ({@link MoeShape#latent}, Nemotron 3's LatentMoE) a product {@code [b, s,
 * h] x [h, l]} before the dispatch and {@code [b, s, l] x [l, h]} after the combine (part {@code
 * latent_proj}) put the exchanged rows and the experts' matrices in width {@code l}.
 * The instructions between dispatch and combine form the part {@value #LOCAL_PART}: device-local
 * work whose rows differ from GPU to GPU, which the layer planner runs whole on each GPU. The
 * all-to-all itself is priced per stage, where the expert-parallel group is known. Under
 * torchtitan's per-op checkpointing ({@link Recompute#OP}) with the experts on other GPUs, the
 * dispatch's output and the combine's rows are what the policy keeps of the exchange, so the
 * block's replay does not exchange again; the router's gate is a plain product, outside the
 * policy's count.
 */
final class MoeForward {
  /** The tape part of the device-local expert computation. */
  static final String LOCAL_PART = "experts";

  private final Tape t;
  private final ModelSpec spec;
  private final DecoderForward f;
  private final MoeShape moe;
  private final ExpertLayout layout;
  private final int b;
  private final int s;
  private final int h;

  MoeForward(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.spec = spec;
    this.f = f;
    this.moe = spec.arch().moe();
    this.layout = o.experts();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
  }

  /** The layer on the normed input {@code xn} {@code [b, s, h]}; returns its output. */
  int layer(int xn) {
    int e = moe.experts();
    int k = moe.topK();
    t.part("router");
    int logits = t.dot(xn, f.weight("router", h, e));
    if (moe.expertBiases()) {
      logits = t.add(logits, t.broadcast(f.weight("router_bias", e), new int[] {b, s, e}, 2));
    }
    int probs = f.softmax(logits);
    t.reduce(probs, 2);
    int gates = f.keep(t.slice(probs, new int[3], new int[] {b, s, k}), RecomputeModule.MOE);
    int usage = t.reduce(probs, 0, 1);
    int fraction = t.param(TensorShape.of(t.shape(usage).dtype(), e), ParamRole.CONSTANT);
    t.reduce(t.mul(usage, fraction), 0);
    int groups = layout.localExperts(moe);
    int rows = layout.rowsPerExpert(moe, (long) b * s);
    int fe = layout.localExpertFfn(moe);
    int w = moe.expertWidth(h);
    int xin = toExpertWidth(xn, w);
    t.part("dispatch");
    int xd = t.moeDispatch(xin, -1, groups, rows);
    t.customVjp(xd, (bp, g) -> bp.accumulate(xin, bp.tape().moeCombine(g, -1, b, s)));
    boolean exchanged = layout.expertParallel() > 1;
    if (exchanged) {
      // torchtitan's per-op policy saves an all-to-all's output: the replay does not dispatch.
      f.saves().product(xd);
    }
    t.part(LOCAL_PART);
    int gate = grouped(xd, groups, w, fe, "w1");
    int act;
    if (spec.arch().mlp().gated()) {
      act = f.gated(gate, grouped(xd, groups, w, fe, "w3"), RecomputeModule.MOE);
    } else {
      f.keep(gate, RecomputeModule.MOE);
      // Experts of the model's two-matrix MLP: squared ReLU (Nemotron 3), ReLU or GeLU.
      act = spec.arch().mlp() == Architecture.Mlp.GELU ? f.gelu(gate)
          : t.binary(Opcode.MAXIMUM, gate, t.fill(t.shape(gate), 0.0));
      if (spec.arch().mlp() == Architecture.Mlp.RELU2) {
        act = t.mul(act, act);
      }
    }
    f.keep(act, RecomputeModule.MOE, RecomputeModule.MOE_ACT);
    int down = f.keep(grouped(act, groups, fe, w, "w2"), RecomputeModule.MOE);
    if (exchanged) {
      // ... and the combine's: its rows are the down projection's, which the replay computes
      // again (a grouped GEMM is not among the operations the policy saves) and does not use.
      f.saves().productRerun(down);
    }
    t.part("combine");
    int y = combine(down, gates, probs, fraction, groups, rows);
    if (moe.latent() > 0) {
      // ... and one back up to the hidden size after the combine.
      t.part("latent_proj");
      y = t.dot(y, f.weight("fc2_latent", w, h));
    }
    if (moe.sharedFfn() > 0) {
      t.part("shared_experts");
      int shared = f.denseMlp(xn, moe.sharedFfn(), RecomputeModule.SHARED_EXPERTS);
      if (moe.sharedGate()) {
        // Qwen3-Next: sigmoid(x w) scales each token's shared-expert output.
        int scale = t.unary(Opcode.LOGISTIC, t.dot(xn, f.weight("shared_gate", h, 1)));
        shared = t.mul(shared, t.broadcast(t.reshape(scale, b, s), t.shape(shared).dims(), 0, 1));
      }
      y = t.add(y, shared);
    }
    return y;
  }

  /**
   * The tokens as the experts take them: {@code xn} itself, or under LatentMoE one projection per
   * token down to the experts' width {@code w}, before the dispatch.
   */
  private int toExpertWidth(int xn, int w) {
    if (moe.latent() == 0) {
      return xn;
    }
    t.part("latent_proj");
    return t.dot(xn, f.weight("fc1_latent", h, w));
  }

  /**
   * The weighted combine, with its backward: the row gradients are the output gradient
   * dispatched and weighted; each copy's weight gradient is its row's dot with the dispatched
   * output gradient, combined back to the tokens; the load-balancing loss adds its gradient to
   * the router probabilities.
   */
  private int combine(int down, int gates, int probs, int fraction, int groups, int rows) {
    int y = t.moeCombine(down, gates, b, s);
    int e = moe.experts();
    int k = moe.topK();
    t.customVjp(y, (bp, g) -> {
      Tape tp = bp.tape();
      int fg = bp.fwd(gates);
      bp.accumulate(down, tp.moeDispatch(g, fg, groups, rows));
      int gd = tp.moeDispatch(g, -1, groups, rows);
      tp.part(LOCAL_PART);
      int dots = tp.reshape(tp.reduce(tp.mul(gd, bp.fwd(down)), 2), groups, rows, 1);
      tp.part("combine");
      int perToken = tp.reshape(tp.moeCombine(dots, -1, b, s), b, s);
      bp.accumulate(gates, tp.broadcast(perToken, new int[] {b, s, k}, 0, 1));
      bp.accumulate(probs, tp.broadcast(fraction, new int[] {b, s, e}, 2));
    });
    return y;
  }

  /**
   * A grouped GEMM {@code [G, C, in] x [G, in, out]} with the experts' weights (and per-expert
   * bias), one product per local expert.
   */
  private int grouped(int x, int groups, int in, int out, String name) {
    int w = f.weight(name, groups, in, out);
    // y[g, c, o] = sum_i x[g, c, i] * w[g, i, o]
    int y = t.dot(x, w, new int[] {0}, new int[] {2}, new int[] {0}, new int[] {1});
    if (moe.expertBiases()) {
      int bias = f.weight(name + "_bias", groups, out);
      y = t.add(y, t.broadcast(bias, t.shape(y).dims(), 0, 2));
    }
    return y;
  }

}
