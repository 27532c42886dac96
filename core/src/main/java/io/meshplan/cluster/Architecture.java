package io.meshplan.cluster;

import io.meshplan.util.InputException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * A GPU architecture, as a catalog entry names it ({@code architecture: hopper}). Every
 * kernel-efficiency table meshplan prices with is chosen here, by architecture, and nowhere by a
 * GPU's name or its NVLink generation: a GPU that a catalog describes gets the figures of the
 * architecture it names, and a catalog entry naming an architecture not listed here is refused
 * ({@link #parse}), so no kernel efficiency is ever guessed.
 *
 * <ul>
 *   <li>Large 16-bit GEMMs: {@link KernelTimeModel#GEMM_EFFICIENCY} of the dense peak, except
 *       Blackwell's {@link KernelTimeModel#BLACKWELL_16BIT_GEMM_EFFICIENCY} (XLA's measured GEMM
 *       tables, cited at {@link KernelTimeModel#gemmEfficiency}).
 *   <li>Fused attention: none on Volta (FlashAttention-2 needs Ampere or later), {@link
 *       FusedAttentionKernels#AMPERE} on Ampere, {@link FusedAttentionKernels#HOPPER} on Hopper
 *       and Blackwell (the benchmarks are cited at {@link FusedAttentionKernels}): the prices of
 *       the architecture's default kernel ({@link AttentionKernel#defaultFor}); a named kernel
 *       is priced by {@link FusedAttentionKernels#of(Architecture, AttentionKernel)}.
 *   <li>FP8 GEMMs: {@link Fp8Gemms#EFFICIENCY} of the FP8 peak on Hopper and Blackwell, the
 *       first architectures with FP8 tensor cores (NVIDIA H100 and B200 datasheets).
 *   <li>Tensor-core precisions: Volta has FP16 only (Tesla V100 datasheet); Ampere adds TF32 and
 *       BF16 (A100 datasheet); Hopper and Blackwell add FP8 (H100, B200 datasheets). A catalog
 *       entry may not state a peak for a precision its architecture lacks.
 *   <li>CUDA compute capability major version: 7, 8, 9 and 10 (NVIDIA's CUDA C++ Programming
 *       Guide, "Compute Capabilities"); Megatron-LM's launch checks compare it with 10.
 * </ul>
 */
public enum Architecture {
  /** Volta (V100): compute capability 7.0. */
  VOLTA(7, KernelTimeModel.GEMM_EFFICIENCY, null, false,
      EnumSet.of(Precision.FP32, Precision.FP16)),
  /** Ampere (A100): compute capability 8.0. */
  AMPERE(8, KernelTimeModel.GEMM_EFFICIENCY, FusedAttentionKernels.AMPERE, false,
      EnumSet.of(Precision.FP32, Precision.TF32, Precision.BF16, Precision.FP16)),
  /** Hopper (H100, H200): compute capability 9.0. */
  HOPPER(9, KernelTimeModel.GEMM_EFFICIENCY, FusedAttentionKernels.HOPPER, true,
      EnumSet.allOf(Precision.class)),
  /** Blackwell (B200): compute capability 10.0. */
  BLACKWELL(10, KernelTimeModel.BLACKWELL_16BIT_GEMM_EFFICIENCY, FusedAttentionKernels.HOPPER,
      true, EnumSet.allOf(Precision.class));

  private final int computeCapabilityMajor;
  private final double gemm16Efficiency;
  private final FusedAttentionKernels attention;
  private final boolean fp8Gemms;
  private final Set<Precision> precisions;

  Architecture(int computeCapabilityMajor, double gemm16Efficiency,
      FusedAttentionKernels attention, boolean fp8Gemms, Set<Precision> precisions) {
    this.computeCapabilityMajor = computeCapabilityMajor;
    this.gemm16Efficiency = gemm16Efficiency;
    this.attention = attention;
    this.fp8Gemms = fp8Gemms;
    this.precisions = precisions;
  }

  /**
   * The CUDA compute capability's major version (Megatron-LM's {@code
   * get_device_arch_version()}).
   *
   * @return 7 for Volta up to 10 for Blackwell
   */
  public int computeCapabilityMajor() {
    return computeCapabilityMajor;
  }

  /**
   * The fraction of the dense peak a large GEMM reaches in a precision.
   *
   * @param dots the precision of the matrix products
   * @return the fraction, in (0, 1]
   */
  public double gemmEfficiency(Precision dots) {
    boolean sixteenBit = dots == Precision.BF16 || dots == Precision.FP16;
    return sixteenBit ? gemm16Efficiency : KernelTimeModel.GEMM_EFFICIENCY;
  }

  /**
   * The fused attention kernels of this architecture.
   *
   * @return their efficiencies, or empty where FlashAttention-2 does not run (Volta)
   */
  public Optional<FusedAttentionKernels> attention() {
    return Optional.ofNullable(attention);
  }

  /**
   * The fraction of the FP8 peak a large FP8 GEMM reaches.
   *
   * @return the fraction, or empty where there are no FP8 tensor cores
   */
  public OptionalDouble fp8GemmEfficiency() {
    return fp8Gemms ? OptionalDouble.of(Fp8Gemms.EFFICIENCY) : OptionalDouble.empty();
  }

  /**
   * Whether this architecture has math in a precision (a datasheet peak may be stated for it).
   *
   * @param p the precision
   * @return true when it has
   */
  public boolean has(Precision p) {
    return precisions.contains(p);
  }

  /**
   * The word a catalog uses, e.g. {@code hopper}.
   *
   * @return the lower-case name
   */
  public String word() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Reads an architecture word, case-insensitive.
   *
   * @param word the word, e.g. {@code ampere}
   * @return the architecture
   * @throws InputException naming the word and the architectures meshplan has kernel tables for
   */
  public static Architecture parse(String word) {
    for (Architecture a : values()) {
      if (a.word().equals(word.toLowerCase(Locale.ROOT))) {
        return a;
      }
    }
    throw new InputException("unknown architecture '" + word + "': meshplan has kernel "
        + "efficiencies for " + String.join(", ", Arrays.stream(values()).map(Architecture::word)
            .toList()) + " only, and does not guess them for another");
  }
}
