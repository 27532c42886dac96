package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped catalog.yaml holds exactly the numbers the Java tables held before it (GpuCatalog
 * and FabricCatalog at af311a0), bit for bit, so every prediction is unchanged; an entry's
 * architecture, never its name, chooses its kernel tables; and a hostile or broken catalog file
 * is refused with one line naming the file.
 */
class HardwareCatalogTest {
  @TempDir Path dir;

  private static final double T = 1e12;
  private static final double G = 1e9;
  private static final long GIB = 1L << 30;

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

  /** The Java table of GpuCatalog at af311a0, restated with its own arithmetic. */
  @Test
  void shippedGpusAreTheFormerJavaTableBitForBit() {
    Map<Precision, Double> v100 = flops(15.7, 0, 0, 125, 0);
    Map<Precision, Double> a100 = flops(19.5, 156, 312, 312, 0);
    Map<Precision, Double> h100 = flops(67, 494.5, 989.5, 989.5, 1979);
    Map<Precision, Double> b200 = flops(75, 1100, 2250, 2250, 4500);
    List<GpuSpec> before = List.of(
        new GpuSpec("v100-16gb", Architecture.VOLTA, v100, 16 * GIB, 900 * G, 8, 150 * G),
        new GpuSpec("v100-32gb", Architecture.VOLTA, v100, 32 * GIB, 900 * G, 8, 150 * G),
        new GpuSpec("a100-40gb", Architecture.AMPERE, a100, 40 * GIB, 1555 * G, 8, 300 * G),
        new GpuSpec("a100-80gb", Architecture.AMPERE, a100, 80 * GIB, 2039 * G, 8, 300 * G),
        new GpuSpec("h100-80gb", Architecture.HOPPER, h100, 80 * GIB, 3350 * G, 8, 450 * G),
        new GpuSpec("h200-141gb", Architecture.HOPPER, h100, 141 * GIB, 4800 * G, 8, 450 * G),
        new GpuSpec("b200", Architecture.BLACKWELL, b200, 180 * GIB, 8000 * G, 8, 900 * G));
    for (GpuSpec g : before) {
      assertThat(GpuCatalog.find(g.name())).as(g.name()).contains(g);
    }
    // 15.7 TFLOP/s read from the YAML and scaled by 1e12, as the Java table did: 1.57e13.
    assertThat(GpuCatalog.find("v100-32gb").orElseThrow().peak(Precision.FP32))
        .contains(15.7 * 1e12);
    // 141 GiB = 141 * 2^30 = 151,397,597,184 bytes.
    assertThat(GpuCatalog.find("h200").orElseThrow().hbmBytes()).isEqualTo(151_397_597_184L);
    // NVLink 4's 900 GB/s bidirectional is 450e9 bytes/s each way.
    assertThat(GpuCatalog.find("h100").orElseThrow().nvlinkBandwidth()).isEqualTo(450e9);
    assertThat(GpuCatalog.names()).containsAll(before.stream().map(GpuSpec::name).toList());
  }

  /** The Java table of FabricCatalog at af311a0: line rate / 8, NICs, latency. */
  @Test
  void shippedFabricsAreTheFormerJavaTableBitForBit() {
    double gbit = 1e9 / 8;
    List<Fabric> before = List.of(
        new Fabric("ib-edr100", FabricKind.INFINIBAND, 100 * gbit, 8, 5e-6),
        new Fabric("ib-hdr200", FabricKind.INFINIBAND, 200 * gbit, 8, 5e-6),
        new Fabric("ib-ndr400", FabricKind.INFINIBAND, 400 * gbit, 8, 5e-6),
        new Fabric("roce-100", FabricKind.ROCE, 100 * gbit, 8, 8e-6),
        new Fabric("roce-200", FabricKind.ROCE, 200 * gbit, 8, 8e-6),
        new Fabric("roce-400", FabricKind.ROCE, 400 * gbit, 8, 8e-6),
        new Fabric("tcp-25", FabricKind.ETHERNET, 25 * gbit, 1, 50e-6),
        // Added since: InfiniBand XDR, ConnectX-8 (GB300 NVL72's NICs).
        new Fabric("ib-xdr800", FabricKind.INFINIBAND, 800 * gbit, 8, 5e-6));
    for (Fabric f : before) {
      assertThat(FabricCatalog.find(f.name())).as(f.name()).contains(f);
    }
    // 400 Gb/s / 8 = 50e9 bytes/s per NIC.
    assertThat(FabricCatalog.find("ib-ndr400").orElseThrow().nicBandwidth()).isEqualTo(50e9);
    assertThat(FabricCatalog.names()).hasSize(before.size());
  }

