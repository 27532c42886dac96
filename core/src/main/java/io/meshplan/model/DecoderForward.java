package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.Map;

/**
 * Emits the forward pass of a decoder-only transformer onto a {@link Tape}: embedding, pre-norm
 * blocks (norm, attention, residual, norm, MLP, residual) and head with softmax cross-entropy, for
 * every {@link Architecture}. Activations are {@code [batch, seq, hidden]}. It also marks the
 * values the backward pass keeps, following Korthikanti et al. (MLSys'23, section 4.1): each
 * norm's input, the QKV input, Q, K, V, the softmax output, the attention dropout mask and
 * output, the projection input, every dropout mask, the MLP input, the activation's input and
 * output. With selective recomputation the attention core's values (softmax output, its dropout
 * mask and output) are not kept; with full recomputation only each block's input is.
 *
 * <p>Dropout masks are 1-byte {@code pred} tensors. Their random bits are an {@code iota}: a
 * counter-based generator (Philox, as Megatron's CUDA RNG) hashes an element counter, and the
 * hash's few elementwise ops per element are left out.
 */
final class DecoderForward {
  /** Keep probability of dropout as a threshold on 8-bit random values (230/256, about 0.9). */
  private static final int KEEP_THRESHOLD = 230;
  private static final double DROPOUT = 0.1;
  private static final double EPS = 1e-5;
  /** The tape part of the LM head's matrix product. */
  static final String LM_HEAD_PART = "lm_head";
  /** The tape part of a multi-token prediction module's token lookup. */
  static final String MTP_TABLE_PART = "mtp_embedding";

  private final Tape t;
  private final ModelSpec spec;
  private final TrainingOptions o;
  private final DType dt;
  private final int b;
  private final int s;
  private final int h;
  /** The linear layers and the weights ({@link LinearLayers}). */
  private final LinearLayers linears;
  private final SavedValues saves;
  private int mask = -1;
  private int cos = -1;
  private int sin = -1;
  private int tokenTable = -1;

  DecoderForward(Tape t, ModelSpec spec, TrainingOptions o) {
    this.t = t;
    this.spec = spec;
    this.o = o;
    this.dt = o.storageDtype();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
    this.saves = new SavedValues(t, o);
    this.linears = new LinearLayers(t, spec, o, this);
  }

  /** The weights created so far and their names, in creation order. */
  Map<Integer, String> weightNames() {
    return linears.weightNames();
  }

  /** The weights the step trains ({@link LinearLayers#trainedWeights}). */
  java.util.Set<Integer> trainedWeights() {
    return linears.trainedWeights();
  }

  private int[] bsh() {
    return new int[] {b, s, h};
  }

  int weight(String name, int... dims) {
    return linears.weight(name, dims);
  }

  /**
   * Keeps a value for the backward pass unless the recomputation mode recomputes it: full
   * recomputation everything in a block, selective recomputation what belongs to one of the
   * recomputed modules ({@link TrainingOptions#recomputes}). A value not kept is computed again
   * from what is kept when the backward needs it.
   *
   * @param id the value
   * @param modules the recomputable modules it belongs to (none: kept but under full
   *     recomputation)
   * @return {@code id}
   */
  int keep(int id, RecomputeModule... modules) {
    boolean block = t.layer().kind() == LayerRef.Kind.BLOCK;
    boolean drop = block && (o.recompute() == Recompute.FULL || o.recompute() == Recompute.OP
        || o.recompute().maxText());
    for (RecomputeModule m : modules) {
      drop |= block && o.recomputes(m);
    }
    return drop ? id : t.keep(id);
  }

  /**
   * Keeps the input of a linear layer: the bf16 value, or under FP8 nothing here, since the
   * layer keeps the FP8 cast it multiplies instead (see {@link LinearLayers}).
   */
  int keepGemmInput(int id, RecomputeModule... modules) {
    return o.fp8() ? id : keep(id, modules);
  }

  /** The values a checkpointing policy saves by name or by product ({@link SavedValues}). */
  SavedValues saves() {
    return saves;
  }

