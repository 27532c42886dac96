package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The Mamba-1 mixer of a hybrid model's {@code S} layers (Gu and Dao, "Mamba: Linear-Time
 * Sequence Modeling with Selective State Spaces", arXiv:2312.00752, section 3 and figure 3;
 * state-spaces/mamba {@code mamba_ssm/modules/mamba_simple.py} at e9594ce; transformers' {@code
 * JambaMambaMixer}, {@code modeling_jamba.py} at 97bb61d): {@code in_proj} to the input {@code x}
 * and the gate {@code z} ({@code inner} each); a causal depthwise convolution of {@code
 * convKernel} taps over {@code x}; {@code x_proj} to the step's low-rank input ({@code dtRank})
 * and the selection inputs {@code B} and {@code C} ({@code state} each), which Jamba RMS-normalizes
 * ({@code innerNorms}); {@code dt_proj} back to one step size per channel; the selective scan
 * with {@code A} ({@code inner x state}) and the skip {@code D}; the gate {@code silu(z)}; and
 * {@code out_proj}.
 *
 * @param inner the inner width ({@code mamba_expand x hidden})
 * @param state the state size N ({@code mamba_d_state})
 * @param convKernel the convolution's taps ({@code mamba_d_conv})
 * @param dtRank the step size's rank ({@code mamba_dt_rank})
 * @param convBias whether the convolution has a bias ({@code mamba_conv_bias})
 * @param projBias whether {@code in_proj} and {@code out_proj} have biases ({@code
 *     mamba_proj_bias})
 * @param innerNorms whether the step input, B and C are RMS-normalized (Jamba's {@code
 *     dt_layernorm}, {@code b_layernorm}, {@code c_layernorm})
 */
public record Mamba1Shape(int inner, int state, int convKernel, int dtRank, boolean convBias,
    boolean projBias, boolean innerNorms) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Validates the sizes. */
  public Mamba1Shape {
    Require.that(inner > 0 && inner <= Integer.MAX_VALUE / 4, () -> "Mamba inner width must be"
        + " 1 to " + Integer.MAX_VALUE / 4 + ", got " + inner);
    for (int v : new int[] {state, convKernel, dtRank}) {
      Require.that(v > 0 && v <= MambaShape.MAX_SIZE, () -> "Mamba-1 state, conv kernel and dt "
          + "rank must be 1 to " + MambaShape.MAX_SIZE + ", got " + state + ", " + convKernel
          + " and " + dtRank);
    }
  }

  /**
   * The mixer's parameters: {@code in_proj} ({@code h x 2 inner}), the convolution ({@code
   * inner x convKernel}), {@code x_proj} ({@code inner x (dtRank + 2 state)}), {@code dt_proj}
   * ({@code dtRank x inner} and its bias), {@code A_log} ({@code inner x state}), {@code D}
   * ({@code inner}), {@code out_proj} ({@code inner x h}), the biases the shape has and Jamba's
   * norms ({@code dtRank + 2 state}).
   *
   * @param hidden the model's hidden size h
   * @return parameters
   */
  public long parameters(int hidden) {
    long h = hidden;
    long d = inner;
    long in = Math.multiplyExact(2 * d, h);
    long conv = Math.multiplyExact(d, convKernel) + (convBias ? d : 0);
    long xProj = Math.multiplyExact(d, (long) dtRank + 2L * state);
    long dtProj = Math.multiplyExact((long) dtRank, d) + d;
    long a = Math.multiplyExact(d, state);
    long out = Math.multiplyExact(d, h);
    long biases = projBias ? 2 * d + h : 0;
    long norms = innerNorms ? dtRank + 2L * state : 0;
    return Math.addExact(Math.addExact(Math.addExact(in, out), Math.addExact(xProj, dtProj)),
        conv + a + d + biases + norms);
  }

  /**
   * Whether a tensor-parallel size splits the mixer's channels evenly (each rank scans its own
   * channels; {@code x_proj}'s partial sums are reduced across the ranks).
   *
   * @param tp the tensor-parallel size
   * @return true when it divides the inner width
   */
  public boolean splits(int tp) {
    return tp > 0 && inner % tp == 0;
  }

}
