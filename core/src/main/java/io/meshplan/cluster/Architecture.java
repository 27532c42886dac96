package io.meshplan.cluster;

import io.meshplan.util.InputException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
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
 *       FusedAttentionKernels#AMPERE} on Ampere, {@link FusedAttentionKernels#HOPPER} on Hopper,
 *       {@link FusedAttentionKernels#BLACKWELL} on Blackwell (the benchmarks are cited at {@link
 *       FusedAttentionKernels}): the prices of
 *       the architecture's default kernel ({@link AttentionKernel#defaultFor}); a named kernel
 *       is priced by {@link FusedAttentionKernels#of(Architecture, AttentionKernel)}.
 *   <li>FP8 GEMMs on Hopper and Blackwell, the first NVIDIA architectures with FP8 tensor cores
 *       (NVIDIA H100 and B200 datasheets), and on CDNA 3: {@link #fp8KernelEfficiency} of the
 *       FP8 peak for the kernel
 *       alone, and in training the 16-bit GEMM's speed times Transformer Engine's measured
 *       speed-up with the operands' casts ({@link Fp8Quantization}).
 *   <li>Tensor-core precisions: Volta has FP16 only (Tesla V100 datasheet); Ampere adds TF32 and
 *       BF16 (A100 datasheet); Hopper and Blackwell add FP8 (H100, B200 datasheets). A catalog
 *       entry may not state a peak for a precision its architecture lacks.
 *   <li>Device capability major version, as PyTorch reports it ({@code
 *       torch.cuda.get_device_capability()}): on NVIDIA the CUDA compute capability, 7, 8, 9 and
 *       10 (NVIDIA's CUDA C++ Programming Guide, "Compute Capabilities"); on AMD the major number
 *       of the gfx target, 9 for gfx942 (CDNA 3) and gfx950 (CDNA 4), which HIP reports as the
 *       device's {@code major} ({@link #CDNA3}). Megatron-LM's launch checks compare it with 10.
 *   <li>AMD Instinct: CDNA 3 (MI300X, MI325X: gfx942) and CDNA 4 (MI355X: gfx950). Their 16-bit
 *       GEMM fraction is measured ({@link #CDNA3}), FlashAttention-2 on CDNA 3 is priced from
 *       a published comparison with the H100's, and CDNA 3's FP8 GEMMs from hipBLASLt's
 *       measured FP8 GEMMs ({@link Fp8Gemms#CDNA3_EFFICIENCY}); CDNA 4 has no published kernel
 *       figure meshplan uses, and is refused for pricing
 *       ({@link #requirePriced}) while its catalog entry still reads and lists.
 * </ul>
 */
public enum Architecture {
  /** Volta (V100): compute capability 7.0. */
  VOLTA(Vendor.NVIDIA, 7, KernelTimeModel.GEMM_EFFICIENCY, null, Double.NaN,
      EnumSet.of(Precision.FP32, Precision.FP16)),
  /** Ampere (A100): compute capability 8.0. */
  AMPERE(Vendor.NVIDIA, 8, KernelTimeModel.GEMM_EFFICIENCY, FusedAttentionKernels.AMPERE,
      Double.NaN,
      EnumSet.of(Precision.FP32, Precision.TF32, Precision.BF16, Precision.FP16)),
  /** Hopper (H100, H200): compute capability 9.0. */
  HOPPER(Vendor.NVIDIA, 9, KernelTimeModel.GEMM_EFFICIENCY, FusedAttentionKernels.HOPPER,
      Fp8Gemms.EFFICIENCY,
      EnumSet.allOf(Precision.class)),
  /** Blackwell (B200): compute capability 10.0. */
  BLACKWELL(Vendor.NVIDIA, 10, KernelTimeModel.BLACKWELL_16BIT_GEMM_EFFICIENCY,
      FusedAttentionKernels.BLACKWELL, Fp8Gemms.EFFICIENCY, EnumSet.allOf(Precision.class)),
  /**
   * AMD CDNA 3 (MI300X, MI325X; gfx942, which HIP and PyTorch report as capability 9.4). Matrix
   * cores in FP32, TF32, BF16, FP16 and FP8 (AMD CDNA 3 white paper; MI300X datasheet). Large
   * 16-bit GEMMs: {@link KernelTimeModel#CDNA3_16BIT_GEMM_EFFICIENCY}; FlashAttention-2: {@link
   * FusedAttentionKernels#CDNA3_FLASH2}; FP8 GEMMs: {@link Fp8Gemms#CDNA3_EFFICIENCY} of the FP8
   * peak for the kernel alone, and in training {@link Fp8Quantization#speedupOver16Bit}. No
   * FP32/TF32 GEMM figure: those are refused on it.
   */
  CDNA3(Vendor.AMD, 9, KernelTimeModel.CDNA3_16BIT_GEMM_EFFICIENCY,
      FusedAttentionKernels.CDNA3_FLASH2, Fp8Gemms.CDNA3_EFFICIENCY,
      EnumSet.allOf(Precision.class)),
  /**
   * AMD CDNA 4 (MI355X; gfx950, capability 9.5). Matrix cores in FP32, BF16, FP16 and FP8 (and
   * FP6/FP4, which meshplan has no precision for); no TF32 math (hipBLASLt emulates it there:
   * ROCm/hipBLASLt release notes, rocm-7.0.0, "Added TF32 emulation on gfx950"). Not priced.
   */
  CDNA4(Vendor.AMD, 9, Double.NaN, null, Double.NaN,
      EnumSet.of(Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8));

  /** Who makes the GPUs of an architecture: it chooses the launch files' device names. */
  public enum Vendor {
    /** NVIDIA: CUDA, NCCL, {@code nvidia.com/gpu}. */
    NVIDIA,
    /** AMD: ROCm, RCCL, {@code amd.com/gpu}. */
    AMD
  }

  private final Vendor vendor;
  private final int capabilityMajor;
  private final double gemm16Efficiency;
  private final FusedAttentionKernels attention;
  private final double fp8KernelEfficiency;
  private final Set<Precision> precisions;

  Architecture(Vendor vendor, int capabilityMajor, double gemm16Efficiency,
      FusedAttentionKernels attention, double fp8KernelEfficiency, Set<Precision> precisions) {
    this.vendor = vendor;
    this.capabilityMajor = capabilityMajor;
    this.gemm16Efficiency = gemm16Efficiency;
    this.attention = attention;
    this.fp8KernelEfficiency = fp8KernelEfficiency;
    this.precisions = precisions;
  }

  /**
   * The device capability's major version as PyTorch reports it, which Megatron-LM's {@code
   * get_device_arch_version()} returns: the CUDA compute capability on NVIDIA, the gfx target's
   * major number on AMD (HIP's {@code hipDeviceProp_t.major}).
   *
   * @return 7 for Volta up to 10 for Blackwell; 9 for CDNA 3 and CDNA 4
   */
  public int computeCapabilityMajor() {
    return capabilityMajor;
  }

  /**
   * Who makes this architecture's GPUs.
   *
   * @return NVIDIA or AMD
   */
  public Vendor vendor() {
    return vendor;
  }

  /**
   * Whether meshplan has the kernel figures to price this architecture at all.
   *
   * @return false for CDNA 4
   */
  public boolean priced() {
    return !Double.isNaN(gemm16Efficiency);
  }

  /**
   * Whether meshplan prices matrix products in a precision on this architecture: every precision
   * it has on NVIDIA; on CDNA 3 the 16-bit ones and FP8 (the published GEMM figures); none on
   * CDNA 4.
   *
   * @param dots the precision
   * @return true when {@link #gemmEfficiency} answers for it
   */
  public boolean prices(Precision dots) {
    if (!priced() || !has(dots)) {
      return false;
    }
    return vendor == Vendor.NVIDIA || dots.sixteenBit()
        || dots == Precision.FP8 && hasFp8Gemms();
  }

  /**
   * Refuses an architecture meshplan has no kernel figures for.
   *
   * @param gpu the GPU, for the message
   * @throws InputException naming the GPU, the architecture and why
   */
  public void requirePriced(String gpu) {
    if (!priced()) {
      throw new InputException("the " + gpu + " (" + word() + ") cannot be priced: meshplan has "
          + "no published " + word() + " GEMM, fused-attention and FP8 kernel benchmark to take "
          + "its kernel efficiencies from, and does not guess them");
    }
  }

  /**
   * The fraction of the dense peak a large GEMM reaches in a precision.
   *
   * @param dots the precision of the matrix products
   * @return the fraction, in (0, 1]
   * @throws InputException where the architecture has no published figure for the precision
   *     ({@link #prices})
   */
  public double gemmEfficiency(Precision dots) {
    requirePriced(word());
    if (!prices(dots)) {
      throw new InputException("meshplan has no published " + dots.word() + " GEMM benchmark on "
          + word() + " to price " + dots.word() + " matrix products with; train in bf16");
    }
    if (dots.sixteenBit()) {
      return gemm16Efficiency;
    }
    return vendor == Vendor.AMD ? fp8KernelEfficiency : KernelTimeModel.GEMM_EFFICIENCY;
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
   * Whether meshplan prices FP8 GEMMs on this architecture ({@link Fp8Gemms}).
   *
   * @return true on Hopper, Blackwell and CDNA 3
   */
  public boolean hasFp8Gemms() {
    return !Double.isNaN(fp8KernelEfficiency);
  }

  /**
   * The fraction of the FP8 dense peak a large FP8 GEMM kernel reaches alone, its operands already
   * in FP8: {@link Fp8Gemms#EFFICIENCY} on Hopper and Blackwell, {@link Fp8Gemms#CDNA3_EFFICIENCY}
   * on CDNA 3.
   *
   * @return the fraction, in (0, 1]
   * @throws IllegalStateException where FP8 GEMMs are not priced ({@link #hasFp8Gemms})
   */
  public double fp8KernelEfficiency() {
    if (!hasFp8Gemms()) {
      throw new IllegalStateException("no FP8 GEMM prices on " + word());
    }
    return fp8KernelEfficiency;
  }

  /**
   * The fraction of an NVLink link's line rate that NCCL's collectives and send/recv move over it,
   * per direction: NCCL's own per-link bandwidth for the architecture (its topology model, which
   * sizes its rings and channels and predicts their bus bandwidth: {@code ncclTopoNVLinkBw} in
   * {@code src/graph/topo.h}, NVIDIA/nccl 069a3d4) over the link's datasheet rate per direction
   * (25 GB/s for NVLink 2, 3 and 4, 50 GB/s for NVLink 5):
   *
   * <ul>
   *   <li>Volta and Ampere: {@code SM70_NVLINK_BW} = {@code SM80_NVLINK_BW} = 20.0 GB/s, 20.0 / 25
   *       = 0.80 (an A100's 12 links: 240 GB/s of its 300; the seed deployment's 8 A100s measured
   *       215.6 GB/s of all-reduce bus bandwidth at 2 GB);
   *   <li>Hopper: {@code SM90_NVLINK_BW} = 20.6 GB/s, 20.6 / 25 = 0.824 (an H100's 18 links:
   *       370.8 GB/s of its 450; NCCL's maintainer gives 360 GB/s as the all-gather and all-reduce
   *       bus bandwidth expected of 8 H100s, NVIDIA/nccl-tests issue 326);
   *   <li>Blackwell (compute capability 10.x, B200 to GB300): {@code SM100_NVLINK_BW} = 40.1 GB/s,
   *       40.1 / 50 = 0.802 (721.8 GB/s of 900).
   * </ul>
   *
   * <p>AMD's Infinity Fabric links are priced at their datasheet rate: RCCL states no such
   * figure meshplan takes. NVLink SHARP all-reduces, which reduce inside the switch and can pass
   * the ring's bus bandwidth, are not modelled: NeMo's and MLPerf's recipes turn them off
   * ({@code NCCL_NVLS_ENABLE=0}).
   *
   * @return the fraction, in (0, 1]
   */
  public double ncclLinkFraction() {
    return switch (this) {
      case VOLTA, AMPERE -> 20.0 / 25.0;
      case HOPPER -> 20.6 / 25.0;
      case BLACKWELL -> 40.1 / 50.0;
      case CDNA3, CDNA4 -> 1.0;
    };
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
        + "efficiencies for " + String.join(", ", Arrays.stream(values())
            .filter(Architecture::priced).map(Architecture::word).toList()) + " only (and reads "
        + String.join(", ", Arrays.stream(values()).filter(a -> !a.priced())
            .map(Architecture::word).toList()) + " without pricing it), and does not guess them "
        + "for another");
  }
}