  /** A block's input is kept in every mode. */
  int keepInput(int id) {
    return t.keep(id);
  }

  // ------------------------------------------------------------------ embedding

  /** Token lookup, learned positions, dropout; returns the first block's input. */
  int embedding(int tokens) {
    t.part("tokens");
    tokenTable = weight("table", spec.vocab(), h);
    int x = t.gather(tokenTable, tokens);
    if (spec.arch().positions() == Architecture.Positions.LEARNED) {
      t.part("positions");
      int rows = spec.arch().positionRows();
      if (s > rows) {
        throw new IllegalArgumentException("sequence " + s + " exceeds the " + rows
            + " rows of the learned position table");
      }
      int pos = weight("table", rows, h);
      int used = t.slice(pos, new int[] {0, 0}, new int[] {s, h});
      x = t.add(x, t.broadcast(used, bsh(), 1, 2));
    }
    if (hiddenDropout()) {
      t.part("dropout");
      x = dropout(x);
    }
    return x;
  }

  /**
   * The input of a multi-token prediction module: the embedding of the tokens one further ahead
   * (from the last stage's copy of the token table) and the previous depth's hidden state {@code
   * x}, each RMS-normed, concatenated {@code [b, s, 2h]} and projected to {@code h}.
   */
  int mtpInput(int x) {
    t.part(MTP_TABLE_PART);
    int tokens = t.param(TensorShape.of(DType.S32, b, s), ParamRole.TOKENS);
    int e = t.gather(weight("table", spec.vocab(), h), tokens);
    t.part("mtp_enorm");
    int en = norm(e);
    t.part("mtp_hnorm");
    int hn = norm(x);
    t.part("mtp_projection");
    int cat = keepGemmInput(t.concatenate(2, en, hn));
    return linear(cat, 2 * h, h, "eh_proj");
  }

  // ------------------------------------------------------------------ block

  /** One transformer block on input {@code x}; returns its output. */
  int block(int x) {
    linears.startBlock();
    if (spec.arch().hybrid().on()) {
      return hybridLayer(x);
    }
    t.part("attention_norm");
    int xn = keepGemmInput(norm(x), RecomputeModule.LAYERNORM);
    t.part("attention");
    int att = attention(xn, -1);
    boolean post = spec.arch().attn().blockNorms() == 4;
    if (post) {
      t.part("post_attention_norm");
      att = norm(att);
    }
    x = keep(t.add(x, att));
    t.part("ffn_norm");
    xn = keepGemmInput(norm(x), RecomputeModule.LAYERNORM);
    t.part("feed_forward");
    int ff = mlp(xn);
    if (post) {
      t.part("post_ffn_norm");
      ff = norm(ff);
    }
    return t.add(x, ff);
  }

  /**
   * One layer of a hybrid model ({@link HybridPattern}): its norm, its one sublayer (a Mamba-2
   * mixer, self-attention, a dense MLP or a mixture-of-experts MLP) and the residual add.
   */
  private int hybridLayer(int x) {
    char symbol = spec.arch().hybrid().at(t.layer().index());
    t.part("norm");
    int xn = keepGemmInput(norm(x), RecomputeModule.LAYERNORM);
    int y = switch (symbol) {
      case HybridPattern.MAMBA -> {
        t.part("mixer");
        yield new Mamba2Mixer(t, spec, o, this).layer(xn);
      }
      case HybridPattern.SELECTIVE -> {
        t.part("mixer");
        yield new Mamba1Mixer(t, spec, o, this).layer(xn);
      }
      case HybridPattern.GDN -> {
        t.part("mixer");
        yield new GdnMixer(t, spec, o, this).layer(xn);
      }
      case HybridPattern.ATTENTION -> {
        t.part("attention");
        // The output gate's matrix is the second half of Qwen3-Next's doubled q_proj.
        yield attention(xn, spec.arch().hybrid().attentionGate()
            ? linear(xn, h, spec.heads() * spec.headDim(), "wq_gate") : -1);
      }
      case HybridPattern.MOE -> {
        t.part("feed_forward");
        yield new MoeForward(t, spec, o, this).layer(xn);
      }
      default -> {
        t.part("feed_forward");
        yield denseMlp(xn, spec.ffn(), RecomputeModule.MLP);
      }
    };
    return t.add(x, y);
  }

