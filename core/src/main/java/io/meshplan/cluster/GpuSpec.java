package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * One GPU model as its datasheet describes it, what meshplan prices with. All throughputs are
 * dense (no 2:4 sparsity). Catalog entries ({@link GpuEntry}, read by {@link CatalogReader} from
 * the shipped {@code catalog.yaml}, a user's catalog or a cluster file) hold one each.
 *
 * @param name catalog name, lower case, e.g. {@code a100-40gb}
 * @param architecture the GPU architecture, which chooses every kernel-efficiency table
 * @param peakFlops peak dense math throughput per precision, in FLOP/s; a precision the GPU does
 *     not support is absent, and one its architecture lacks may not be present
 * @param hbmBytes device memory, in bytes
 * @param hbmBandwidth device memory bandwidth, in bytes/s
 * @param nvlinkDomain the GPUs one NVLink domain joins (8 on HGX and DGX boards); meshplan's
 *     communication models take each node as one NVLink domain
 * @param nvlinkBandwidth NVLink bandwidth per GPU in one direction, in bytes/s (half the
 *     bidirectional total printed on the datasheet); this is what nccl-tests' bus bandwidth is
 *     compared against; on a fully connected mesh ({@code meshLinkBandwidth > 0}) the sum of its
 *     links, what a collective over the whole node can use
 * @param meshLinkBandwidth 0 where a switch (NVSwitch) joins the node's GPUs, so any group of them
 *     has the full {@link #nvlinkBandwidth}; else the bandwidth per direction of the one
 *     point-to-point link that joins each pair of GPUs (AMD Infinity Fabric on MI300X, MI325X
 *     and MI355X boards: each of the 8 GPUs links directly to the other 7), bytes/s
 * @param fusedAttention the fractions of the dense peak the architecture's default fused
 *     attention kernel reaches on this GPU ({@link FusedAttentionKernels}, {@link
 *     AttentionKernel#defaultFor}); null where the architecture has no priced fused kernel. A
 *     GPU whose kernel was measured apart from its architecture's states its own (a catalog's
 *     {@code attention:}); passing null takes the architecture's ({@link
 *     Architecture#attention}).
 * @param gemm16Efficiency the fraction of the 16-bit dense peak a large GEMM reaches on this
 *     GPU, where it was measured apart from its architecture's (a catalog's {@code gemm16:});
 *     0 takes the architecture's ({@link Architecture#gemmEfficiency})
 */
public record GpuSpec(
    String name,
    Architecture architecture,
    Map<Precision, Double> peakFlops,
    long hbmBytes,
    double hbmBandwidth,
    int nvlinkDomain,
    double nvlinkBandwidth,
    double meshLinkBandwidth,
    FusedAttentionKernels fusedAttention,
    double gemm16Efficiency) implements java.io.Serializable {
  private static final long serialVersionUID = 2L;

  /** Validates the numbers and freezes the throughput map. */
  public GpuSpec {
    Require.nonNull(name, "gpu name");
    Require.that(!name.isBlank(), "gpu name must not be blank");
    Require.nonNull(architecture, "gpu architecture");
    Require.nonNull(peakFlops, "peak FLOP/s");
    Require.that(peakFlops.containsKey(Precision.FP32), "gpu " + name + " needs an FP32 peak");
    EnumMap<Precision, Double> copy = new EnumMap<>(Precision.class);
    for (Map.Entry<Precision, Double> e : peakFlops.entrySet()) {
      Require.that(e.getValue() != null && e.getValue() > 0 && Double.isFinite(e.getValue()),
          "gpu " + name + ": peak " + e.getKey() + " must be positive, got " + e.getValue());
      Require.that(architecture.has(e.getKey()), "gpu " + name + ": " + architecture.word()
          + " has no " + e.getKey() + " math");
      copy.put(e.getKey(), e.getValue());
    }
    peakFlops = Collections.unmodifiableMap(copy);
    Require.positive(hbmBytes, "gpu " + name + " HBM bytes");
    Require.that(hbmBandwidth > 0 && Double.isFinite(hbmBandwidth),
        "gpu " + name + " HBM bandwidth must be positive, got " + hbmBandwidth);
    Require.positive(nvlinkDomain, "gpu " + name + " NVLink domain");
    Require.that(nvlinkBandwidth > 0 && Double.isFinite(nvlinkBandwidth),
        "gpu " + name + " NVLink bandwidth must be positive, got " + nvlinkBandwidth);
    Require.that(meshLinkBandwidth >= 0 && Double.isFinite(meshLinkBandwidth),
        "gpu " + name + " mesh link bandwidth must be 0 or positive, got " + meshLinkBandwidth);
    Require.that(gemm16Efficiency >= 0 && gemm16Efficiency <= 1, "gpu " + name + ": the 16-bit "
        + "GEMM fraction of the dense peak must be above 0 and at most 1, got "
        + gemm16Efficiency);
    if (fusedAttention == null) {
      fusedAttention = architecture.attention().orElse(null);
    } else if (architecture.attention().isEmpty()) {
      throw new InputException("gpu " + name + ": " + architecture.word() + " has no priced "
          + "fused attention kernel to state the fractions of; leave 'attention' out");
    }
  }

  /**
   * A GPU at its architecture's 16-bit GEMM price.
   *
   * @param name catalog name
   * @param architecture the architecture
   * @param peakFlops dense peaks, FLOP/s
   * @param hbmBytes device memory, bytes
   * @param hbmBandwidth device memory bandwidth, bytes/s
   * @param nvlinkDomain GPUs per NVLink domain
   * @param nvlinkBandwidth NVLink bandwidth per GPU per direction, bytes/s
   * @param meshLinkBandwidth 0 behind a switch, else each direct link's bandwidth, bytes/s
   * @param fusedAttention its fused attention fractions, or null for the architecture's
   */
  public GpuSpec(String name, Architecture architecture, Map<Precision, Double> peakFlops,
      long hbmBytes, double hbmBandwidth, int nvlinkDomain, double nvlinkBandwidth,
      double meshLinkBandwidth, FusedAttentionKernels fusedAttention) {
    this(name, architecture, peakFlops, hbmBytes, hbmBandwidth, nvlinkDomain, nvlinkBandwidth,
        meshLinkBandwidth, fusedAttention, 0);
  }

  /**
   * A GPU at its architecture's fused attention prices.
   *
   * @param name catalog name
   * @param architecture the architecture
   * @param peakFlops dense peaks, FLOP/s
   * @param hbmBytes device memory, bytes
   * @param hbmBandwidth device memory bandwidth, bytes/s
   * @param nvlinkDomain GPUs per NVLink domain
   * @param nvlinkBandwidth NVLink bandwidth per GPU per direction, bytes/s
   * @param meshLinkBandwidth 0 behind a switch, else each direct link's bandwidth, bytes/s
   */
  public GpuSpec(String name, Architecture architecture, Map<Precision, Double> peakFlops,
      long hbmBytes, double hbmBandwidth, int nvlinkDomain, double nvlinkBandwidth,
      double meshLinkBandwidth) {
    this(name, architecture, peakFlops, hbmBytes, hbmBandwidth, nvlinkDomain, nvlinkBandwidth,
        meshLinkBandwidth, null);
  }

  /**
   * A GPU whose node's GPUs are joined by a switch (every NVIDIA board).
   *
   * @param name catalog name
   * @param architecture the architecture
   * @param peakFlops dense peaks, FLOP/s
   * @param hbmBytes device memory, bytes
   * @param hbmBandwidth device memory bandwidth, bytes/s
   * @param nvlinkDomain GPUs per NVLink domain
   * @param nvlinkBandwidth NVLink bandwidth per GPU per direction, bytes/s
   */
  public GpuSpec(String name, Architecture architecture, Map<Precision, Double> peakFlops,
      long hbmBytes, double hbmBandwidth, int nvlinkDomain, double nvlinkBandwidth) {
    this(name, architecture, peakFlops, hbmBytes, hbmBandwidth, nvlinkDomain, nvlinkBandwidth, 0);
  }

  /**
   * Whether the node's GPUs are joined pairwise by direct links rather than a switch.
   *
   * @return true on AMD's Infinity Fabric mesh
   */
  public boolean meshed() {
    return meshLinkBandwidth > 0;
  }

  /**
   * The bandwidth per direction one GPU has towards the other GPUs of a group inside its node: the
   * whole {@link #nvlinkBandwidth} behind a switch; on a fully connected mesh only the links to
   * the group's other {@code gpus - 1} members carry its traffic (RCCL's rings and all-to-all run
   * over the direct links; a pair of GPUs has one link), so {@code (gpus - 1)} links, never more
   * than the GPU's total.
   *
   * @param gpus the GPUs of the group inside the node, >= 1
   * @return bytes/s
   */
  public double intraNodeBandwidth(int gpus) {
    Require.positive(gpus, "GPUs in the group");
    if (!meshed()) {
      return nvlinkBandwidth;
    }
    return Math.min(nvlinkBandwidth, Math.max(1, gpus - 1) * meshLinkBandwidth);
  }

  /**
   * The bandwidth per direction NCCL's collectives and send/recv reach for one GPU of a group
   * inside its node: {@link #intraNodeBandwidth} times the architecture's {@link
   * Architecture#ncclLinkFraction} (what NCCL's topology model gives each link). This, not the
   * datasheet's line rate, is what a collective over NVLink is priced at.
   *
   * @param gpus the GPUs of the group inside the node, >= 1
   * @return bytes/s
   */
  public double collectiveBandwidth(int gpus) {
    return intraNodeBandwidth(gpus) * architecture.ncclLinkFraction();
  }

  /**
   * The peak dense throughput for a precision.
   *
   * @param precision the number format
   * @return FLOP/s, or empty if this GPU has no such tensor-core path
   */
  public Optional<Double> peak(Precision precision) {
    return Optional.ofNullable(peakFlops.get(precision));
  }

  /**
   * Checks that this GPU has the math a training precision runs in ({@link
   * Precision#ofTraining}): bf16 needs BF16 tensor cores (Ampere and later), fp8 FP8 tensor cores
   * (Hopper and later); every GPU in the catalog has FP32 and FP16.
   *
   * @param trainingType the training precision
   * @throws InputException naming the precision, the GPU and the precisions it has with their
   *     dense peaks
   */
  public void requireTraining(io.meshplan.graph.DType trainingType) {
    Optional<Precision> p = Precision.ofTraining(trainingType);
    if (p.isPresent() && peak(p.get()).isPresent()) {
      return;
    }
    String want = p.map(Precision::word).orElse(trainingType.hloName());
    StringBuilder has = new StringBuilder();
    for (Precision q : Precision.values()) {
      if (q != Precision.TF32 && peakFlops.containsKey(q)) {
        has.append(has.length() == 0 ? "" : ", ").append(q.word()).append(" (")
            .append(String.format(java.util.Locale.ROOT, "%.1f", peakFlops.get(q) / 1e12))
            .append(" TFLOP/s)");
      }
    }
    throw new InputException("the training precision " + want + " needs "
        + p.map(Precision::name).orElse(want) + " math, which the " + name
        + " does not have; it trains in " + has);
  }

  /**
   * The share of a GPU's memory a plan may use unless told otherwise: the rest is left to the CUDA
   * context, NCCL buffers and allocator fragmentation.
   */
  public static final double USABLE_MEMORY_FRACTION = 0.95;

  /**
   * The memory a plan may use by default, {@link #USABLE_MEMORY_FRACTION} of the HBM.
   *
   * @return bytes
   */
  public double usableMemoryBytes() {
    return USABLE_MEMORY_FRACTION * hbmBytes;
  }

  /**
   * The precision mixed-precision training uses on this GPU by default: bf16 where it has bf16
   * tensor cores, else fp16 (V100), else fp32 (a catalog entry with neither: trained as it can
   * be, rather than refused as if fp16 had been asked for).
   *
   * @return bf16, f16 or f32
   */
  public io.meshplan.graph.DType trainingType() {
    return peak(Precision.BF16).isPresent() ? io.meshplan.graph.DType.BF16
        : peak(Precision.FP16).isPresent() || peak(Precision.FP32).isEmpty()
            ? io.meshplan.graph.DType.F16 : io.meshplan.graph.DType.F32;
  }

  /**
   * A copy with another NVLink bandwidth (a cluster file may override the datasheet); on a mesh
   * each link scales with it.
   *
   * @param bytesPerSecond per-GPU unidirectional NVLink bandwidth, bytes/s
   * @return the new spec
   */
  public GpuSpec withNvlinkBandwidth(double bytesPerSecond) {
    return new GpuSpec(name, architecture, peakFlops, hbmBytes, hbmBandwidth, nvlinkDomain,
        bytesPerSecond, meshed() ? meshLinkBandwidth * bytesPerSecond / nvlinkBandwidth : 0,
        fusedAttention, gemm16Efficiency);
  }

  /**
   * A copy with another HBM bandwidth.
   *
   * @param bytesPerSecond device memory bandwidth, bytes/s
   * @return the new spec
   */
  public GpuSpec withHbmBandwidth(double bytesPerSecond) {
    return new GpuSpec(name, architecture, peakFlops, hbmBytes, bytesPerSecond, nvlinkDomain,
        nvlinkBandwidth, meshLinkBandwidth, fusedAttention, gemm16Efficiency);
  }
}
