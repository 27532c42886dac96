package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.Optional;
import java.util.Random;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** AMD Instinct: the catalog's MI300X, MI325X and MI355X, CDNA 3 prices and the refusals. */
class AmdInstinctTest {
  private static GpuSpec gpu(String name) {
    return GpuCatalog.find(name).orElseThrow();
  }

  @Test
  void theCatalogHoldsTheDatasheetFigures() {
    GpuSpec m = gpu("mi300x");
    assertThat(m.architecture()).isEqualTo(Architecture.CDNA3);
    assertThat(m.peak(Precision.FP32)).contains(163.4e12);
    assertThat(m.peak(Precision.TF32)).contains(653.7e12);
    assertThat(m.peak(Precision.BF16)).contains(1307.4e12);
    assertThat(m.peak(Precision.FP8)).contains(2614.9e12);
    assertThat(m.hbmBytes()).isEqualTo(192L << 30);
    assertThat(m.hbmBandwidth()).isEqualTo(5.3e12);
    // 7 Infinity Fabric links of 128 GB/s bidirectional: 64 GB/s per direction, 448 together.
    assertThat(m.nvlinkBandwidth()).isEqualTo(448e9);
    assertThat(m.meshLinkBandwidth()).isEqualTo(64e9);
    GpuSpec x = gpu("mi325x");
    assertThat(x.peakFlops()).isEqualTo(m.peakFlops());
    assertThat(x.hbmBytes()).isEqualTo(256L << 30);
    assertThat(x.hbmBandwidth()).isEqualTo(6e12);
    GpuSpec y = gpu("mi355x");
    assertThat(y.architecture()).isEqualTo(Architecture.CDNA4);
    assertThat(y.peak(Precision.BF16)).contains(2516.6e12);
    assertThat(y.peak(Precision.TF32)).isEmpty();
    assertThat(y.hbmBytes()).isEqualTo(288L << 30);
    assertThat(y.meshLinkBandwidth()).isEqualTo(76.8e9);
    for (String n : new String[] {"mi300x", "mi325x", "mi355x"}) {
      GpuEntry e = HardwareCatalog.shipped().gpu(n).orElseThrow();
      assertThat(e.defaultFabric()).isEqualTo("roce-400");
      assertThat(e.hostGpus()).isEqualTo(8);
    }
    assertThat(HardwareCatalog.shipped().gpu("mi300x").orElseThrow().powerWatts().getAsDouble())
        .isEqualTo(750);
    assertThat(HardwareCatalog.shipped().gpu("mi355x").orElseThrow().powerWatts().getAsDouble())
        .isEqualTo(1400);
  }

  @Test
  void cdna3Prices16BitGemmsAtTheMeasuredFraction() {
    KernelTimeModel k = KernelTimeModel.of(gpu("mi300x"), 2);
    // MAMF table: 668.4 of 1,307.4 TFLOP/s, 0.511.
    assertThat(k.gemmEfficiency()).isEqualTo(0.51);
    assertThat(k.peakFlops()).isEqualTo(1307.4e12);
    // 1e15 FLOPs: (1e15 + 1307.4e12 * 5e-6) / (1307.4e12 * 0.51) = 1.5097 s.
    assertThat(k.dotCost(1e15, 0)).isCloseTo((1e15 + 1307.4e12 * 5e-6) / (1307.4e12 * 0.51),
        Offset.offset(1e-12));
    // FlashAttention-2 at the H100's FlashAttention-2 TFLOP/s (Zyphra's MI300X comparison):
    // 0.35 x 989.5 / 1,307.4 = 0.26490 forward, 0.30 x 989.5 / 1,307.4 = 0.22705 backward, at
    // every head dimension; 1 TFLOP forward takes 1e12 / (1,307.4e12 x 0.26490) = 2.8874e-3 s,
    // the H100's FlashAttention-2 time 1e12 / (989.5e12 x 0.35).
    FusedAttentionKernels fa = k.attention().orElseThrow();
    assertThat(fa.efficiency(false, 128)).isCloseTo(0.26490, Offset.offset(1e-5));
    assertThat(fa.efficiency(true, 128)).isCloseTo(0.22705, Offset.offset(1e-5));
    assertThat(fa.efficiency(true, 64)).isEqualTo(fa.efficiency(true, 128));
    assertThat(k.attentionCost(1e12, 0, false, 128)).isCloseTo(1e12 / (989.5e12 * 0.35),
        Offset.offset(1e-12)).isCloseTo(2.8874e-3, Offset.offset(1e-7));
    assertThat(AttentionKernel.defaultFor(Architecture.CDNA3)).contains(AttentionKernel.FLASH2);
    assertThat(KernelTimeModel.of(gpu("mi325x"), Precision.BF16,
        Optional.of(AttentionKernel.TRITON)).attention()).contains(fa);
    assertThat(Architecture.CDNA3.computeCapabilityMajor()).isEqualTo(9);
    assertThat(Architecture.CDNA4.computeCapabilityMajor()).isEqualTo(9);
    assertThat(Architecture.CDNA3.vendor()).isEqualTo(Architecture.Vendor.AMD);
  }

