package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The storage of a weight quantized to 4-bit NormalFloat with double quantization, as QLoRA
 * stores its frozen base (Dettmers et al., arXiv:2305.14314, sections 2 and 3) and bitsandbytes
 * implements it (bitsandbytes {@code functional.py} at 8b3c0f35, {@code quantize_4bit}: blocks
 * of 64 by default and, with {@code compress_statistics}, the constants quantized again by {@code
 * quantize_blockwise} in blocks of 256): the weight, flattened, is cut into blocks of {@link
 * #BLOCK} = 64 elements; each element is a 4-bit index into the NF4 table (two per byte); each
 * block has one absmax constant, itself quantized to 8 bits in blocks of {@link #GROUP} = 256
 * constants that each keep one fp32 constant. Per weight: 4 + 8/64 + 32/(64 x 256) = 4.127 bits
 * (the paper's 0.127 bits of constants instead of 0.5).
 *
 * <p>The exact bytes of an {@code n}-element weight are {@code ceil(n/2) + ceil(n/64) + 4
 * ceil(ceil(n/64)/256)}: a partial last block still has its constant, a partial last group its
 * fp32 constant. Left out: the per-tensor tables bitsandbytes also keeps (the 16-entry NF4 code,
 * the 256-entry code of the 8-bit constants, the constants' fp32 mean), about 1 KiB per tensor.
 * The training graph holds whole groups of {@link #GROUP_ELEMENTS} = 16,384 elements ({@link
 * #groups}): exact when {@code n} is a multiple of 16,384 (every projection of the Llama presets),
 * otherwise the last group is counted whole, at most 8,446 bytes more per weight.
 */
public final class Nf4 {
  private Nf4() {}

  /** Elements per quantization block, each with one absmax constant (QLoRA section 3). */
  public static final int BLOCK = 64;

  /** Absmax constants per second-level block, each with one fp32 constant (QLoRA section 3). */
  public static final int GROUP = 256;

  /** Elements per second-level block: 64 x 256 = 16,384. */
  public static final int GROUP_ELEMENTS = BLOCK * GROUP;

  /**
   * The bytes bitsandbytes stores for an {@code n}-element weight.
   *
   * @param n elements, at least 1
   * @return {@code ceil(n/2) + ceil(n/64) + 4 ceil(ceil(n/64)/256)}
   */
  public static long bytes(long n) {
    Require.that(n >= 1, "a quantized weight has elements");
    long blocks = ceilDiv(n, BLOCK);
    return Math.addExact(Math.addExact(ceilDiv(n, 2), blocks),
        Math.multiplyExact(4L, ceilDiv(blocks, GROUP)));
  }

  /**
   * The second-level blocks the training graph holds for an {@code n}-element weight.
   *
   * @param n elements, at least 1
   * @return {@code ceil(n / 16384)}
   */
  public static int groups(long n) {
    Require.that(n >= 1, "a quantized weight has elements");
    return Math.toIntExact(ceilDiv(n, GROUP_ELEMENTS));
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  /**
   * {@code x . w} with {@code w} stored in NF4, as bitsandbytes' {@code MatMul4Bit} runs it
   * ({@code autograd/_functions.py} at 60a0d8a5): the forward dequantizes the weight and
   * multiplies; it saves only the quantized weight, and its backward dequantizes it again for
   * the input's gradient {@code dx = g . w^T} and computes no weight gradient (the base is
   * frozen). Under full recomputation the recomputed forward dequantizes a third time. The
   * dequantized weight lives only from its dequantization to its GEMM.
   *
   * @param t the tape
   * @param dt the compute type
   * @param x the input, {@code [..., in]}
   * @param storage the codes, block constants and group constants ({@link #dequantize})
   * @param in the weight's rows
   * @param out its columns
   * @return {@code [..., out]} in {@code dt}
   */
  static int linear(Tape t, io.meshplan.graph.DType dt, int x, int[] storage, int in, int out) {
    int y = t.dot(x, dequantize(t, dt, storage[0], storage[1], storage[2], in, out));
    int r = t.shape(x).rank();
    t.customVjp(y, (bp, g) -> {
      if (bp.needsGrad(x)) {
        Tape tp = bp.tape();
        int w = dequantize(tp, dt, bp.fwd(storage[0]), bp.fwd(storage[1]), bp.fwd(storage[2]),
            in, out);
        int[] none = {};
        // dx[..., in] = sum_out g[..., out] * w[in, out]
        bp.accumulate(x, tp.dot(g, w, none, new int[] {r - 1}, none, new int[] {1}, dt));
      }
    });
    return y;
  }

  /**
   * The weight a GEMM reads, dequantized from its NF4 storage into the compute type as
   * bitsandbytes' {@code dequantize_4bit} does (functional.py at 8b3c0f35): each byte's two 4-bit
   * codes looked up in the NF4 table (the codes' conversion; the 16-entry table lives in
   * registers), the block constants restored from their 8 bits and the group's fp32 constant,
   * and each code scaled by its block's constant. Built of elementwise ops, broadcasts and
   * reshapes, which fuse into one memory-bound kernel ({@link io.meshplan.graph.FusedTraffic}):
   * it reads the 4.127-bit storage and writes the 2-byte weight. bitsandbytes restores the
   * constants in a kernel of its own first ({@code dequantize_blockwise}), 8 bytes more per 64
   * weights, left out.
   *
   * @param t the tape
   * @param dt the compute type
   * @param codes the packed codes, u8 {@code [groups, 256, 32]}
   * @param absmax the block constants, u8 {@code [groups, 256]}
   * @param absmax2 the groups' constants, f32 {@code [groups]}
   * @param in the weight's rows
   * @param out its columns
   * @return the weight, {@code [in, out]} in {@code dt}
   */
  static int dequantize(Tape t, io.meshplan.graph.DType dt, int codes, int absmax, int absmax2,
      int in, int out) {
    int groups = t.shape(absmax2).dim(0);
    int pairs = t.broadcast(t.convert(codes, dt), new int[] {groups, GROUP, BLOCK / 2, 2}, 0, 1,
        2);
    int values = t.reshape(pairs, groups, GROUP, BLOCK);
    int constants = t.mul(t.convert(absmax, dt), t.broadcast(t.convert(absmax2, dt),
        new int[] {groups, GROUP}, 0));
    int scaled = t.mul(values, t.broadcast(constants, new int[] {groups, GROUP, BLOCK}, 0, 1));
    int n = Math.multiplyExact(in, out);
    int flat = t.reshape(scaled, Math.multiplyExact(groups, GROUP_ELEMENTS));
    if (n != groups * GROUP_ELEMENTS) {
      flat = t.slice(flat, new int[] {0}, new int[] {n});
    }
    return t.reshape(flat, in, out);
  }
}
