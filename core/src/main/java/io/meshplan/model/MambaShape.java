package io.meshplan.model;

import io.meshplan.util.Require;

/**
 * The Mamba-2 mixer of a hybrid model's state-space layers (Dao and Gu, "Transformers are SSMs",
 * ICML 2024, arXiv:2405.21060, section 7 and figure 6; Megatron-Core's {@code
 * megatron/core/ssm/mamba_mixer.py}; Hugging Face's {@code NemotronHMamba2Mixer}). One projection
 * {@code in_proj} maps the hidden state to the gate {@code z} and the input {@code x} (each {@code
 * inner = heads x headDim} wide), the state-space inputs {@code B} and {@code C} ({@code groups x
 * state} each) and one step size {@code dt} per head; a causal depthwise convolution of {@code
 * convKernel} taps runs over {@code x}, {@code B} and {@code C} before SiLU; the selective
 * state-space scan (SSD) mixes the sequence; the output is gated by {@code silu(z)}, normed by an
 * RMSNorm over groups of {@code inner / normGroups} channels, and projected back by {@code
 * out_proj}. Per head it learns {@code dt_bias}, {@code A_log} and the skip {@code D}.
 *
 * @param heads SSM heads H ({@code mamba_num_heads}); tensor parallelism splits them
 * @param headDim channels per head P ({@code mamba_head_dim})
 * @param state the state size N ({@code ssm_state_size})
 * @param groups the groups of heads that share {@code B} and {@code C} ({@code n_groups}),
 *     dividing the heads; tensor parallelism splits them too
 * @param convKernel the convolution's taps ({@code conv_kernel})
 * @param chunk the SSD algorithm's chunk length Q, tokens ({@code chunk_size})
 * @param normGroups the groups the gated RMSNorm normalizes separately (dividing the inner
 *     width)
 * @param convBias whether the convolution has a bias per channel ({@code use_conv_bias})
 * @param projBias whether {@code in_proj} and {@code out_proj} have biases ({@code use_bias})
 */
public record MambaShape(int heads, int headDim, int state, int groups, int convKernel, int chunk,
    int normGroups, boolean convBias, boolean projBias) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The largest value of any one size: far above any published model, far below overflow. */
  public static final int MAX_SIZE = 1 << 16;

  /** Validates the sizes. */
  public MambaShape {
    for (int v : new int[] {heads, headDim, state, groups, convKernel, chunk, normGroups}) {
      Require.that(v > 0 && v <= MAX_SIZE, () -> "Mamba sizes must be 1 to " + MAX_SIZE
          + ", got heads " + heads + ", head dim " + headDim + ", state " + state + ", groups "
          + groups + ", conv kernel " + convKernel + ", chunk " + chunk + ", norm groups "
          + normGroups);
    }
    Require.that(heads % groups == 0, () -> "Mamba groups " + groups + " must divide its "
        + heads + " heads");
    Require.that((long) heads * headDim % normGroups == 0, () -> "Mamba norm groups "
        + normGroups + " must divide its " + (long) heads * headDim + " inner channels");
    Require.that((long) heads * headDim <= Integer.MAX_VALUE / 4,
        () -> "Mamba inner width " + (long) heads * headDim + " is too large");
  }

  /**
   * The inner width, {@code heads x headDim}.
   *
   * @return channels
   */
  public int inner() {
    return heads * headDim;
  }

  /**
   * The channels the convolution runs over: {@code x}, {@code B} and {@code C}.
   *
   * @return {@code inner + 2 groups state}
   */
  public long convChannels() {
    return inner() + 2L * groups * state;
  }

  /**
   * The outputs of {@code in_proj}: {@code z}, {@code x}, {@code B}, {@code C} and {@code dt}.
   *
   * @return {@code 2 inner + 2 groups state + heads}
   */
  public long inProjWidth() {
    return 2L * inner() + 2L * groups * state + heads;
  }

  /**
   * The mixer's parameters: {@code in_proj} ({@code h x inProjWidth}), the convolution's
   * weights ({@code convChannels x convKernel}), {@code dt_bias}, {@code A_log} and {@code D}
   * (one each per head), the gated norm's weight ({@code inner}), {@code out_proj} ({@code inner
   * x h}), and the biases the shape has.
   *
   * @param hidden the model's hidden size h
   * @return parameters
   */
  public long parameters(int hidden) {
    long h = hidden;
    long in = Math.multiplyExact(h, inProjWidth());
    long conv = Math.multiplyExact(convChannels(), convKernel);
    long out = Math.multiplyExact((long) inner(), h);
    long biases = (convBias ? convChannels() : 0) + (projBias ? inProjWidth() + h : 0);
    return Math.addExact(Math.addExact(in, out), conv + 3L * heads + inner() + biases);
  }

  /**
   * Whether a tensor-parallel size splits the mixer as Megatron-Core does.
   *
   * @param tp the tensor-parallel size
   * @return true when it divides the heads and the groups
   */
  public boolean splits(int tp) {
    return tp > 0 && heads % tp == 0 && groups % tp == 0;
  }

  /**
   * Whether a context-parallel size splits the mixer as Megatron-Core's Mamba context
   * parallelism does ({@code mamba_context_parallel.py}): the heads of a tensor rank evenly, and
   * its groups evenly, or {@code CP} a multiple of them (B and C then repeated).
   *
   * @param tp the tensor-parallel size, which {@link #splits}
   * @param cp the context-parallel size
   * @return true when it splits
   */
  public boolean splitsContext(int tp, int cp) {
    int groupsLocal = groups / tp;
    return cp > 0 && groupsLocal > 0 && heads / tp % cp == 0
        && (groupsLocal < cp ? cp % groupsLocal == 0 : groupsLocal % cp == 0);
  }

  /**
   * The elements per token one GPU's two all-to-alls move under context parallelism: in, its
   * share of {@code z}, {@code x}, {@code B}, {@code C} (repeated to {@code CP} groups when it
   * holds fewer) and {@code dt}; out, its share of the scan's output.
   *
   * @param tp the tensor-parallel size
   * @param cp the context-parallel size
   * @return elements per token
   */
  public double swapElementsPerToken(int tp, int cp) {
    double groupsMoved = Math.max((double) groups / tp, cp);
    return 2.0 * inner() / tp + 2.0 * state * groupsMoved + (double) heads / tp
        + (double) inner() / tp;
  }
}
