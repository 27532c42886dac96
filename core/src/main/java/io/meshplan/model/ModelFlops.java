package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * Training FLOPs of decoder-only transformers.
 *
 * <p>Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
 * Megatron-LM" (SC'21), section 5.1 and Appendix: with global batch B, sequence s, l layers,
 * hidden h and vocabulary V, a GPT model (ffn = 4h, one head dimension per hidden unit) performs
 * {@code 72 B s l h^2 (1 + s/(6h) + V/(12 l h))} model FLOPs per iteration (forward plus backward,
 * the backward twice the forward), and {@code 96 B s l h^2 (1 + s/(6h) + V/(16 l h))} hardware
 * FLOPs with full activation recomputation (the blocks' forward runs twice, the LM head's once).
 * Only matrix multiplications count; attention is counted over the whole s x s score matrix, as
 * in the paper (no causal saving).
 *
 * <p>For other shapes (grouped-query attention, SwiGLU, untied heads), {@link
 * #trainingFlopsPerToken} counts the same way from the matrices: per token and layer, a forward
 * multiply-add per weight of the block's matrices, {@code 2 P_block}, plus attention {@code 2 s
 * (a d)} for QK^T and {@code 2 s (a d)} for the product with V; the LM head adds {@code 2 V h};
 * training is three times the forward. For a GPT model this is exactly the 72-formula divided
 * by {@code B s}.
 */
public final class ModelFlops {
  private ModelFlops() {}

  /**
   * Model FLOPs per iteration, Narayanan et al. SC'21: {@code 72 B s l h^2 (1 + s/(6h) + V/(12 l
   * h))}.
   *
   * @param globalBatch sequences per iteration, B
   * @param seq tokens per sequence, s
   * @param layers l
   * @param hidden h
   * @param vocab V
   * @return FLOPs per iteration
   */
  public static double megatronModelFlops(long globalBatch, long seq, long layers, long hidden,
      long vocab) {
    check(globalBatch, seq, layers, hidden, vocab);
    double l = layers;
    double h = hidden;
    return 72.0 * globalBatch * seq * l * h * h
        * (1 + seq / (6 * h) + vocab / (12 * l * h));
  }

  /**
   * Hardware FLOPs per iteration with full recomputation, Narayanan et al. SC'21: {@code 96 B s l
   * h^2 (1 + s/(6h) + V/(16 l h))}.
   *
   * @param globalBatch sequences per iteration, B
   * @param seq tokens per sequence, s
   * @param layers l
   * @param hidden h
   * @param vocab V
   * @return FLOPs per iteration
   */
  public static double megatronHardwareFlopsFullRecompute(long globalBatch, long seq, long layers,
      long hidden, long vocab) {
    check(globalBatch, seq, layers, hidden, vocab);
    double l = layers;
    double h = hidden;
    return 96.0 * globalBatch * seq * l * h * h
        * (1 + seq / (6 * h) + vocab / (16 * l * h));
  }

  private static void check(long b, long s, long l, long h, long v) {
    Require.positive(b, "global batch");
    Require.positive(s, "sequence length");
    Require.positive(l, "layers");
    Require.positive(h, "hidden");
    Require.positive(v, "vocabulary");
  }

  /**
   * The weights of one block's matrix multiplications that one token passes through (no biases,
   * no norms): the attention projections (or the latent attention's, {@link
   * Mla#matmulParameters}) and the MLP, of a mixture-of-experts block the router and the {@code k}
   * routed and the shared experts a token uses.
   *
   * @param spec the model
   * @return {@code 2 h (a d) + 2 h (kv d) + (2 or 3) h f} for a dense model
   */
  public static long blockMatmulParameters(ModelSpec spec) {
    return blockMatmul(spec, false);
  }

