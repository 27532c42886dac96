package io.meshplan.doctor;

import java.util.Arrays;
import java.util.Optional;

/**
 * The maker of a node's GPUs, as the PCI bus names it, and the UCX transports that move that
 * maker's device memory. UCX names them apart: {@code cuda} stands for {@code cuda_copy}, {@code
 * cuda_ipc} and {@code gdr_copy}, {@code rocm} for {@code rocm_copy}, {@code rocm_ipc} and {@code
 * rocm_gdr} (openucx/ucx {@code src/ucp/core/ucp_context.c} at
 * 002e7f80ad3238251473f7073262e05e270d1a2f, {@code ucp_tl_aliases}); a {@code UCX_TLS} that lists
 * only the CUDA ones leaves UCX without a transport for an AMD GPU's memory.
 */
public enum GpuVendor {
  /** NVIDIA (PCI vendor 0x10de): CUDA. */
  NVIDIA(0x10de, "cuda_copy,cuda_ipc"),
  /** AMD (PCI vendor 0x1002, the ATI/AMD graphics id; AMD's CPUs are 0x1022): ROCm. */
  AMD(0x1002, "rocm_copy,rocm_ipc");

  private final int pciVendor;
  private final String ucxTransports;

  GpuVendor(int pciVendor, String ucxTransports) {
    this.pciVendor = pciVendor;
    this.ucxTransports = ucxTransports;
  }

  /**
   * The UCX transports of this maker's device memory: copies and peer access between GPUs of a
   * node.
   *
   * @return {@code cuda_copy,cuda_ipc} or {@code rocm_copy,rocm_ipc}
   */
  public String ucxTransports() {
    return ucxTransports;
  }

  /**
   * The maker of a PCI vendor id.
   *
   * @param pciVendor the id, as in {@code /sys/bus/pci/devices/<address>/vendor}
   * @return the maker, or empty for any other vendor
   */
  public static Optional<GpuVendor> ofPci(int pciVendor) {
    return Arrays.stream(values()).filter(v -> v.pciVendor == pciVendor).findFirst();
  }

  /**
   * Whether a PCI class code ({@code /sys/bus/pci/devices/<address>/class}, 24 bits: base class,
   * subclass, interface) is a GPU's: a VGA (0x0300), 3D (0x0302) or other display controller
   * (0x0380: AMD's Instinct MI200), or a processing accelerator (0x1200: AMD's Instinct MI300;
   * PCI Code and ID Assignment Specification, base classes 03h and 12h).
   *
   * @param pciClass the class code
   * @return true for those four
   */
  public static boolean gpuClass(int pciClass) {
    int top = pciClass >>> 8;
    return top == 0x0300 || top == 0x0302 || top == 0x0380 || top == 0x1200;
  }
}