  /** The former name-based guesses, now each entry's data, give the same answers. */
  @Test
  void architectureAndDefaultFabricAreEachEntrysData() {
    HardwareCatalog c = HardwareCatalog.shipped();
    assertThat(c.gpu("v100-16gb").orElseThrow().defaultFabric()).isEqualTo("ib-edr100");
    assertThat(c.gpu("a100-80gb").orElseThrow().defaultFabric()).isEqualTo("ib-hdr200");
    assertThat(c.gpu("b200").orElseThrow().defaultFabric()).isEqualTo("ib-ndr400");
    assertThat(c.gpu("b200").orElseThrow().spec().architecture())
        .isEqualTo(Architecture.BLACKWELL);
    // Kernel tables follow the architecture: B200's 16-bit GEMMs at 0.68, its fp32 at 0.8.
    GpuSpec b200 = c.gpu("b200").orElseThrow().spec();
    assertThat(KernelTimeModel.gemmEfficiency(b200, Precision.BF16)).isEqualTo(0.68);
    assertThat(KernelTimeModel.gemmEfficiency(b200, Precision.FP32)).isEqualTo(0.8);
    // An Ampere part with any name and any NVLink gets Ampere's attention, a Volta part none.
    GpuSpec noNvlink = new GpuSpec("zz-pcie", Architecture.HOPPER,
        Map.of(Precision.FP32, 1e13, Precision.BF16, 1e14), GIB, 1e12, 1, 1e9);
    assertThat(FusedAttentionKernels.of(noNvlink)).contains(FusedAttentionKernels.HOPPER);
    assertThat(FusedAttentionKernels.of(c.gpu("v100").map(GpuEntry::spec)
        .orElse(GpuCatalog.find("v100-32gb").orElseThrow()))).isEmpty();
  }

  private static final String ENTRY = "gpus:\n  - name: x9-48gb\n    architecture: hopper\n"
      + "    peakTflops: {fp32: 50, bf16: 800, fp8: 1600}\n    memoryGiB: 48\n"
      + "    hbmGBps: 2000\n    nvlinkDomain: 4\n    nvlinkGBpsPerDirection: 200\n"
      + "    defaultFabric: roce-200\n    source: a made-up part for a test\n";

  private HardwareCatalog withFile(String text) throws Exception {
    Path f = dir.resolve("catalog.yaml");
    Files.writeString(f, text);
    return HardwareCatalog.shipped().with(f);
  }

  @Test
  void aUserEntryAddsAGpuAndAnotherReplacesOneByName() throws Exception {
    HardwareCatalog c = withFile(ENTRY + "  - name: b200\n    architecture: blackwell\n"
        + "    peakTflops: {fp32: 80}\n    memoryGiB: 192\n    hbmGBps: 8000\n"
        + "    nvlinkDomain: 72\n    nvlinkGBpsPerDirection: 900\n"
        + "    defaultFabric: ib-ndr400\n    source: test\n");
    GpuSpec x = ClusterSpec.parse("2x4:x9-48gb", c).gpu();
    // 48 GiB = 48 * 2^30 bytes; 800 TFLOP/s = 8e14 FLOP/s.
    assertThat(x.hbmBytes()).isEqualTo(48L << 30);
    assertThat(x.peak(Precision.BF16)).contains(8e14);
    assertThat(ClusterSpec.parse("2x4:x9-48gb", c).fabric().name()).isEqualTo("roce-200");
    assertThat(ClusterSpec.parse("1x8:b200", c).gpu().hbmBytes()).isEqualTo(192L << 30);
    // A short name that a user's entry gives too is ambiguous, refused naming both.
    HardwareCatalog both = withFile(ENTRY + "    aliases: [h100]\n");
    assertThat(both.gpu("h100")).isEmpty();
    assertThat(both.unknownGpu("h100")).startsWith("unknown gpu 'h100': it is h100-80gb or "
        + "x9-48gb; valid: ");
    // The shipped catalog is untouched.
    assertThat(GpuCatalog.find("x9-48gb")).isEmpty();
    assertThat(GpuCatalog.find("b200").orElseThrow().hbmBytes()).isEqualTo(180L << 30);
  }