  /**
   * Self-attention on the normed input {@code xn}; returns the projected output (dropped out),
   * gated per channel by {@code sigmoid(gate)} before the projection when {@code gate} is a
   * value (Qwen3-Next's output gate), not when it is -1.
   */
  private int attention(int xn, int gate) {
    if (spec.arch().attn().mla().on()) {
      int[] qkv = new LatentAttention(t, spec, o, this).queriesKeysValues(xn);
      return core(qkv[0], qkv[1], qkv[2], gate);
    }
    int a = spec.heads();
    int kvh = spec.kvHeads();
    int d = spec.headDim();
    AttentionShape.QkNorm qkNorm = spec.arch().attn().qkNorm();
    int ql = linear(xn, h, a * d, "wq");
    int kl = linear(xn, h, kvh * d, "wk");
    if (qkNorm == AttentionShape.QkNorm.WHOLE) {
      ql = rmsLast(ql, "q_norm");
      kl = rmsLast(kl, "k_norm");
    }
    int q = t.reshape(ql, b, s, a, d);
    int k = t.reshape(kl, b, s, kvh, d);
    int v = t.reshape(linear(xn, h, kvh * d, "wv"), b, s, kvh, d);
    if (qkNorm == AttentionShape.QkNorm.PER_HEAD || qkNorm == AttentionShape.QkNorm.L2) {
      boolean weighted = qkNorm == AttentionShape.QkNorm.PER_HEAD;
      q = rmsLast(q, "q_norm", weighted);
      k = rmsLast(k, "k_norm", weighted);
    }
    if (spec.arch().positions() == Architecture.Positions.ROTARY) {
      q = rope(q);
      k = rope(k);
    }
    if (o.kvReplicas() > 1) {
      // Megatron-Core gathers the whole query/key/value output, queries too, and each rank
      // takes its own query heads back out of it.
      q = replicas(q, 1);
      k = replicas(k, o.kvReplicas());
      v = replicas(v, o.kvReplicas());
    }
    keep(q);
    keep(k);
    keep(v);
    saves.named(q, MaxTextRemat.QUERY);
    saves.named(k, MaxTextRemat.KEY);
    saves.named(v, MaxTextRemat.VALUE);
    return core(q, k, v, gate);
  }

  /**
   * The attention core on queries {@code [b, s, a, d]}, keys {@code [b, s, g, d]} and values
   * {@code [b, s, g, d_v]}, and the output projection; returns the projected output.
   */
  private int core(int q, int k, int v, int gate) {
    int a = spec.heads();
    int d = spec.headDim();
    int dv = spec.valueHeadDim();
    if (o.attention() == Attention.FLASH) {
      return project(t.reshape(flash(q, ring(k), ring(v)), b, s, a * dv), a * dv, gate);
    }
    int kb = heads(k);
    int vb = heads(v);
    int[] scores = {b, a, s, s};
    // scores[b, n, i, j] = sum_d q[b, i, n, d] * k[b, j, n, d]
    int sc = t.dot(q, kb, new int[] {0, 2}, new int[] {3}, new int[] {0, 2}, new int[] {3});
    int coreStart = sc;
    sc = t.mul(sc, t.broadcast(t.constant(dt, 1.0 / Math.sqrt(d)), scores));
    if (spec.arch().attn().attentionSoftcap() > 0) {
      sc = softcap(sc, spec.arch().attn().attentionSoftcap());
    }
    sc = t.add(sc, t.broadcast(causalMask(), scores, 2, 3));
    int p = keep(softmax(sc), RecomputeModule.CORE_ATTN);
    if (o.dropout() && spec.arch().numerics().attentionDropout() > 0) {
      p = keep(dropout(p, RecomputeModule.CORE_ATTN), RecomputeModule.CORE_ATTN);
    }
    // ctx[b, n, i, e] = sum_j p[b, n, i, j] * v[b, j, n, e]
    int ctx = t.dot(p, vb, new int[] {0, 1}, new int[] {3}, new int[] {0, 2}, new int[] {1});
    if (o.recomputes(RecomputeModule.CORE_ATTN)) {
      t.recomputeRegion(coreStart, ctx + 1);
    }
    // MaxText names no value of its unfused attention "context" (MaxTextRemat).
    ctx = keepGemmInput(t.reshape(t.transpose(ctx, 0, 2, 1, 3), b, s, a * dv));
    return project(ctx, a * dv, gate);
  }