  /**
   * CDNA 3's FP8 GEMMs. The kernel alone: hipBLASLt's 1,159.23 of the MI300X's 2,614.9 TFLOP/s,
   * 0.44332. In training under delayed scaling: the kernels' FP8 over 16-bit ratio, 1,159.23 /
   * 668.4 = 1.73434, times the share of the H200 NVL's kernel-alone speed-up its delayed
   * autocast keeps, (32.014 / 18.978) / (31.968 / 16.785) = 1.68690 / 1.90456 = 0.88572: 1.53613x
   * the 16-bit GEMM; as a fraction of the FP8 peak, 0.51 x 1,307.4 x 1.53613 / 2,614.9 = 0.39170
   * (the 16-bit rate 666.774 TFLOP/s, 1,024.25 in FP8). Current scaling keeps (32.014 / 20.285) /
   * 1.90456 = 0.82865: 1.43716x, 0.36646. The MI325X's own 16-bit GEMM, 0.600 of its peak:
   * 0.600 x 1,307.4 x 1.53613 / 2,614.9 = 0.46083 under delayed scaling, above the kernel alone
   * as measured (0.44332, the MI300X's hipBLASLt; no MI325X FP8 GEMM is published), which bounds
   * it; 0.600 x 1,307.4 x 1.43716 / 2,614.9 = 0.43113 under current scaling.
   */
  @Test
  void cdna3PricesFp8GemmsFromHipBlasLtAndTheCastsShare() {
    assertThat(Fp8Gemms.CDNA3_EFFICIENCY).isCloseTo(0.44332, Offset.offset(1e-5));
    assertThat(Architecture.CDNA3.hasFp8Gemms()).isTrue();
    assertThat(Architecture.CDNA3.prices(Precision.FP8)).isTrue();
    assertThat(Architecture.CDNA3.gemmEfficiency(Precision.FP8))
        .isEqualTo(Fp8Gemms.CDNA3_EFFICIENCY);
    assertThat(Architecture.CDNA4.hasFp8Gemms()).isFalse();
    assertThat(Fp8Quantization.DELAYED.speedupOver16Bit(Architecture.CDNA3))
        .isCloseTo(1.53613, Offset.offset(1e-5));
    assertThat(Fp8Quantization.CURRENT.speedupOver16Bit(Architecture.CDNA3))
        .isCloseTo(1.43716, Offset.offset(1e-5));
    Fp8Gemms d = Fp8Gemms.of(gpu("mi300x")).orElseThrow();
    assertThat(d.peakFlops()).isEqualTo(2614.9e12);
    assertThat(d.efficiency()).isCloseTo(0.39170, Offset.offset(1e-5));
    assertThat(d.efficiency() * d.peakFlops()).isCloseTo(1024.25e12, Offset.offset(0.01e12));
    assertThat(Fp8Gemms.of(gpu("mi300x"), Fp8Quantization.CURRENT).orElseThrow().efficiency())
        .isCloseTo(0.36646, Offset.offset(1e-5));
    Fp8Gemms x = Fp8Gemms.of(gpu("mi325x")).orElseThrow();
    assertThat(x.peakFlops()).isEqualTo(2614.9e12);
    assertThat(x.efficiency()).isEqualTo(Fp8Gemms.CDNA3_EFFICIENCY);
    assertThat(Fp8Gemms.of(gpu("mi325x"), Fp8Quantization.CURRENT).orElseThrow().efficiency())
        .isCloseTo(0.43113, Offset.offset(1e-5));
    // Hopper is unchanged: 0.80 x 1.68690 / 2 = 0.67476 of its FP8 peak, under the 0.75 kernel.
    assertThat(Fp8Gemms.of(gpu("h100-80gb")).orElseThrow().efficiency())
        .isCloseTo(0.67476, Offset.offset(1e-5));
  }

