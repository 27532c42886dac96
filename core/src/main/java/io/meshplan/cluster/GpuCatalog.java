package io.meshplan.cluster;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The GPUs meshplan knows, with numbers from NVIDIA's datasheets (dense tensor-core throughput,
 * that is the sparse figure halved where the datasheet prints the sparse one):
 *
 * <ul>
 *   <li>{@code v100-16gb}, {@code v100-32gb}: NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7
 *       TFLOP/s, tensor FP16 125 TFLOP/s, HBM2 900 GB/s, NVLink 2 300 GB/s bidirectional.
 *   <li>{@code a100-40gb}, {@code a100-80gb}: NVIDIA A100 Tensor Core GPU datasheet (SXM): FP32
 *       19.5, TF32 156, BF16/FP16 312 TFLOP/s; HBM2 1,555 GB/s (40GB), HBM2e 2,039 GB/s (80GB);
 *       NVLink 3 600 GB/s bidirectional.
 *   <li>{@code h100-80gb}: NVIDIA H100 Tensor Core GPU datasheet (SXM): FP32 67, TF32 494.5,
 *       BF16/FP16 989.5, FP8 1,979 TFLOP/s; HBM3 3.35 TB/s; NVLink 4 900 GB/s bidirectional.
 *   <li>{@code h200-141gb}: NVIDIA H200 Tensor Core GPU datasheet (SXM): compute as H100 SXM;
 *       141 GB HBM3e at 4.8 TB/s; NVLink 900 GB/s bidirectional.
 *   <li>{@code b200}: NVIDIA DGX B200 / HGX B200 datasheets, per GPU: FP32 75, TF32 1,100,
 *       BF16/FP16 2,250, FP8 4,500 TFLOP/s dense; 180 GB HBM3e at 8 TB/s; NVLink 5 1.8 TB/s
 *       bidirectional.
 * </ul>
 *
 * <p>Memory sizes are taken as binary gigabytes (2^30 bytes), the unit in which the marketing
 * capacities are actually provisioned; bandwidths are decimal (10^9). NVLink bandwidth is stored per
 * direction, half of the datasheet's bidirectional figure.
 */
public final class GpuCatalog {
  private static final double T = 1e12;
  private static final double G = 1e9;
  private static final long GIB = 1L << 30;
  private static final Map<String, GpuSpec> GPUS = build();

  private GpuCatalog() {}

  private static Map<Precision, Double> flops(double fp32, double tf32, double bf16, double fp16,
      double fp8) {
    EnumMap<Precision, Double> m = new EnumMap<>(Precision.class);
    m.put(Precision.FP32, fp32 * T);
    if (tf32 > 0) {
      m.put(Precision.TF32, tf32 * T);
    }
    if (bf16 > 0) {
      m.put(Precision.BF16, bf16 * T);
    }
    m.put(Precision.FP16, fp16 * T);
    if (fp8 > 0) {
      m.put(Precision.FP8, fp8 * T);
    }
    return m;
  }

  private static Map<String, GpuSpec> build() {
    Map<String, GpuSpec> m = new LinkedHashMap<>();
    // Tesla V100 datasheet, SXM2 column: single precision 15.7, tensor (FP16) 125; Volta has no
    // TF32, BF16 or FP8 math.
    Map<Precision, Double> v100 = flops(15.7, 0, 0, 125, 0);
    // A100 datasheet, SXM column: FP32 19.5, TF32 156, BF16 312, FP16 312 (the starred sparse
    // figures halved); Ampere has no FP8 math.
    Map<Precision, Double> a100 = flops(19.5, 156, 312, 312, 0);
    // H100 datasheet, SXM column: FP32 67, TF32 989, BF16 1,979, FP16 1,979, FP8 3,958, all with
    // sparsity; halved to dense. The H200 datasheet's SXM column prints the same figures.
    Map<Precision, Double> h100 = flops(67, 494.5, 989.5, 989.5, 1979);
    // HGX B200 datasheet (8 GPUs): FP32 600 TFLOP/s, TF32 18, BF16/FP16 36, FP8 72 PFLOP/s with
    // sparsity; per GPU and dense: 75, 1,100, 2,250 and 4,500 TFLOP/s.
    Map<Precision, Double> b200 = flops(75, 1100, 2250, 2250, 4500);
    add(m, new GpuSpec("v100-16gb", v100, 16 * GIB, 900 * G, 2, 150 * G));
    add(m, new GpuSpec("v100-32gb", v100, 32 * GIB, 900 * G, 2, 150 * G));
    add(m, new GpuSpec("a100-40gb", a100, 40 * GIB, 1555 * G, 3, 300 * G));
    add(m, new GpuSpec("a100-80gb", a100, 80 * GIB, 2039 * G, 3, 300 * G));
    add(m, new GpuSpec("h100-80gb", h100, 80 * GIB, 3350 * G, 4, 450 * G));
    add(m, new GpuSpec("h200-141gb", h100, 141 * GIB, 4800 * G, 4, 450 * G));
    add(m, new GpuSpec("b200", b200, 180 * GIB, 8000 * G, 5, 900 * G));
    return Map.copyOf(m);
  }