  /**
   * The keys or values {@code [b, s/CP, g, d]} of one GPU's share of the sequence, as the attention
   * core reads them under context parallelism: the whole sequence's, {@code [b, s, g, d]}, whose
   * blocks the CP ring brings one by one (Megatron-Core's {@code cp_comm_type p2p}; the transfers
   * are priced by the stage). The whole is not kept: the backward pass brings the blocks again,
   * which is what Megatron-Core's ring attention does. Without context parallelism, {@code x}.
   */
  private int ring(int x) {
    int cp = o.contextParallel();
    if (cp == 1) {
      return x;
    }
    int[] parts = new int[cp];
    java.util.Arrays.fill(parts, x);
    return t.concatenate(1, parts);
  }

  /**
   * The output projection of the attention context {@code ctx} {@code [b, s, width]}, after
   * its gate when {@code gate} is not -1.
   */
  private int project(int ctx, int width, int gate) {
    if (gate >= 0) {
      ctx = t.mul(ctx, t.unary(Opcode.LOGISTIC, gate));
    }
    int out = linear(ctx, width, h, "wo");
    if (hiddenDropout()) {
      out = dropout(out);
    }
    return out;
  }

  /**
   * The attention core as one fused kernel (FlashAttention): Q, K and V in, the context out;
   * grouped key/value heads are read as they are. Nothing of size {@code s x s} is stored: the
   * backward pass reads Q, K, V, the output and its gradient, and recomputes the scores. Attention
   * dropout, when the model has it, runs inside the kernel from a random seed, so it keeps no mask.
   * Selective recomputation has nothing left to recompute here.
   */
  private int flash(int q, int k, int v) {
    int seq = o.seq() * o.contextParallel();
    double work = windowWork(spec, seq);
    int span = spec.packing().attentionSpan(seq);
    int out = keep(t.fusedAttention(q, k, v, work, span));
    saves.product(out);
    saves.named(out, MaxTextRemat.CONTEXT);
    t.customVjp(out, (bp, g) -> {
      Tape tp = bp.tape();
      int fq = bp.fwd(q);
      int fk = bp.fwd(k);
      int fv = bp.fwd(v);
      int fo = bp.fwd(out);
      bp.accumulate(q, tp.fusedAttentionGrad(0, fq, fk, fv, fo, g, work, span));
      bp.accumulate(k, tp.fusedAttentionGrad(1, fq, fk, fv, fo, g, work, span));
      bp.accumulate(v, tp.fusedAttentionGrad(2, fq, fk, fv, fo, g, work, span));
    });
    return out;
  }

  /**
   * The causal query-key pairs a block's fused attention computes, as a fraction of the whole
   * sequence's, averaged over the model's layers: a windowed layer computes {@link
   * AttentionShape#causalPairs} of its window, a global one all of them, each only within the
   * documents packed into the sequence ({@link Packing#work}). meshplan prices one
   * block for every layer, so a model that interleaves windowed and global layers (Gemma 2 and 3,
   * GPT-OSS) is priced at their mean: exact over the model and over any stage whose layers mix
   * them in the model's proportion, off by a fraction of one layer's attention elsewhere.
   *
   * @param spec the model
   * @param seq tokens per sequence
   * @return the fraction, in (0, 1]
   */
  static double windowWork(ModelSpec spec, int seq) {
    AttentionShape at = spec.arch().attn();
    Packing p = spec.packing();
    double global = p.work(seq, 0);
    if (at.window() == 0 || at.window() >= seq) {
      return global;
    }
    double windowed = spec.windowedWork(seq);
    double sum = 0;
    for (int i = 0; i < spec.layers(); i++) {
      sum += at.windowed(i) ? windowed : global;
    }
    return sum / spec.layers();
  }