  @Test
  void whatHasNoPublishedFigureIsRefusedInOneLine() {
    assertThatThrownBy(() -> KernelTimeModel.of(gpu("mi300x"), 4))
        .isInstanceOf(InputException.class)
        .hasMessage("meshplan has no published f32 GEMM benchmark on cdna3 to price f32 matrix "
            + "products with; train in bf16");
    assertThatThrownBy(() -> KernelTimeModel.of(gpu("mi355x"), 2))
        .isInstanceOf(InputException.class)
        .hasMessage("the mi355x (cdna4) cannot be priced: meshplan has no published cdna4 GEMM,"
            + " fused-attention and FP8 kernel benchmark to take its kernel efficiencies from,"
            + " and does not guess them");
    assertThatThrownBy(() -> Fp8Gemms.require(gpu("mi355x"))).isInstanceOf(InputException.class)
        .hasMessage("fp8 training is not priced on the mi355x (cdna4): it has FP8 math, but "
            + "meshplan has no published FP8 GEMM benchmark there to price it with; use bf16, or "
            + "a GPU that has them: b200, b300, gb200, gb300, h100-80gb, h100-96gb-hbm2e, "
            + "h100-nvl, h200-141gb, mi300x, mi325x");
    // MXFP8 and NVFP4 are Blackwell's; CDNA 3 has no measurement of them.
    assertThatThrownBy(() -> Fp8Gemms.of(gpu("mi300x"), Fp8Quantization.MX_BLOCK))
        .isInstanceOf(InputException.class)
        .hasMessage("GEMMs with mxfp8 scaling are not priced on cdna3 GPUs: no measurement of "
            + "them there");
    // cuDNN and FlashAttention-3 are NVIDIA's: refused on CDNA 3 in one line.
    assertThatThrownBy(() -> KernelTimeModel.of(gpu("mi300x"), Precision.BF16,
        Optional.of(AttentionKernel.CUDNN))).isInstanceOf(InputException.class)
        .hasMessage("mi300x: meshplan has no published cudnn attention benchmark on cdna3 to "
            + "price it with; use flash2, triton or unfused");
    assertThatThrownBy(() -> KernelTimeModel.of(gpu("mi300x"), Precision.BF16,
        Optional.of(AttentionKernel.FLASH3))).isInstanceOf(InputException.class)
        .hasMessageNotContaining("\n");
    assertThat(AttentionKernel.defaultFor(Architecture.CDNA4)).isEmpty();
    assertThat(Architecture.CDNA4.priced()).isFalse();
    assertThat(Architecture.CDNA3.prices(Precision.BF16)).isTrue();
    assertThat(Architecture.CDNA3.prices(Precision.FP32)).isFalse();
    assertThat(Architecture.HOPPER.prices(Precision.FP32)).isTrue();
  }

  @Test
  void aMeshGivesAGroupOnlyItsOwnLinks() {
    GpuSpec m = gpu("mi300x");
    // One link per peer: 2 GPUs 64 GB/s, 4 GPUs 3 x 64, 8 GPUs 7 x 64 = 448.
    assertThat(m.intraNodeBandwidth(2)).isEqualTo(64e9);
    assertThat(m.intraNodeBandwidth(4)).isEqualTo(192e9);
    assertThat(m.intraNodeBandwidth(8)).isEqualTo(448e9);
    assertThat(m.intraNodeBandwidth(1)).isEqualTo(64e9);
    // Behind NVSwitch every group has the GPU's whole NVLink.
    assertThat(gpu("h100-80gb").intraNodeBandwidth(2)).isEqualTo(450e9);
    // An all-reduce of 1 GB over a tensor-parallel pair inside an MI300X node:
    // 3 us + 2(2-1)/2 * 1e9 / 64e9 = 15.628 ms.
    ClusterSpec c = ClusterSpec.parse("1x8:mi300x");
    CatalogCommModel pair = new CatalogCommModel(c, new LogicalMesh(new int[] {4, 2}));
    assertThat(pair.cost(Collective.ALL_REDUCE, 1e9, 1)).isCloseTo(3e-6 + 1e9 / 64e9,
        Offset.offset(1e-12));
    // Over all 8: 3 us + 2 * 7/8 * 1e9 / 448e9.
    CatalogCommModel all = new CatalogCommModel(c, new LogicalMesh(new int[] {1, 8}));
    assertThat(all.cost(Collective.ALL_REDUCE, 1e9, 1)).isCloseTo(3e-6 + 1.75e9 / 448e9,
        Offset.offset(1e-12));
    // A cluster file's NVLink override scales each link: 224 GB/s total, 32 per link.
    assertThat(m.withNvlinkBandwidth(224e9).intraNodeBandwidth(2)).isEqualTo(32e9);
  }