  /** As {@link #blockMatmulParameters}, of a listed dense block when {@code dense}. */
  private static long blockMatmul(ModelSpec spec, boolean dense) {
    long h = spec.hidden();
    Mla mla = spec.arch().attn().mla();
    long qd = (long) spec.heads() * spec.headDim();
    long kvd = (long) spec.kvHeads() * spec.headDim();
    long attn = mla.on() ? mla.matmulParameters(spec.hidden(), spec.heads())
        : 2 * h * qd + 2 * h * kvd;
    long gate = spec.arch().mlp().gated() ? 3L : 2L;
    MoeShape moe = spec.arch().moe();
    if (!moe.routed()) {
      return attn + gate * h * spec.ffn();
    }
    if (dense) {
      return attn + gate * h * moe.denseFfn();
    }
    long w = moe.expertWidth(spec.hidden());
    return attn + h * moe.experts() + gate * w * moe.topK() * moe.expertFfn()
        + gate * h * moe.sharedFfn() + 2 * h * moe.latent();
  }

  /**
   * Forward FLOPs per token of one block: {@code 2 P_block + 2 s a (d_qk + d_v)}, which is {@code
   * 2 P_block + 4 s (a d)} when queries and values have the same head size.
   *
   * @param spec the model
   * @param seq tokens per sequence
   * @return FLOPs
   */
  public static double blockForwardFlopsPerToken(ModelSpec spec, int seq) {
    return 2.0 * blockMatmulParameters(spec) + attentionFlopsPerToken(spec, seq);
  }

  /**
   * Forward FLOPs per token of one sublayer of a hybrid model ({@link HybridPattern}), as for a
   * block: twice its matrix parameters (a mixture-of-experts layer's router, its {@code k}
   * routed experts and its shared experts), with the attention core over the whole score matrix,
   * the SSD scan's and the gated delta rule's chunk products ({@link
   * io.meshplan.graph.OpCost#ssdFlopsPerToken}, {@link io.meshplan.graph.OpCost#deltaFlopsPerToken},
   * the kernels' own counts); the Mamba-1 scan's elementwise work is not counted, as no elementwise work is.
   */
  private static double hybridLayerForwardFlopsPerToken(ModelSpec spec, char symbol, int seq) {
    double h = spec.hidden();
    HybridPattern hp = spec.arch().hybrid();
    double gate = spec.arch().mlp().gated() ? 3 : 2;
    switch (symbol) {
      case HybridPattern.MAMBA -> {
        MambaShape m = hp.mamba();
        return 2 * (h * m.inProjWidth() + (double) m.inner() * h)
            + io.meshplan.graph.OpCost.ssdFlopsPerToken(m.heads(), m.headDim(), m.groups(),
                m.state(), Mamba2Mixer.chunk(m.chunk(), seq));
      }
      case HybridPattern.SELECTIVE -> {
        Mamba1Shape m = hp.mamba1();
        double d = m.inner();
        return 2 * (3 * d * h + d * (m.dtRank() + 2.0 * m.state()) + m.dtRank() * d);
      }
      case HybridPattern.GDN -> {
        GdnShape g = hp.gdn();
        return 2 * (h * (2 * g.keyWidth() + 2 * g.valueWidth() + 2.0 * g.valueHeads())
            + g.valueWidth() * h)
            + io.meshplan.graph.OpCost.deltaFlopsPerToken(g.valueHeads(), g.keyHeadDim(),
                g.valueHeadDim(), Mamba2Mixer.chunk(g.chunk(), seq));
      }
      case HybridPattern.ATTENTION -> {
        double qd = (double) spec.heads() * spec.headDim();
        double kvd = (double) spec.kvHeads() * spec.headDim();
        return 2 * (2 * h * qd + 2 * h * kvd + (hp.attentionGate() ? h * qd : 0))
            + attentionFlopsPerToken(spec, seq);
      }
      case HybridPattern.MOE -> {
        MoeShape moe = spec.arch().moe();
        double w = moe.expertWidth(spec.hidden());
        return 2 * (h * moe.experts() + moe.topK() * gate * w * moe.expertFfn()
            + gate * h * moe.sharedFfn() + (moe.sharedGate() ? h : 0) + 2 * h * moe.latent());
      }
      default -> {
        return 2 * gate * h * spec.ffn();
      }
    }
  }

  /** The attention core's forward FLOPs per token over the whole score matrix. */
  private static double attentionFlopsPerToken(ModelSpec spec, int seq) {
    return 2.0 * seq * spec.heads() * ((double) spec.headDim() + spec.valueHeadDim());
  }