  /**
   * The MLP (gated SwiGLU, GELU or ReLU) on the normed input {@code xn}, dropped out: the
   * mixture of experts of a mixture-of-experts block, the dense MLP of one of its listed dense
   * blocks.
   */
  private int mlp(int xn) {
    MoeShape moe = spec.arch().moe();
    if (!moe.routed()) {
      return denseMlp(xn, spec.ffn(), RecomputeModule.MLP);
    }
    if (moe.denseLayer(t.layer().index())) {
      return denseMlp(xn, moe.denseFfn(), RecomputeModule.MLP);
    }
    return new MoeForward(t, spec, o, this).layer(xn);
  }

  /**
   * A dense MLP of inner size {@code f} on {@code xn}, in the tape's current part; its values are
   * recomputed when selective recomputation names {@code module} (the dense MLP, or the shared
   * experts of a mixture-of-experts layer).
   */
  int denseMlp(int xn, int f, RecomputeModule module) {
    int act;
    if (spec.arch().mlp().gated()) {
      int gate = linear(xn, h, f, "w1");
      act = gated(gate, linear(xn, h, f, "w3"), module);
    } else {
      int pre = keep(linear(xn, h, f, "w1"), module);
      act = spec.arch().mlp() == Architecture.Mlp.GELU ? gelu(pre)
          : t.binary(Opcode.MAXIMUM, pre, t.fill(t.shape(pre), 0.0));
      if (spec.arch().mlp() == Architecture.Mlp.RELU2) {
        act = t.mul(act, act);
      }
    }
    keepGemmInput(act, module);
    int down = linear(act, f, h, "w2");
    if (hiddenDropout()) {
      down = dropout(down);
    }
    return down;
  }

  /**
   * A linear layer with a bias of its own when {@code bias} (a hybrid mixer's {@code use_bias}),
   * whatever the architecture's biases.
   */
  int linear(int x, int in, int out, String name, boolean bias) {
    return linears.linear(x, in, out, name, bias);
  }

  /** A block's or the head's linear layer {@code x . w}, as {@link LinearLayers} builds it. */
  int linear(int x, int in, int out, String name) {
    return linears.linear(x, in, out, name);
  }

  /** RMSNorm or LayerNorm over the last dimension, with its gain (and bias). */
  private int norm(int x) {
    int[] bs = {b, s};
    int inv = t.broadcast(t.constant(dt, 1.0 / h), bs);
    int centred = x;
    if (spec.arch().norm() == Architecture.Norm.LAYER) {
      int mean = t.mul(t.reduce(x, 2), inv);
      centred = t.binary(Opcode.SUBTRACT, x, t.broadcast(mean, bsh(), 0, 1));
    }
    int ms = t.mul(t.reduce(t.mul(centred, centred), 2), inv);
    int r = t.unary(Opcode.RSQRT, t.add(ms, t.broadcast(t.constant(dt, EPS), bs)));
    int y = t.mul(centred, t.broadcast(r, bsh(), 0, 1));
    y = t.mul(y, t.broadcast(weight("scale", h), bsh(), 2));
    if (spec.arch().norm() == Architecture.Norm.LAYER) {
      y = t.add(y, t.broadcast(weight("bias", h), bsh(), 2));
    }
    return y;
  }

  /**
   * RMSNorm over the last dimension of any rank, with its gain: the q/k norms of Qwen3 and Gemma 3
   * (per head) and of OLMo 2 (over all heads).
   */
  int rmsLast(int x, String name) {
    return rmsLast(x, name, true);
  }

