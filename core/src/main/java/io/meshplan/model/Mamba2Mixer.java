package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Opcode;

/**
 * The Mamba-2 mixer of a hybrid model's {@code M} layers ({@link MambaShape}), as kernels run it:
 * the input projections, the causal depthwise convolution, the step sizes, the state-space scan
 * by the SSD algorithm, the gated grouped RMSNorm and the output projection.
 *
 * <p>The scan is one fused kernel, as Mamba-2's {@code mamba_chunk_scan_combined} runs it: the
 * SSD algorithm's chunked form (Dao and Gu, arXiv:2405.21060, section 6 and listing 1), whose
 * matrix products {@link io.meshplan.graph.OpCost} counts and prices as matrix products; it
 * splits over heads and groups, and its backward recomputes the chunk states from the kept
 * inputs. No published kernel timing gives it a rate of its own (the paper's figure 10 is a
 * plot, without numbers), so it is priced at the GPU's matrix-product rate, never faster than
 * the device-memory traffic of the Triton kernels that run it, which write the chunk states and
 * {@code C B^T} between them ({@link io.meshplan.graph.OpCost#bytesAccessed}).
 *
 * <p>Tensor parallelism splits heads and groups ({@link MambaShape#splits}); each of
 * {@code z}, {@code x}, {@code B}, {@code C} and {@code dt} is its own column-parallel projection,
 * the parts of Megatron-Core's one {@code in_proj} that each rank holds.
 */
final class Mamba2Mixer {
  private final Tape t;
  private final DecoderForward f;
  private final MambaShape m;
  private final DType dt;
  private final int b;
  private final int s;
  private final int h;
  private final int q;

  Mamba2Mixer(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.f = f;
    this.m = spec.arch().hybrid().mamba();
    this.dt = o.storageDtype();
    this.b = o.microbatch();
    this.s = o.seq();
    this.h = spec.hidden();
    this.q = chunk(m.chunk(), s);
  }

  /**
   * The chunk length used on a sequence: the shape's, or the largest divisor of the sequence
   * below it when the sequence is not a whole number of chunks (the kernels pad the last chunk;
   * the work differs by less than one chunk).
   *
   * @param chunk the shape's chunk length
   * @param seq the sequence, tokens
   * @return a divisor of {@code seq}, at most {@code chunk}
   */
  static int chunk(int chunk, int seq) {
    for (int c = Math.min(chunk, seq); c > 1; c--) {
      if (seq % c == 0) {
        return c;
      }
    }
    return 1;
  }

  /**
   * The mixer on the normed layer input {@code xn} {@code [b, s, h]}.
   *
   * @param xn the normed input
   * @return the projected output {@code [b, s, h]}
   */
  int layer(int xn) {
    int inner = m.inner();
    int gn = m.groups() * m.state();
    int z = f.keep(f.linear(xn, h, inner, "in_z", m.projBias()));
    int x = conv(f.keep(f.linear(xn, h, inner, "in_x", m.projBias())), inner, "conv_x");
    int bb = conv(f.keep(f.linear(xn, h, gn, "in_b", m.projBias())), gn, "conv_b");
    int cc = conv(f.keep(f.linear(xn, h, gn, "in_c", m.projBias())), gn, "conv_c");
    int dtIn = f.linear(xn, h, m.heads(), "in_dt", m.projBias());
    int step = f.keep(FusedScans.softplus(t, t.add(dtIn,
        t.broadcast(f.weight("dt_bias", m.heads()), new int[] {b, s, m.heads()}, 2))));
    int y = f.keep(scan(x, bb, cc, step));
    int gated = t.mul(y, silu(z));
    int normed = f.keepGemmInput(gatedNorm(gated));
    return f.linear(normed, inner, h, "out_proj", m.projBias());
  }

  /** The causal convolution of {@code x}, with SiLU ({@link CausalConv}). */
  private int conv(int x, int width, String name) {
    return CausalConv.apply(t, f, x, m.convKernel(), m.convBias(), name);
  }

  /**
   * The SSD scan of {@code x} {@code [b, s, H P]}, {@code B} and {@code C} {@code [b, s, G N]}
   * and the step sizes {@code [b, s, H]} as one fused kernel ({@link
   * io.meshplan.graph.Opcode#SSD_SCAN}), with the skip {@code D x}; returns {@code [b, s, H P]}.
   * The decay {@code A = -exp(A_log)} enters as {@code A dt} per position and head. The kernel's
   * backward reads its inputs and the output's gradient and recomputes the chunk states.
   */
  private int scan(int x, int bIn, int cIn, int step) {
    int heads = m.heads();
    int p = m.headDim();
    int[] perHead = {b, s, heads, 1};
    int a = t.unary(Opcode.NEGATE, t.unary(Opcode.EXP, f.weight("a_log", heads)));
    int dt4 = t.reshape(step, perHead);
    int adt = t.mul(dt4, t.broadcast(a, perHead, 2));
    int x4 = t.reshape(x, b, s, heads, p);
    int b4 = t.reshape(bIn, b, s, m.groups(), m.state());
    int c4 = t.reshape(cIn, b, s, m.groups(), m.state());
    int y = FusedScans.scan(t, Opcode.SSD_SCAN, q, x4, dt4, adt, b4, c4);
    int skip = t.mul(x4, t.broadcast(f.weight("d", heads), new int[] {b, s, heads, p}, 2));
    return t.reshape(t.add(y, skip), b, s, heads * p);
  }

  /**
   * The gated output's RMSNorm over groups of {@code inner / normGroups} channels, with one
   * weight per channel (Megatron-Core's and Hugging Face's {@code RMSNormGated}).
   */
  private int gatedNorm(int x) {
    int inner = m.inner();
    int groups = m.normGroups();
    int width = inner / groups;
    int[] grouped = {b, s, groups, width};
    int x4 = t.reshape(x, grouped);
    int ms = t.mul(t.reduce(t.mul(x4, x4), 3),
        t.broadcast(t.constant(dt, 1.0 / width), new int[] {b, s, groups}));
    int rs = t.unary(Opcode.RSQRT, t.add(ms, t.broadcast(t.constant(dt, 1e-5),
        new int[] {b, s, groups})));
    int y = t.reshape(t.mul(x4, t.broadcast(rs, grouped, 0, 1, 2)), b, s, inner);
    return t.mul(y, t.broadcast(f.weight("norm", inner), new int[] {b, s, inner}, 2));
  }

  private int silu(int x) {
    return t.mul(x, t.unary(Opcode.LOGISTIC, x));
  }

}