  /**
   * A GPU's own attention fractions replace its architecture's wide-head ones; the narrow-head
   * ones hold unless stated.
   */
  @Test
  void aUserEntryMayStateItsOwnAttentionFractions() throws Exception {
    HardwareCatalog c = withFile(ENTRY + "    attention: {forward: 0.65, backward: 0.45}\n");
    FusedAttentionKernels k = c.gpu("x9-48gb").orElseThrow().spec().fusedAttention();
    // The architecture's length table carries over to the stated fractions.
    assertThat(k).isEqualTo(new FusedAttentionKernels(0.65, 0.45, 0.34, 0.29,
        FusedAttentionKernels.HOPPER_LENGTHS));
    HardwareCatalog n = withFile(ENTRY + "    attention: {forward: 0.65, backward: 0.45, "
        + "narrowForward: 0.4, narrowBackward: 0.3}\n");
    assertThat(n.gpu("x9-48gb").orElseThrow().spec().fusedAttention())
        .isEqualTo(new FusedAttentionKernels(0.65, 0.45, 0.4, 0.3,
            FusedAttentionKernels.HOPPER_LENGTHS));
    // Fractions that the length table would lift past the dense peak are refused: 0.9 at 4,096
    // tokens is 0.9 x 1.2257 = 1.10 of the peak in the backward at 32,768.
    assertThatThrownBy(() -> withFile(ENTRY + "    attention: {forward: 0.6, backward: 0.9}\n"))
        .isInstanceOf(io.meshplan.util.InputException.class)
        .hasMessageContaining("the fractions are stated at 4096 tokens, and hopper's kernels run "
            + "up to 1.226 times faster at longer sequences, which would pass the dense peak");
    // So are narrow-head fractions: 0.95 x 358 / 336 = 1.012 of the peak at 32,768 tokens.
    assertThatThrownBy(() -> withFile(ENTRY + "    attention: {forward: 0.6, backward: 0.5, "
        + "narrowForward: 0.95, narrowBackward: 0.3}\n"))
        .isInstanceOf(io.meshplan.util.InputException.class)
        .hasMessageContaining("which would pass the dense peak");
    // Without the field, the architecture's (Hopper's) fractions.
    assertThat(withFile(ENTRY).gpu("x9-48gb").orElseThrow().spec().fusedAttention())
        .isEqualTo(FusedAttentionKernels.HOPPER);
  }

  /**
   * A GPU measured apart from its architecture states its own large 16-bit GEMM fraction; the
   * shipped MI325X does (784.9 of 1,307.4 TFLOP/s, 0.600), the MI300X keeps CDNA 3's 0.51.
   */
  @Test
  void aGpuMayStateItsOwn16BitGemmFraction() throws Exception {
    HardwareCatalog c = withFile(ENTRY + "    gemm16: 0.7\n");
    GpuSpec x = c.gpu("x9-48gb").orElseThrow().spec();
    assertThat(KernelTimeModel.of(x, 2).gemmEfficiency()).isEqualTo(0.7);
    // FP32 keeps the architecture's figure.
    assertThat(KernelTimeModel.of(x, 4).gemmEfficiency()).isEqualTo(0.8);
    assertThat(KernelTimeModel.of(withFile(ENTRY).gpu("x9-48gb").orElseThrow().spec(), 2)
        .gemmEfficiency()).isEqualTo(0.8);
    assertThat(KernelTimeModel.of(GpuCatalog.find("mi325x").orElseThrow(), 2).gemmEfficiency())
        .isEqualTo(0.600);
    assertThat(KernelTimeModel.of(GpuCatalog.find("mi300x").orElseThrow(), 2).gemmEfficiency())
        .isEqualTo(0.51);
  }

  @Test
  void anUnknownArchitectureIsRefusedInOneLine() throws Exception {
    assertThatThrownBy(() -> withFile(ENTRY.replace("hopper", "turing")))
        .isInstanceOf(InputException.class)
        .hasMessageEndingWith("catalog.yaml: gpus[0] 'x9-48gb': unknown architecture 'turing':"
            + " meshplan has kernel efficiencies for volta, ampere, hopper, blackwell, cdna3 only"
            + " (and reads cdna4 without pricing it), and does not guess them for another")
        .hasMessageNotContaining("\n");
  }