  /**
   * The FLOPs of one sequence's causal attention scores {@code Q K^T} on block {@code layer}: a
   * multiply-add per query-key pair and head dimension, {@code 2 a d} times {@link
   * AttentionShape#causalPairs} with the sliding window on the layers that have it, within each
   * packed document ({@link Packing#work}).
   *
   * @param spec the model
   * @param layer the block, from 0
   * @param seq tokens per sequence
   * @return FLOPs per sequence
   */
  public static double causalScoreFlops(ModelSpec spec, int layer, int seq) {
    AttentionShape at = spec.arch().attn();
    boolean windowed = at.windowed(layer) && at.window() < seq;
    return 2.0 * spec.heads() * spec.headDim() * AttentionShape.causalPairs(seq, 0)
        * (windowed ? spec.windowedWork(seq) : spec.packing().work(seq, 0));
  }

  /**
   * Forward FLOPs per token of all blocks: {@link #blockForwardFlopsPerToken} for each, with the
   * attention term of a windowed block scaled by its share of a global block's causal pairs.
   */
  private static double blocksForwardFlopsPerToken(ModelSpec spec, int seq) {
    if (spec.arch().hybrid().on()) {
      double sum = 0;
      for (int i = 0; i < spec.layers(); i++) {
        sum += hybridLayerForwardFlopsPerToken(spec, spec.arch().hybrid().at(i), seq);
      }
      return sum;
    }
    AttentionShape at = spec.arch().attn();
    int dense = spec.denseBlocks();
    double whole = spec.layers() * blockForwardFlopsPerToken(spec, seq)
        + 2.0 * dense * (blockMatmul(spec, true) - blockMatmul(spec, false));
    boolean windows = at.window() > 0 && at.window() < seq;
    Packing packing = spec.packing();
    if (!windows && !packing.packed()) {
      return whole;
    }
    // Each block's attention term scaled by the pairs it computes: its window's and its packed
    // documents' share of the whole sequence's (Packing#work).
    double global = packing.work(seq, 0);
    double windowed = windows ? spec.windowedWork(seq) : global;
    double attention = attentionFlopsPerToken(spec, seq);
    for (int i = 0; i < spec.layers(); i++) {
      whole -= attention * (1 - (windows && at.windowed(i) ? windowed : global));
    }
    return whole;
  }

  /**
   * Training FLOPs per token (forward and backward, no recomputation): {@code 3 (l (2 P_block + 4
   * s a d) + 2 V h)}, the attention term of sliding-window blocks reduced to their window, dense
   * blocks of a mixture-of-experts model with their own MLP, and the multi-token prediction
   * modules' forward added.
   *
   * @param spec the model
   * @param seq tokens per sequence
   * @return FLOPs per token
   */
  public static double trainingFlopsPerToken(ModelSpec spec, int seq) {
    return 3 * (blocksForwardFlopsPerToken(spec, seq) + 2.0 * spec.vocab() * spec.hidden()
        + mtpForwardFlopsPerToken(spec, seq));
  }

  /**
   * Forward FLOPs per token of the multi-token prediction modules: each a block (in a hybrid
   * model its pattern's layers, {@link HybridPattern#mtp}), its {@code 2h x h} input projection
   * and the LM head again.
   */
  private static double mtpForwardFlopsPerToken(ModelSpec spec, int seq) {
    double h = spec.hidden();
    double block = 0;
    if (spec.arch().hybrid().on()) {
      for (char c : spec.arch().hybrid().mtp().toCharArray()) {
        block += hybridLayerForwardFlopsPerToken(spec, c, seq);
      }
    } else {
      block = blockForwardFlopsPerToken(spec, seq);
    }
    return spec.arch().mtpDepth() * (block + 2.0 * 2 * h * h + 2.0 * spec.vocab() * h);
  }

  /**
   * Training FLOPs per token with full recomputation of every block: the blocks' forward once
   * more.
   *
   * @param spec the model
   * @param seq tokens per sequence
   * @return FLOPs per token
   */
  public static double trainingFlopsPerTokenFullRecompute(ModelSpec spec, int seq) {
    return trainingFlopsPerToken(spec, seq) + blocksForwardFlopsPerToken(spec, seq);
  }
}
