package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * How fast fused attention kernels (FlashAttention-2/3, cuDNN) run on a GPU: the fraction of the
 * dense 16-bit peak their forward and their backward reach on long causal sequences, from the
 * kernels' published benchmarks, at head dimension 128 and above and at head dimension 64 and
 * below. The backward is slower: it recomputes the scores and its five matrix products share each
 * tile's softmax work. A narrow head is slower per FLOP: each score costs the same softmax and
 * masking work while its matrix products shrink with the head dimension. Between 64 and 128 the
 * fraction is interpolated linearly; outside, the nearer end holds.
 *
 * <ul>
 *   <li>A100 (Ampere): FlashAttention-2 (Dao, arXiv:2307.08691, abstract and section 4.1) reaches
 *       50-73% of the A100's peak, the forward at the top of that range and the backward lower;
 *       0.70 forward and 0.55 backward. No kernel benchmark at head dimension 64 was at hand: the
 *       same fractions at every head dimension.
 *   <li>H100 and H200 (Hopper, the same SMs and clocks): FlashAttention-3 (Shah et al.,
 *       arXiv:2407.08608) reaches 740 TFLOP/s, 75% of 989, at its best forward shape; PyTorch's
 *       operator benchmark measured FlashAttention-3's forward at head dimension 128 and 16k
 *       tokens per batch at 566 TFLOP/s for sequence 2048 and 614 for 8192 (pytorch/benchmark
 *       commit ff65cb6, 2024), 0.57-0.62 of 989; 0.60 forward. The paper's backward is 1.5-1.75x
 *       FlashAttention-2's, which runs at 0.30-0.35 of Hopper's peak; 0.50 backward. cuDNN's own
 *       training benchmark on an H200 with cuDNN 9.19.1 (NVIDIA/cudnn-frontend,
 *       benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn, March 2026) agrees at
 *       head dimension 128 (Llama 3.1's 64 query and 8 key/value heads, causal, sequence 4096:
 *       591 TFLOP/s forward, 474 backward, 0.60 and 0.48 of 989), and measured GPT-OSS's heads of
 *       64 (64 query and 8 key/value heads, causal with a 1024-token window, sequence 4096,
 *       batch 2) at 336 forward and 289 backward: 0.34 forward and 0.29 backward at head
 *       dimension 64. Those were counted over the window's score pairs, so they include the
 *       partly masked tiles at the band's edges.
 *   <li>B200 and GB200 (Blackwell): cuDNN's training benchmark on a GB200 (2,500 TFLOP/s dense;
 *       NVIDIA/cudnn-frontend, {@code benchmark/sdpa_benchmark_training/results/llama3.1/gb200},
 *       cuDNN 9.22, April 2026) measured Llama 3.1's heads, causal, batch 2, at 1,408 TFLOP/s
 *       forward and 1,148 backward for sequence 4096: 0.5632 and 0.4592 ({@link #BLACKWELL}).
 *       Blackwell Ultra (GB300, B300) runs faster: the same benchmark on a GB300 measured 1,703
 *       forward and 1,248 backward at 4096, 0.681 and 0.499 of its 2,500 TFLOP/s, which its
 *       catalog entry states ({@link GpuSpec#fusedAttention}, the catalog's {@code
 *       attention:}). Heads of 64 take Hopper's fractions.
 *   <li>V100 (Volta): FlashAttention-2 needs Ampere or later; no fused kernel.
 *   <li>AMD CDNA 3 (MI300X, MI325X): FlashAttention-2 at the H100's FlashAttention-2 rate in
 *       TFLOP/s ({@link #CDNA3_FLASH2}). No absolute CDNA 3 forward and backward benchmark was
 *       found; the one kernel-level comparison is relative: on the MI300X "the ROCm port of Flash
 *       Attention v2 has a highly optimized implementation of the forward pass that slightly
 *       beats the NVIDIA H100 in throughput", and Zyphra's FlashAttention-2 backward beat the
 *       H100's by 1%, 2% and 4% at sequences of 2k, 4k and 8k, where the ROCm port's backward
 *       "still needs more optimization" (AMD ROCm blog, "Training Transformers and Hybrid models
 *       on AMD Instinct MI300X Accelerators", Zyphra, 10 December 2024; ROCm/rocm-blogs {@code
 *       blogs/ecosystems-and-partners/zyphra/README.md} at 425e6c9). Priced as the H100's
 *       FlashAttention-2 below (0.35 and 0.30 of 989.5 TFLOP/s, 346.3 and 296.9 TFLOP/s), which
 *       is 0.265 and 0.227 of the MI300X's 1,307.4, at every head dimension.
 *   <li>AMD CDNA 4 (MI355X): no kernel-level figure meshplan uses; none priced.
 * </ul>
 *
 * <p>The fractions above are stated at 4,096 tokens. Where a kernel's benchmark measured a range
 * of sequence lengths, they move with the length ({@link SequenceScaling}: {@link
 * #HOPPER_LENGTHS}, {@link #BLACKWELL_LENGTHS}); the others hold at every length. The length is
 * that of the sequences the kernel attends within: the sequence, one GPU's share of it under
 * context parallelism, or the documents packed into it ({@code graph.OpCost#attentionSpan}).
 *
 * <p>Those are the prices of each architecture's default kernel ({@link
 * AttentionKernel#defaultFor}: FlashAttention-2 on Ampere, cuDNN on Hopper and Blackwell). A run
 * may name the kernel it used ({@link #of(Architecture, AttentionKernel)}):
 *
 * <ul>
 *   <li>FlashAttention-2 on Hopper: {@link #HOPPER_FLASH2}. The FlashAttention-3 paper
 *       (arXiv:2407.08608, abstract) puts FlashAttention-2 at 35% of the H100's peak; 0.35
 *       forward. Its backward on Hopper is the paper's FlashAttention-3 backward divided by the
 *       1.5-1.75x the paper reports between them: 0.50 / 1.75 to 0.50 / 1.5 is 0.29-0.33; 0.30
 *       backward. No FlashAttention-2 benchmark at head dimension 64 on Hopper was at hand: the
 *       same fractions at every head dimension, as on Ampere.
 *   <li>FlashAttention-3 on Hopper: the Hopper fractions above (its paper and PyTorch's operator
 *       benchmark). FlashAttention-3 is written for Hopper only (the paper's title GPU, and the
 *       {@code flash-attn} repository's "Requirements: H100 / H800 GPU"); no published
 *       FlashAttention-3 kernel for Ampere, Volta or Blackwell was found, so it is refused there.
 *   <li>cuDNN on Hopper and Blackwell: the fractions above (NVIDIA/cudnn-frontend's H200 and
 *       GB200 results). No published cuDNN attention benchmark on Ampere was at hand: refused
 *       there.
 *   <li>Triton (the FlashAttention-2 algorithm in Triton, as llm-foundry ran it under PyTorch
 *       2.0): no published kernel-level figure for that kernel on a named GPU was found (the
 *       Triton tutorial's current tables do not name their GPU or the 2023 kernel), so it is
 *       priced as FlashAttention-2 on the same GPU. FlashAttention-2's paper reports its kernel
 *       faster than the Triton one, so this is a lower bound on the Triton kernel's time.
 *   <li>FlashAttention-2 and Triton on Blackwell: no published benchmark was at hand; refused.
 * </ul>
 *
 * @param forwardEfficiency the forward's fraction of the dense peak at head dimension 128 and
 *     above, in (0, 1]
 * @param backwardEfficiency the backward's fraction of the dense peak at head dimension 128 and
 *     above, in (0, 1]
 * @param narrowForwardEfficiency the forward's fraction at head dimension 64 and below, in (0, 1]
 * @param narrowBackwardEfficiency the backward's fraction at head dimension 64 and below, in (0,
 *     1]
 * @param lengths how the fractions, stated at {@link SequenceScaling#REFERENCE} tokens, move with
 *     the sequence length ({@link #HOPPER_LENGTHS}, {@link #BLACKWELL_LENGTHS}; {@link
 *     SequenceScaling#FLAT} where no length table was at hand)
 * @param peakMultiple the most the fractions may reach: 1, the 16-bit dense peak, for kernels of
 *     16-bit operands; the FP8 over 16-bit dense peak ratio for FP8 kernels ({@link #fp8}), whose
 *     tensor cores run that much faster
 */
public record FusedAttentionKernels(double forwardEfficiency, double backwardEfficiency,
    double narrowForwardEfficiency, double narrowBackwardEfficiency, SequenceScaling lengths,
    double peakMultiple) implements java.io.Serializable {
  private static final long serialVersionUID = 2L;
  /** The head dimension, and above, at which the kernels run at their full fractions. */
  public static final int WIDE_HEAD = 128;
  /** The head dimension, and below, at which they run at their narrow fractions. */
  public static final int NARROW_HEAD = 64;
  /** The lengths of the cuDNN tables below, tokens. */
  private static final int[] TABLE_LENGTHS = {2048, 4096, 8192, 16384, 32768};
  /** cuDNN's bf16 attention on the H200 at {@link #TABLE_LENGTHS}, TFLOP/s. */
  private static final double[] H200_FORWARD = {484, 591, 644, 673, 688};
  private static final double[] H200_BACKWARD = {370, 474, 541, 579, 581};
  /** cuDNN's bf16 attention on the GB200 at {@link #TABLE_LENGTHS}, TFLOP/s. */
  private static final double[] GB200_FORWARD = {1097, 1408, 1574, 1708, 1622};
  private static final double[] GB200_BACKWARD = {885, 1148, 1332, 1328, 1226};
  /**
   * The FP8 over 16-bit dense peak of Hopper and Blackwell (H100 and B200 datasheets: 1,979 and
   * 4,500 TFLOP/s FP8 against 989 and 2,250 bf16), the most their FP8 attention's fractions of the
   * 16-bit peak may reach.
   */
  private static final double FP8_OVER_16BIT_PEAK = 2;

  /**
   * How Hopper's cuDNN and FlashAttention-3 kernels move with the sequence: cuDNN's training
   * benchmark on an H200 (NVIDIA/cudnn-frontend, {@code
   * benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn}, cuDNN 9.19.1, bf16, causal).
   * At head dimension 128 (Llama 3.1's 64 query and 8 key/value heads, batch 1, {@code
   * llama3.1_20260227_034703.csv} at df73764) it measured 484, 591, 644, 673 and 688 TFLOP/s
   * forward and 370, 474, 541, 579 and 581 backward at 2,048, 4,096, 8,192, 16,384 and 32,768
   * tokens; at head dimension 64 (GPT-OSS's 64 and 8 heads, a 1,024-token window, batch 2, {@code
   * gpt_oss_20260227_034819.csv} at afa9f7c) 310, 336, 349, 355 and 358 forward and 264, 289, 300,
   * 303 and 299 backward. Each factor is the figure over the same table's at 4,096.
   */
  public static final SequenceScaling HOPPER_LENGTHS = lengths(H200_FORWARD, H200_BACKWARD);
  /**
   * How Blackwell's cuDNN kernels move with the sequence: cuDNN's training benchmark on a GB200
   * (NVIDIA/cudnn-frontend 60e572b, {@code
   * benchmark/sdpa_benchmark_training/results/llama3.1/gb200/llama3.1_20260424_100750.csv}, cuDNN
   * 9.22, bf16, causal, Llama 3.1's heads, batch 2, the non-deterministic backward) measured 1,097,
   * 1,408, 1,574, 1,708 and 1,622 TFLOP/s forward and 885, 1,148, 1,332, 1,328 and 1,226 backward
   * at 2,048 to 32,768 tokens. The same benchmark's GB300 table (same commit, {@code
   * llama3.1/gb300/llama3.1_20260424_100757.csv}) rises alike: 1,373, 1,703, 1,856, 1,915 and 1,953
   * forward and 967, 1,248, 1,435, 1,507 and 1,490 backward, 1.090 and 1.150 of its 4,096 figures
   * at 8,192 against the GB200's 1.118 and 1.160. No Blackwell table at head dimension 64 with
   * GPT-OSS's 1,024-token window was found: the narrow kernels take Hopper's factors, as they take
   * its fractions.
   */
  public static final SequenceScaling BLACKWELL_LENGTHS = lengths(GB200_FORWARD, GB200_BACKWARD);
  /**
   * cuDNN's FP8 attention on Hopper against its bf16 attention, from the same run as {@link
   * #HOPPER_LENGTHS} ({@code h200_919_only_cudnn/llama3.1_20260227_034703.csv} at df73764, H200,
   * cuDNN 9.19.1, causal, Llama 3.1's heads, batch 1): FP8 698, 854, 964, 1,010 and 1,042 TFLOP/s
   * forward and 393, 471, 430, 374 and 370 backward at 2,048 to 32,768 tokens, where bf16 ran 484,
   * 591, 644, 673 and 688 and 370, 474, 541, 579 and 581. Hopper's FP8 backward is no faster
   * than its bf16 one, and slower from 8,192 tokens on.
   */
  static final Fp8Ratios HOPPER_FP8 = Fp8Ratios.of(H200_FORWARD,
      new double[] {698, 854, 964, 1010, 1042}, H200_BACKWARD,
      new double[] {393, 471, 430, 374, 370});
  /**
   * cuDNN's per-tensor FP8 attention on Blackwell against its bf16 attention, from the same run
   * as {@link #BLACKWELL_LENGTHS} ({@code llama3.1/gb200/llama3.1_20260424_100750.csv} at 60e572b,
   * GB200, cuDNN 9.22, causal, the non-deterministic backward): FP8 1,420, 1,805, 2,047, 2,154
   * and 2,197 TFLOP/s forward and 831, 1,178, 1,454, 1,632 and 1,687 backward at 2,048 to 32,768
   * tokens.
   */
  static final Fp8Ratios BLACKWELL_FP8 = Fp8Ratios.of(GB200_FORWARD,
      new double[] {1420, 1805, 2047, 2154, 2197}, GB200_BACKWARD,
      new double[] {831, 1178, 1454, 1632, 1687});
  /**
   * cuDNN's MXFP8 attention (one E8M0 scale per 32 elements) on Blackwell, the same run: 1,330,
   * 1,685, 1,902, 1,999 and 2,046 TFLOP/s forward and 745, 1,054, 1,287, 1,436 and 1,425
   * backward.
   */
  static final Fp8Ratios BLACKWELL_MXFP8 = Fp8Ratios.of(GB200_FORWARD,
      new double[] {1330, 1685, 1902, 1999, 2046}, GB200_BACKWARD,
      new double[] {745, 1054, 1287, 1436, 1425});

  /**
   * How much faster than cuDNN's bf16 attention its FP8 attention ran in one benchmark run: the
   * ratio at {@link SequenceScaling#REFERENCE} tokens, and how it moves with the length as a
   * length table of its own (linear in the logarithm of the length between {@link
   * #TABLE_LENGTHS}, the end points beyond). A ratio of two measurements on the same GPU carries
   * over to the other GPUs of the architecture as {@link Fp8Quantization}'s ratios do; the
   * narrow-head kernels take the same ratios (no FP8 table at head dimension 64 was found).
   *
   * @param forward the forward's FP8 over bf16 speed at {@link SequenceScaling#REFERENCE} tokens
   * @param backward the backward's
   * @param lengths the ratios at each length over those
   */
  record Fp8Ratios(double forward, double backward, SequenceScaling lengths)
      implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** The ratios of two runs' TFLOP/s at {@link #TABLE_LENGTHS}. */
    static Fp8Ratios of(double[] bf16Forward, double[] fp8Forward, double[] bf16Backward,
        double[] fp8Backward) {
      double f = fp8Forward[1] / bf16Forward[1];
      double b = fp8Backward[1] / bf16Backward[1];
      java.util.List<SequenceScaling.Point> points = new java.util.ArrayList<>();
      for (int i = 0; i < TABLE_LENGTHS.length; i++) {
        double rf = fp8Forward[i] / bf16Forward[i] / f;
        double rb = fp8Backward[i] / bf16Backward[i] / b;
        points.add(new SequenceScaling.Point(TABLE_LENGTHS[i], rf, rb, rf, rb));
      }
      return new Fp8Ratios(f, b, new SequenceScaling(points));
    }
  }

  /**
   * These kernels run in FP8: every fraction times the FP8 over bf16 speed of the same
   * benchmark run ({@link Fp8Ratios}), at {@link SequenceScaling#REFERENCE} tokens and, through
   * the length table, at each of {@link #TABLE_LENGTHS}.
   *
   * @param r the ratios
   * @param multiple the FP8 over 16-bit dense peak ratio, the most the fractions may reach
   * @return the FP8 kernels
   */
  FusedAttentionKernels inFp8(Fp8Ratios r, double multiple) {
    java.util.List<SequenceScaling.Point> points = new java.util.ArrayList<>();
    for (int n : TABLE_LENGTHS) {
      points.add(new SequenceScaling.Point(n,
          lengths.factor(false, false, n) * r.lengths().factor(false, false, n),
          lengths.factor(true, false, n) * r.lengths().factor(true, false, n),
          lengths.factor(false, true, n) * r.lengths().factor(false, true, n),
          lengths.factor(true, true, n) * r.lengths().factor(true, true, n)));
    }
    return new FusedAttentionKernels(forwardEfficiency * r.forward(),
        backwardEfficiency * r.backward(), narrowForwardEfficiency * r.forward(),
        narrowBackwardEfficiency * r.backward(), new SequenceScaling(points), multiple);
  }


  /**
   * cuDNN's FP8 attention on a GPU under an FP8 recipe ({@link AttentionKernel#CUDNN_FP8}): the
   * GPU's cuDNN kernels ({@link #of(GpuSpec, Optional)}: its own measured fractions where its
   * catalog entry states them) in FP8, MXFP8 under MXFP8 block scaling and per-tensor FP8 under
   * the others ({@link #HOPPER_FP8}, {@link #BLACKWELL_FP8}, {@link #BLACKWELL_MXFP8}).
   *
   * @param gpu the GPU
   * @param q the training recipe's scaling
   * @return the kernels
   * @throws InputException where no FP8 attention benchmark of the architecture was found
   */
  public static FusedAttentionKernels fp8(GpuSpec gpu, Fp8Quantization q) {
    Fp8Ratios r = switch (gpu.architecture()) {
      case HOPPER -> q == Fp8Quantization.MX_BLOCK ? null : HOPPER_FP8;
      case BLACKWELL -> q == Fp8Quantization.MX_BLOCK ? BLACKWELL_MXFP8 : BLACKWELL_FP8;
      default -> null;
    };
    if (r == null) {
      throw new InputException(gpu.name() + ": " + refusal(gpu.architecture(),
          AttentionKernel.CUDNN_FP8).getMessage());
    }
    double multiple = gpu.peak(Precision.FP8).orElseThrow() / gpu.peak(
        KernelTimeModel.trainingPrecision(gpu, 2)).orElseThrow();
    return of(gpu, Optional.of(AttentionKernel.CUDNN)).orElseThrow().inFp8(r, multiple);
  }

  /** Ampere's kernels (FlashAttention-2 on the A100, above): 0.70 forward, 0.55 backward. */
  public static final FusedAttentionKernels AMPERE =
      new FusedAttentionKernels(0.70, 0.55, 0.70, 0.55);
  /**
   * Hopper's kernels (FlashAttention-3 and cuDNN on the H100 and H200, above): 0.60 and 0.50 at
   * head dimension 128, 0.34 and 0.29 at 64, at 4,096 tokens ({@link #HOPPER_LENGTHS}).
   */
  public static final FusedAttentionKernels HOPPER =
      new FusedAttentionKernels(0.60, 0.50, 0.34, 0.29, HOPPER_LENGTHS);
  /**
   * Blackwell's cuDNN kernels (B200, GB200, above): the GB200's 1,408 and 1,148 TFLOP/s at 4,096
   * tokens over its 2,500 dense, 0.5632 forward and 0.4592 backward, moving with the sequence as
   * the same table ({@link #BLACKWELL_LENGTHS}); Hopper's 0.34 and 0.29 at head dimension 64.
   */
  public static final FusedAttentionKernels BLACKWELL =
      new FusedAttentionKernels(1408 / 2500.0, 1148 / 2500.0, 0.34, 0.29, BLACKWELL_LENGTHS);
  /**
   * FlashAttention-2 on Hopper (above): 0.35 forward, 0.30 backward, at every head dimension and
   * length.
   */
  public static final FusedAttentionKernels HOPPER_FLASH2 =
      new FusedAttentionKernels(0.35, 0.30, 0.35, 0.30);
  /** The H100 SXM's dense bf16 peak that {@link #HOPPER_FLASH2} is a fraction of, TFLOP/s. */
  private static final double H100_BF16_TFLOPS = 989.5;
  /** The MI300X's dense bf16 peak (AMD MI300X datasheet), TFLOP/s. */
  private static final double MI300X_BF16_TFLOPS = 1307.4;
  /**
   * FlashAttention-2 on CDNA 3 (above): the H100's FlashAttention-2 TFLOP/s over the MI300X's
   * peak, 0.35 x 989.5 / 1,307.4 = 0.2649 forward and 0.30 x 989.5 / 1,307.4 = 0.2271 backward,
   * at every head dimension.
   */
  public static final FusedAttentionKernels CDNA3_FLASH2 =
      HOPPER_FLASH2.times(H100_BF16_TFLOPS / MI300X_BF16_TFLOPS);

  /**
   * A length table from measured TFLOP/s at {@link #TABLE_LENGTHS}, each over its figure at
   * 4,096 (the second): the given head-dimension-128 figures, and at head dimension 64 the H200's
   * GPT-OSS figures ({@link #HOPPER_LENGTHS}), which both architectures' narrow kernels follow.
   */
  private static SequenceScaling lengths(double[] forward, double[] backward) {
    double[] narrowForward = {310, 336, 349, 355, 358};
    double[] narrowBackward = {264, 289, 300, 303, 299};
    java.util.List<SequenceScaling.Point> points = new java.util.ArrayList<>();
    for (int i = 0; i < TABLE_LENGTHS.length; i++) {
      points.add(new SequenceScaling.Point(TABLE_LENGTHS[i], forward[i] / forward[1],
          backward[i] / backward[1], narrowForward[i] / narrowForward[1],
          narrowBackward[i] / narrowBackward[1]));
    }
    return new SequenceScaling(points);
  }

  /**
   * Fractions that hold at every sequence length.
   *
   * @param forwardEfficiency the forward's fraction at head dimension 128 and above
   * @param backwardEfficiency the backward's
   * @param narrowForwardEfficiency the forward's at head dimension 64 and below
   * @param narrowBackwardEfficiency the backward's
   */
  public FusedAttentionKernels(double forwardEfficiency, double backwardEfficiency,
      double narrowForwardEfficiency, double narrowBackwardEfficiency) {
    this(forwardEfficiency, backwardEfficiency, narrowForwardEfficiency,
        narrowBackwardEfficiency, SequenceScaling.FLAT);
  }

  /**
   * Kernels of 16-bit operands, whose fractions may reach the dense peak.
   *
   * @param forwardEfficiency the forward's fraction at head dimension 128 and above
   * @param backwardEfficiency the backward's
   * @param narrowForwardEfficiency the forward's at head dimension 64 and below
   * @param narrowBackwardEfficiency the backward's
   * @param lengths how they move with the sequence
   */
  public FusedAttentionKernels(double forwardEfficiency, double backwardEfficiency,
      double narrowForwardEfficiency, double narrowBackwardEfficiency, SequenceScaling lengths) {
    this(forwardEfficiency, backwardEfficiency, narrowForwardEfficiency,
        narrowBackwardEfficiency, lengths, 1);
  }

  /** Checks the fractions. */
  public FusedAttentionKernels {
    Require.that(peakMultiple >= 1 && peakMultiple <= 4, "peak multiple must be in [1, 4]");
    Require.that(forwardEfficiency > 0 && forwardEfficiency <= peakMultiple,
        "forward efficiency must be in (0, " + peakMultiple + "]");
    Require.that(backwardEfficiency > 0 && backwardEfficiency <= peakMultiple,
        "backward efficiency must be in (0, " + peakMultiple + "]");
    Require.that(narrowForwardEfficiency > 0 && narrowForwardEfficiency <= peakMultiple,
        "narrow-head forward efficiency must be in (0, " + peakMultiple + "]");
    Require.that(narrowBackwardEfficiency > 0 && narrowBackwardEfficiency <= peakMultiple,
        "narrow-head backward efficiency must be in (0, " + peakMultiple + "]");
    java.util.Objects.requireNonNull(lengths, "lengths");
    Require.that(peakEfficiency(forwardEfficiency, backwardEfficiency, narrowForwardEfficiency,
        narrowBackwardEfficiency, lengths) <= peakMultiple,
        "attention efficiency at its best sequence length must be at most " + peakMultiple);
  }

  /**
   * The same FLOP/s as fractions of another GPU's peak: every fraction times this GPU's peak
   * over the other's.
   *
   * @param ratio the measured GPU's peak over the other GPU's, > 0
   * @return the fractions of the other GPU's peak
   */
  private FusedAttentionKernels times(double ratio) {
    return new FusedAttentionKernels(forwardEfficiency * ratio, backwardEfficiency * ratio,
        narrowForwardEfficiency * ratio, narrowBackwardEfficiency * ratio, lengths, peakMultiple);
  }

  /**
   * The fraction of the dense peak a kernel reaches at a head dimension, at {@link
   * SequenceScaling#REFERENCE} tokens ({@link #efficiency(boolean, int, int)}).
   *
   * @param backward whether it is the backward kernel
   * @param headDim the elements of one head's query, >= 1
   * @return the fraction, in (0, 1]
   */
  public double efficiency(boolean backward, int headDim) {
    return efficiency(backward, headDim, SequenceScaling.REFERENCE);
  }

  /**
   * The fraction of the dense peak a kernel reaches at a head dimension and sequence length: the
   * narrow fraction at {@link #NARROW_HEAD} and below, the full one at {@link #WIDE_HEAD} and
   * above, each times its factor at that length ({@link #lengths}), linear between.
   *
   * @param backward whether it is the backward kernel
   * @param headDim the elements of one head's query, >= 1
   * @param sequence the tokens of the sequence the kernel attends over, >= 1
   * @return the fraction, in (0, 1]
   */
  public double efficiency(boolean backward, int headDim, int sequence) {
    Require.positive(headDim, "head dimension");
    double wide = (backward ? backwardEfficiency : forwardEfficiency)
        * lengths.factor(backward, false, sequence);
    double narrow = (backward ? narrowBackwardEfficiency : narrowForwardEfficiency)
        * lengths.factor(backward, true, sequence);
    double t = (Math.min(Math.max(headDim, NARROW_HEAD), WIDE_HEAD) - NARROW_HEAD)
        / (double) (WIDE_HEAD - NARROW_HEAD);
    return narrow + (wide - narrow) * t;
  }

  /**
   * The highest fraction of the dense peak any of these kernels reaches, at any head dimension and
   * sequence length.
   *
   * @return the fraction, in (0, 1]
   */
  public double peakEfficiency() {
    return peakEfficiency(forwardEfficiency, backwardEfficiency, narrowForwardEfficiency,
        narrowBackwardEfficiency, lengths);
  }

  /**
   * The highest share of the tensor cores' own peak these kernels reach: {@link #peakEfficiency}
   * over {@link #peakMultiple}.
   *
   * @return the share, in (0, 1]
   */
  public double peakShare() {
    return peakEfficiency() / peakMultiple;
  }

  /**
   * The highest fraction of the dense peak kernels of these fractions at {@link
   * SequenceScaling#REFERENCE} tokens reach at any head dimension and length of a table.
   *
   * @param forward the forward's fraction at head dimension 128
   * @param backward the backward's
   * @param narrowForward the forward's at head dimension 64
   * @param narrowBackward the backward's
   * @param lengths how they move with the sequence
   * @return the fraction, > 0
   */
  public static double peakEfficiency(double forward, double backward, double narrowForward,
      double narrowBackward, SequenceScaling lengths) {
    return Math.max(Math.max(forward * lengths.max(false, false),
        backward * lengths.max(true, false)),
        Math.max(narrowForward * lengths.max(false, true),
        narrowBackward * lengths.max(true, true)));
  }

  /**
   * The default fused attention kernel of a GPU, if it has one: its own measured fractions
   * ({@link GpuSpec#fusedAttention}), else its architecture's ({@link Architecture#attention}),
   * Ampere and later.
   *
   * @param gpu the GPU
   * @return the kernels' efficiencies, or empty on GPUs FlashAttention-2 does not run on
   */
  public static Optional<FusedAttentionKernels> of(GpuSpec gpu) {
    return Optional.ofNullable(gpu.fusedAttention());
  }

  /**
   * The prices of a named kernel on an architecture (the table above).
   *
   * @param architecture the GPU's architecture
   * @param kernel the kernel the run used
   * @return the kernel's efficiencies
   * @throws InputException when the kernel does not run there, or meshplan has no published
   *     figure for it there
   */
  public static FusedAttentionKernels of(Architecture architecture, AttentionKernel kernel) {
    return table(architecture, kernel).orElseThrow(() -> refusal(architecture, kernel));
  }

  /** The table: empty where the kernel does not run or has no published figure. */
  private static Optional<FusedAttentionKernels> table(Architecture architecture,
      AttentionKernel kernel) {
    return switch (architecture) {
      case VOLTA -> Optional.empty();
      case AMPERE -> kernel == AttentionKernel.FLASH2 || kernel == AttentionKernel.TRITON
          ? Optional.of(AMPERE) : Optional.empty();
      case HOPPER -> Optional.of(kernel == AttentionKernel.FLASH2
          || kernel == AttentionKernel.TRITON ? HOPPER_FLASH2
          : kernel == AttentionKernel.CUDNN_FP8
          ? HOPPER.inFp8(HOPPER_FP8, FP8_OVER_16BIT_PEAK) : HOPPER);
      case BLACKWELL -> kernel == AttentionKernel.CUDNN ? Optional.of(BLACKWELL)
          : kernel == AttentionKernel.CUDNN_FP8 ? Optional.of(BLACKWELL.inFp8(BLACKWELL_FP8,
              FP8_OVER_16BIT_PEAK))
          : Optional.empty();
      case CDNA3 -> kernel == AttentionKernel.FLASH2 || kernel == AttentionKernel.TRITON
          ? Optional.of(CDNA3_FLASH2) : Optional.empty();
      case CDNA4 -> Optional.empty();
    };
  }

  /** Why a kernel is not priced on an architecture, and what is. */
  private static InputException refusal(Architecture architecture, AttentionKernel kernel) {
    String on = " on " + architecture.word();
    java.util.List<String> priced = java.util.Arrays.stream(AttentionKernel.values())
        .filter(k -> table(architecture, k).isPresent()).map(AttentionKernel::word).toList();
    String use = priced.isEmpty() ? "; use unfused attention"
        : "; use " + String.join(", ", priced) + " or unfused";
    if (kernel == AttentionKernel.FLASH3) {
      return new InputException("flash3 attention (FlashAttention-3) runs on Hopper GPUs only"
          + " (H100, H200), not" + on + use);
    }
    if (architecture == Architecture.VOLTA) {
      return new InputException("no fused attention kernel runs" + on
          + " (FlashAttention-2 needs Ampere or later)" + use);
    }
    return new InputException("meshplan has no published " + kernel.word() + " attention "
        + "benchmark" + on + " to price it with" + use);
  }

  /**
   * The prices of a named kernel on a GPU, or of its architecture's default kernel.
   *
   * The architecture's default kernel, named or not, runs at the GPU's own fractions where its
   * catalog entry states them ({@link #of(GpuSpec)}).
   *
   * @param gpu the GPU
   * @param kernel the kernel the run used, or empty for the architecture's default
   * @return the kernels' efficiencies, or empty on GPUs without fused kernels when none is named
   * @throws InputException when the named kernel does not run on the GPU, or is not priced there
   */
  public static Optional<FusedAttentionKernels> of(GpuSpec gpu,
      Optional<AttentionKernel> kernel) {
    if (kernel.isEmpty() || kernel.equals(AttentionKernel.defaultFor(gpu.architecture()))) {
      return of(gpu);
    }
    try {
      return Optional.of(of(gpu.architecture(), kernel.get()));
    } catch (InputException e) {
      throw new InputException(gpu.name() + ": " + e.getMessage());
    }
  }

  /**
   * The prices of a named kernel on a GPU whose FP8 training scales as a recipe does: cuDNN's FP8
   * attention as the recipe runs it ({@link #fp8}), any other kernel as {@link #of(GpuSpec,
   * Optional)} prices it.
   *
   * @param gpu the GPU
   * @param kernel the kernel, or empty for the architecture's default
   * @param q the training recipe's scaling
   * @return the kernels' efficiencies, or empty on GPUs without fused attention
   * @throws InputException when the kernel is not priced on the GPU
   */
  public static Optional<FusedAttentionKernels> of(GpuSpec gpu,
      Optional<AttentionKernel> kernel, Fp8Quantization q) {
    return kernel.equals(Optional.of(AttentionKernel.CUDNN_FP8)) ? Optional.of(fp8(gpu, q))
        : of(gpu, kernel);
  }

  /**
   * Checks that a GPU has fused attention kernels.
   *
   * @param gpu the GPU
   * @throws InputException naming the GPU when it has none
   */
  public static void require(GpuSpec gpu) {
    if (of(gpu).isEmpty() && gpu.architecture().vendor() == Architecture.Vendor.AMD) {
      throw new InputException("flash attention is not priced on the " + gpu.name() + " ("
          + gpu.architecture().word() + "): meshplan has no published fused-attention kernel "
          + "benchmark there; use unfused attention");
    }
    if (of(gpu).isEmpty()) {
      throw new InputException("flash attention needs Ampere or later, and the " + gpu.name()
          + " has no bf16 tensor cores; use unfused attention");
    }
  }
}