  /** Each hostile or broken file is refused with one line that names the file. */
  @Test
  void hostileFilesAreRefusedInOneLine() {
    String deep = "gpus:\n" + "  ".repeat(1) + "- " + "[".repeat(150) + "]".repeat(150) + "\n";
    List<String[]> cases = List.of(
        new String[] {"x: &a {}\ngpus: *a\n", "YAML anchor"},
        new String[] {ENTRY + "    memoryGiB: 48\n", "key 'memoryGiB' is given twice"},
        new String[] {ENTRY.replace("memoryGiB: 48", "memoryGiB: -48"), "'memoryGiB' must be"},
        new String[] {ENTRY.replace("hbmGBps: 2000", "hbmGBps: .nan"), ".nan"},
        new String[] {ENTRY.replace("hbmGBps: 2000", "hbmGBps: 1e400"), "'hbmGBps' must be"},
        new String[] {ENTRY.replace("fp32: 50", "fp32: 5e9"), "'fp32' must be"},
        new String[] {ENTRY.replace("nvlinkDomain: 4", "nvlinkDomain: 2.5"), "'nvlinkDomain'"},
        new String[] {ENTRY.replace("memoryGiB: 48", "memoryGiB: '48'"), "'memoryGiB' must be"},
        new String[] {ENTRY.replace("hopper", "!!str hopper"), "YAML tag"},
        new String[] {ENTRY.replace("fp8: 1600", "fp4: 3200"), "unknown precision 'fp4'"},
        new String[] {ENTRY.replace("hopper", "ampere"), "ampere has no fp8 math"},
        new String[] {ENTRY.replace("fp32: 50, ", ""), "needs an fp32 peak"},
        new String[] {ENTRY.replace("roce-200", "ib-zdr1600"), "defaultFabric 'ib-zdr1600'"},
        new String[] {ENTRY.replace("    source: a made-up part for a test\n", ""), "'source'"},
        new String[] {ENTRY + "    tdp: 500\n", "unknown field 'tdp'"},
        new String[] {ENTRY + ENTRY.substring("gpus:\n".length()), "gpu x9-48gb is given twice"},
        new String[] {ENTRY.replace("x9-48gb", "X9 48"), "name 'X9 48' must be"},
        new String[] {ENTRY + "    aliases: [b200]\n", "the name of another catalog gpu"},
        new String[] {deep, "catalog.yaml: "},
        new String[] {"- 1\n", "expected a YAML mapping"},
        new String[] {"gpus: 3\n", "'gpus' must be a list"},
        new String[] {ENTRY + "    attention: {forward: 1.2, backward: 0.5}\n",
            "attention: 'forward' must be a number from 0.01 to 1 of the peak"},
        new String[] {ENTRY + "    attention: {forward: 0.7}\n", "attention: 'backward' must"},
        new String[] {ENTRY + "    attention: {forward: 0.7, backward: 0.5, fwd: 1}\n",
            "unknown field 'fwd'"},
        new String[] {ENTRY + "    attention: 0.7\n", "attention must be a mapping"},
        new String[] {ENTRY.replace("hopper", "volta").replace("bf16: 800, fp8: 1600",
            "fp16: 125") + "    attention: {forward: 0.7, backward: 0.5}\n",
            "volta has no priced fused attention kernel"},
        new String[] {ENTRY + "    gemm16: 1.2\n",
            "'gemm16' must be a number from 0.01 to 1 of the peak"},
        new String[] {ENTRY + "    gemm16: 0\n", "'gemm16' must be a number from 0.01 to 1"},
        new String[] {ENTRY + "    gemm16: .nan\n", ".nan"},
        new String[] {ENTRY + "    gemm16: '0.6'\n", "'gemm16' must be"},
        new String[] {ENTRY.replace("hopper", "cdna4").replace(", fp8: 1600", "")
            .replace("nvlinkDomain: 4", "nvlinkDomain: 8") + "    gemm16: 0.6\n",
            "cdna4 has no priced 16-bit GEMM to state the fraction of; leave 'gemm16' out"});
    for (String[] c : cases) {
      assertThatThrownBy(() -> withFile(c[0])).as(c[0]).isInstanceOf(InputException.class)
          .hasMessageContaining("catalog.yaml").hasMessageContaining(c[1]);
    }
  }

  /**
   * Seeded: every numeric field of an entry set to a random hostile value (negative, zero, NaN,
   * infinite, huge, text, a list) is refused with an InputException, never another exception.
   */
  @Test
  void randomHostileNumbersAreRefusedAsInput() {
    String[] fields = {"memoryGiB: 48", "hbmGBps: 2000", "nvlinkDomain: 4",
        "nvlinkGBpsPerDirection: 200", "fp32: 50", "bf16: 800"};
    String[] bad = {"-1", "0", ".nan", ".inf", "-.inf", "1e300", "9999999999999999999999",
        "'12'", "[1, 2]", "{a: 1}", "null", "true", "0x10", "1_000_000_000"};
    Random r = new Random(37);
    for (int i = 0; i < 200; i++) {
      String f = fields[r.nextInt(fields.length)];
      String v = bad[r.nextInt(bad.length)];
      String text = ENTRY.replace(f, f.substring(0, f.indexOf(':') + 2) + v);
      try {
        HardwareCatalog c = withFile(text);
        // A value that reads as a valid number (YAML 1.1's 0x10, 1_000_000_000) must land in
        // range; nothing else may pass.
        GpuSpec g = c.gpu("x9-48gb").orElseThrow().spec();
        assertThat(g.hbmBandwidth()).as(text).isPositive().isFinite();
      } catch (InputException e) {
        assertThat(e.getMessage()).as(text).contains("catalog.yaml").doesNotContain("\n");
      } catch (Exception e) {
        throw new AssertionError(text, e);
      }
    }
  }
}