  /**
   * An RMS normalization over the last dimension, with a learned weight or without one (Llama
   * 4's L2 q/k norm: {@code x / sqrt(mean(x^2) + eps)}, the mean form of its {@code L2Norm}).
   */
  private int rmsLast(int x, String name, boolean weighted) {
    TensorShape xs = t.shape(x);
    int last = xs.rank() - 1;
    int n = xs.dim(last);
    int[] dims = xs.dims();
    int[] rowDims = java.util.Arrays.copyOf(dims, last);
    int[] rows = new int[last];
    for (int i = 0; i < last; i++) {
      rows[i] = i;
    }
    int ms = t.mul(t.reduce(t.mul(x, x), last), t.broadcast(t.constant(dt, 1.0 / n), rowDims));
    int r = t.unary(Opcode.RSQRT, t.add(ms, t.broadcast(t.constant(dt, EPS), rowDims)));
    int y = t.mul(x, t.broadcast(r, dims, rows));
    return weighted ? t.mul(y, t.broadcast(weight(name, n), dims, last)) : y;
  }

  /** Soft-capping {@code c tanh(x / c)} (Gemma 2), elementwise. */
  private int softcap(int x, double cap) {
    TensorShape xs = t.shape(x);
    int th = t.unary(Opcode.TANH, t.mul(x, t.fill(xs, 1 / cap)));
    return t.mul(th, t.fill(xs, cap));
  }

  /**
   * Softmax over the last dimension (row maximum subtracted; both row reductions are {@code
   * reduce}, as in {@link LlamaForwardBuilder}), with the fused backward {@code dx = p * (g -
   * sum(g * p))} that reads only the output p.
   */
  int softmax(int x) {
    TensorShape xs = t.shape(x);
    int last = xs.rank() - 1;
    int[] rows = new int[last];
    for (int i = 0; i < last; i++) {
      rows[i] = i;
    }
    int max = t.reduce(x, last);
    int e = t.unary(Opcode.EXP, t.binary(Opcode.SUBTRACT, x, t.broadcast(max, xs.dims(), rows)));
    int p = t.binary(Opcode.DIVIDE, e, t.broadcast(t.reduce(e, last), xs.dims(), rows));
    t.customVjp(p, (bp, g) -> {
      Tape tp = bp.tape();
      int y = bp.fwd(p);
      int gy = tp.mul(g, y);
      int dot = tp.broadcast(tp.reduce(gy, last), xs.dims(), rows);
      bp.accumulate(x, tp.binary(Opcode.SUBTRACT, gy, tp.mul(y, dot)));
    });
    return p;
  }

  /**
   * A gated MLP's activation of its gate and up projections' outputs: {@code silu(gate) * up}
   * (SwiGLU) or {@code gelu(gate) * up} (GeGLU), with both inputs kept for the backward pass
   * under the keep rules of {@code modules}.
   *
   * <p>With {@link ModelSpec#fp8ActivationInput} a SwiGLU's kept inputs are held as FP8 E4M3
   * copies, one byte per element ({@link Tape#storeFp8}), as Megatron-Core's fused SwiGLU keeps
   * them under {@code activation_func_fp8_input_store} ({@code
   * megatron/core/fusions/fused_bias_swiglu.py}, d98e8a6: the forward kernel writes the copy beside
   * its output, the backward kernel reads it and casts it back). The kernels are priced as
   * without the copies: the forward pass writes one byte per element more and the backward pass
   * reads one byte per element less.
   *
   * @param gate the gate projection's output
   * @param up the up projection's output
   * @param modules the modules whose selective recomputation drops the kept inputs
   * @return the activation
   */
  int gated(int gate, int up, RecomputeModule... modules) {
    keep(gate, modules);
    keep(up, modules);
    if (spec.fp8ActivationInput()) {
      t.storeFp8(gate);
      t.storeFp8(up);
    }
    return spec.arch().mlp() == Architecture.Mlp.GEGLU ? t.mul(gelu(gate), up)
        : t.mul(t.mul(gate, t.unary(Opcode.LOGISTIC, gate)), up);
  }

  /** GeLU, tanh approximation (Hendrycks and Gimpel 2016), as Megatron's fused bias-GeLU. */
  int gelu(int x) {
    TensorShape xs = t.shape(x);
    int cube = t.mul(t.mul(x, x), x);
    int inner = t.add(x, t.mul(cube, t.fill(xs, 0.044715)));
    int th = t.unary(Opcode.TANH, t.mul(inner, t.fill(xs, Math.sqrt(2 / Math.PI))));
    return t.mul(t.mul(x, t.fill(xs, 0.5)), t.add(th, t.fill(xs, 1.0)));
  }