  /** Seeded: any NVLink domain named on an AMD GPU is refused in one line. */
  @Test
  void nvlinkDomainsOnAmdGpusAreRefused() {
    Random rnd = new Random(39);
    String[] gpus = {"mi300x", "mi325x", "mi355x"};
    for (int i = 0; i < 40; i++) {
      String g = gpus[rnd.nextInt(gpus.length)];
      String text = (1 + rnd.nextInt(16)) + "xnvl" + (1 + rnd.nextInt(144)) + ":" + g;
      assertThatThrownBy(() -> ClusterSpec.parse(text)).as(text)
          .isInstanceOf(InputException.class)
          .hasMessage("cluster '" + text + "': the " + g + " has no NVLink: AMD Infinity Fabric "
              + "joins the 8 GPUs of one host and no more; give NODESx8:" + g);
    }
    assertThat(ClusterSpec.parse("2x8:mi300x").gpusPerNode()).isEqualTo(8);
    assertThat(ClusterSpec.parse("2x4:mi300x").gpusPerNode()).isEqualTo(4);
    // Nodes larger than the Infinity Fabric mesh would price 16 GPUs as one fabric.
    assertThatThrownBy(() -> ClusterSpec.parse("1x16:mi325x")).isInstanceOf(InputException.class)
        .hasMessage("cluster '1x16:mi325x': a node of 16 mi325x GPUs is more than the 8 that AMD"
            + " Infinity Fabric joins; give NODESx8:mi325x");
  }

  @Test
  void aCatalogCannotGiveAnAmdGpuAnNvlinkDomainBeyondItsHost() {
    String entry = "gpus:\n  - name: mi-test\n    architecture: cdna3\n"
        + "    peakTflops: {fp32: 163.4, bf16: 1307.4}\n    memoryGiB: 192\n"
        + "    hbmGBps: 5300\n    nvlinkDomain: 72\n    hostGpus: 8\n"
        + "    nvlinkGBpsPerDirection: 448\n    defaultFabric: roce-400\n    source: a test\n";
    assertThatThrownBy(() -> CatalogReader.read(entry, "c.yaml"))
        .isInstanceOf(InputException.class)
        .hasMessage("c.yaml: gpus[0] 'mi-test': cdna3 GPUs have no NVLink: Infinity Fabric "
            + "joins the GPUs of one host only, so hostGpus 8 must equal nvlinkDomain 72");
    String thin = entry.replace("nvlinkDomain: 72\n    hostGpus: 8\n", "nvlinkDomain: 8\n")
        .replace("defaultFabric", "meshLinkGBpsPerDirection: 32\n    defaultFabric");
    // 7 links of 32 GB/s are 224 GB/s, less than the 448 stated.
    assertThatThrownBy(() -> CatalogReader.read(thin, "c.yaml"))
        .isInstanceOf(InputException.class)
        .hasMessage("c.yaml: gpus[0] 'mi-test': a mesh of 8 GPUs gives each GPU at most 7 links"
            + " of meshLinkGBpsPerDirection, less than its nvlinkGBpsPerDirection");
    String ok = thin.replace("meshLinkGBpsPerDirection: 32", "meshLinkGBpsPerDirection: 64");
    assertThat(CatalogReader.read(ok, "c.yaml").gpus().get(0).spec().intraNodeBandwidth(3))
        .isEqualTo(128e9);
  }
}