  private static void add(Map<String, GpuSpec> m, GpuSpec g) {
    m.put(g.name(), g);
  }

  /**
   * Short names for the catalog GPUs that one part answers to: NVIDIA sells the H100 as SXM
   * (80 GB, the catalog's {@code h100-80gb}), PCIe (80 GB) and NVL (94 GB), and "H100" alone
   * means the SXM part of its datasheet's first column; the H200's SXM part is the catalog's
   * {@code h200-141gb}. The V100 (16 and 32 GB) and the A100 (40 and 80 GB) have two catalog
   * entries each, so their short names are refused naming both; {@code b200} is its own name.
   */
  private static final Map<String, String> ALIASES = Map.of("h100", "h100-80gb", "h200",
      "h200-141gb");

  /** Short names that fit several catalog GPUs, each with the names it could mean. */
  private static final Map<String, List<String>> AMBIGUOUS = Map.of(
      "v100", List.of("v100-16gb", "v100-32gb"), "a100", List.of("a100-40gb", "a100-80gb"));

  /**
   * Looks a GPU up by its catalog name or its short name (case-insensitive): {@code h100} is
   * {@code h100-80gb} and {@code h200} is {@code h200-141gb} (see {@link #ALIASES}).
   *
   * @param name the name
   * @return the spec, or empty
   */
  public static Optional<GpuSpec> find(String name) {
    String key = name.toLowerCase(java.util.Locale.ROOT);
    return Optional.ofNullable(GPUS.get(ALIASES.getOrDefault(key, key)));
  }

  /**
   * Every name {@link #find} accepts, sorted: the catalog names and the short names.
   *
   * @return the names
   */
  public static List<String> acceptedNames() {
    return java.util.stream.Stream.concat(GPUS.keySet().stream(), ALIASES.keySet().stream())
        .sorted().toList();
  }

  /**
   * Why a name is not a GPU, in words, listing the accepted names.
   *
   * @param name the name {@link #find} did not know
   * @return e.g. {@code unknown gpu 'a100': it is a100-40gb or a100-80gb; valid: ...}
   */
  public static String unknown(String name) {
    List<String> could = AMBIGUOUS.get(name.toLowerCase(java.util.Locale.ROOT));
    StringBuilder b = new StringBuilder("unknown gpu '").append(name).append("'");
    if (could != null) {
      b.append(": it is ").append(String.join(" or ", could));
    }
    b.append("; valid: ");
    List<String> words = new java.util.ArrayList<>();
    for (String n : names()) {
      String alias = ALIASES.entrySet().stream().filter(e -> e.getValue().equals(n))
          .map(Map.Entry::getKey).findFirst().orElse(null);
      words.add(alias == null ? n : n + " (or " + alias + ")");
    }
    return b.append(String.join(", ", words)).toString();
  }

  /**
   * The catalog names, sorted.
   *
   * @return the names
   */
  public static List<String> names() {
    return GPUS.keySet().stream().sorted().toList();
  }

  /**
   * The fabric a cluster of this GPU most often has when the cluster string names none: the
   * InfiniBand generation of the matching DGX system (DGX-1 V100: EDR; DGX A100: HDR200; DGX
   * H100/H200 and DGX B200: NDR400).
   *
   * @param gpu the GPU
   * @return the catalog fabric name
   */
  public static String defaultFabric(GpuSpec gpu) {
    String n = gpu.name();
    if (n.startsWith("v100")) {
      return "ib-edr100";
    }
    if (n.startsWith("a100")) {
      return "ib-hdr200";
    }
    return "ib-ndr400";
  }
}