  /**
   * Whether dropout follows the embedding and each sublayer's output: the options build dropout
   * and the model trains with a hidden dropout probability above 0.
   */
  private boolean hiddenDropout() {
    return o.dropout() && spec.arch().numerics().hiddenDropout() > 0;
  }

  /** Inverted dropout; keeps the mask (and, in attention, the output) as Megatron does. */
  private int dropout(int x, RecomputeModule... modules) {
    TensorShape xs = t.shape(x);
    TensorShape bits = xs.withDtype(DType.U8);
    int random = t.iota(bits, xs.rank() - 1);
    int keepMask = t.compare("LT", random, t.fill(bits, KEEP_THRESHOLD));
    keep(keepMask, modules);
    int scaled = t.mul(x, t.fill(xs, 1 / (1 - DROPOUT)));
    return t.select(keepMask, scaled, t.fill(xs, 0.0));
  }

  /** Rotary embedding (Su et al. 2021): {@code x cos + rotate_half(x) sin} over [b, s, n, d]. */
  int rope(int x) {
    TensorShape xs = t.shape(x);
    int d = xs.dim(3);
    if (cos < 0) {
      cos = t.param(TensorShape.of(dt, s, d), ParamRole.CONSTANT);
      sin = t.param(TensorShape.of(dt, s, d), ParamRole.CONSTANT);
    }
    int[] dims = xs.dims();
    int[] mid = dims.clone();
    mid[3] = d / 2;
    int lo = t.slice(x, new int[4], mid);
    int[] from = {0, 0, 0, d / 2};
    int hi = t.slice(x, from, dims);
    int rot = t.concatenate(3, t.unary(Opcode.NEGATE, hi), lo);
    return t.add(t.mul(x, t.broadcast(cos, dims, 1, 3)), t.mul(rot, t.broadcast(sin, dims, 1,
        3)));
  }

  /**
   * Queries, keys or values {@code [b, s, g, d]} with each head repeated {@code r} times, {@code
   * [b, s, g r, d]}, as Megatron-Core runs attention when the tensor size {@code t} exceeds the
   * {@code g} key/value groups ({@code megatron/core/transformer/attention.py} at
   * NVIDIA/Megatron-LM d98e8a6, lines 349-367 and 1850-1880): the query/key/value projection
   * stays split evenly over the {@code t} ranks, its whole output is all-gathered over them, and
   * each rank takes its {@code a / t} query heads and its group's whole key and value head back
   * out of it, keeps them, and attends. Each of q ({@code r = 1}), k and v passes through here:
   * the product below needs its input whole on every rank (the all-gather; in the backward pass
   * the reduce-scatter of the gradients, summing the key/value repeats of ranks that share a
   * group), and its pinned layout ({@link TrainingOptions#KV_REPLICAS}) leaves each rank its own
   * heads. Norms and rotary positions run before the gather, where Megatron-Core runs them after
   * it on each rank's heads: the same work on queries, and {@code r} times less on keys, a few
   * elementwise operations per key element.
   */
  private int replicas(int x, int r) {
    TensorShape sh = t.shape(x);
    int g = sh.dim(2);
    int d = sh.dim(3);
    String was = t.part();
    t.part(TrainingOptions.KV_REPLICAS);
    // The repeat as a product with a 0/1 matrix e [g, g r] (e[j, h] = 1 where h / r == j), whose
    // columns the Megatron-LM solve pins split over the ranks: each rank computes and keeps its
    // own heads, which a broadcast's layout could not split (8 heads over 16 ranks), and the
    // product needs its input whole on every rank, which is Megatron-Core's all-gather (and, in
    // the backward pass, its reduce-scatter).
    int e = t.param(TensorShape.of(dt, g, g * r), ParamRole.CONSTANT);
    // y[b, i, e, h] = sum_j x[b, i, j, e] e[j, h]
    int y = t.dot(x, e, new int[0], new int[] {2}, new int[0], new int[] {0});
    int out = t.transpose(y, 0, 1, 3, 2);
    t.part(was);
    return out;
  }

  /** Repeats key/value heads for grouped-query attention. */
  private int heads(int x) {
    int a = spec.heads();
    int kvh = t.shape(x).dim(2);
    if (kvh == a) {
      return x;
    }
    int d = t.shape(x).dim(3);
    int rep = t.broadcast(x, new int[] {b, s, kvh, a / kvh, d}, 0, 1, 2, 4);
    return t.reshape(rep, b, s, a, d);
  }

  /** The additive causal mask, an input shared by all blocks. */
  private int causalMask() {
    if (mask < 0) {
      mask = t.param(TensorShape.of(dt, s, s), ParamRole.CONSTANT);
    }
    return mask;
  }

  // ------------------------------------------------------------------ head

  /**
   * Final norm, LM head (the token table when tied and built here) and mean softmax cross-entropy
   * over the tokens, with the fused backward {@code dlogits = (softmax - onehot) * g}.
   *
   * <p>Frameworks compute the loss in fp32. Unfused ({@link TrainingOptions#fusedLoss} off), the
   * logits are converted to fp32 first and the maximum, the exponentials, their sum and the
   * gradient are fp32 tensors of the logits' size: Megatron's {@code
   * _VocabParallelCrossEntropy.forward} runs {@code .float()}, {@code max}, an in-place subtract
   * and {@code exp}, {@code sum} and an in-place divide, keeps the fp32 softmax for the backward,
   * and the backward's fp32 gradient is converted back to the logits' type. Fused, one kernel
   * reads the logits in their own type and writes the gradient in it, its fp32 arithmetic in
   * registers.
   *
   * @return the scalar loss
   */
  int head(int x) {
    int vocab = spec.vocab();
    t.part("final_norm");
    int xn = keep(norm(x));
    t.part(LM_HEAD_PART);
    int table = spec.arch().tiedEmbeddings() && tokenTable >= 0 ? tokenTable
        : weight(spec.arch().tiedEmbeddings() ? "tied_table" : "table", vocab, h);
    int raw = t.dot(xn, table, new int[0], new int[] {2}, new int[0], new int[] {1});
    double cap = spec.arch().attn().finalSoftcap();
    boolean fused = o.fusedLoss();
    DType lt = fused ? dt : DType.F32;
    int out = cap > 0 ? softcap(keep(raw), cap) : raw;
    t.part("loss");
    int logits = keep(fused ? out : t.convert(out, DType.F32));
    int labels = t.param(TensorShape.of(DType.S32, b, s), ParamRole.LABELS);
    int[] bsv = {b, s, vocab};
    int onehot = t.compare("EQ", t.iota(TensorShape.of(DType.S32, bsv), 2),
        t.broadcast(labels, bsv, 0, 1));
    int max = t.reduce(logits, 2);
    int e = t.unary(Opcode.EXP, t.binary(Opcode.SUBTRACT, logits, t.broadcast(max, bsv, 0, 1)));
    int lse = keep(t.add(t.unary(Opcode.LOG, t.reduce(e, 2)), max));
    int picked = t.reduce(t.select(onehot, logits, t.fill(t.shape(logits), 0.0)), 2);
    int tokenLoss = t.binary(Opcode.SUBTRACT, lse, picked);
    t.customVjp(tokenLoss, (bp, g) -> {
      Tape tp = bp.tape();
      int soft = tp.unary(Opcode.EXP, tp.binary(Opcode.SUBTRACT, bp.fwd(logits),
          tp.broadcast(bp.fwd(lse), bsv, 0, 1)));
      int target = tp.convert(bp.fwd(onehot), lt);
      int d = tp.mul(tp.binary(Opcode.SUBTRACT, soft, target), tp.broadcast(g, bsv, 0, 1));
      bp.accumulate(out, fused ? d : tp.convert(d, dt));
    });
    int sum = t.reduce(tokenLoss, 0, 1);
    if (!fused) {
      sum = t.convert(sum, dt);
    }
    return t.mul(sum, t.constant(dt, 1.0 / ((double) b * s)));
  }
}
