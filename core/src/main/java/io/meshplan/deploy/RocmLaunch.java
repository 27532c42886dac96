package io.meshplan.deploy;

import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a launch on AMD Instinct GPUs (ROCm, RCCL) needs beyond an NVIDIA one. The rest holds as
 * written for NVIDIA, each checked against the AMD sources named here:
 *
 * <ul>
 *   <li>The GPUs are the extended resource {@value #GPU_RESOURCE} of AMD's device plugin
 *       (ROCm/k8s-device-plugin at ed7646843003e8f0b6a0630346f01bb4d1ecff2e, {@code
 *       docs/index.md} and {@code example/pod/pytorch-non-privileged.yaml}). The plugin's {@code
 *       Allocate} ({@code internal/pkg/plugin/plugin.go}) hands each container {@code /dev/kfd}
 *       and the allocated GPUs' {@code /dev/dri/card*} and {@code renderD*} nodes, so a pod needs
 *       no hostPath device, no privileged mode and no {@code video}/{@code render} group: the
 *       plugin's own unprivileged example runs with none.
 *   <li>RCCL reads the fabric variables meshplan writes under NCCL's names (ROCm/rccl at
 *       0cbce2a7571c907554199fad7e905f16ec0a565c): {@code NCCL_IB_HCA} with the same {@code =}
 *       exact-match and {@code ^} exclusion forms ({@code src/transport/net_ib.cc}, init), {@code
 *       NCCL_IB_GID_INDEX} (default -1, RCCL picks a GID itself) and {@code
 *       NCCL_IB_ROCE_VERSION_NUM} (default 2) in the same file, {@code NCCL_SOCKET_IFNAME} ({@code
 *       src/misc/socket.cc}), {@code NCCL_IB_DISABLE}. So {@code doctor}'s advice, which picks a
 *       RoCE v2 GID and writes it to {@code NCCL_IB_GID_INDEX}, holds for RCCL unchanged; on an
 *       AMD node its {@code UCX_TLS} names ROCm's transports ({@link
 *       io.meshplan.doctor.GpuVendor}).
 *   <li>It differs in one variable a launch must set: RCCL warns at every init that a missing
 *       {@code HSA_FORCE_FINE_GRAIN_PCIE=1} "can lead to low RCCL performance, system instability
 *       or hang" ({@code src/init.cc}, {@code ncclInit}; {@code docs/install/installation.rst}:
 *       it enables peer-to-peer access over PCIe), so every AMD launch sets it ({@link #env}).
 *       RCCL's own {@code RCCL_MSCCL_ENABLE} defaults to on ({@code
 *       src/misc/msccl/msccl_lifecycle.cc}) and is left alone; NVLink SHARP ({@code
 *       NCCL_NVLS_ENABLE}) and CollNet have no hardware on Instinct nodes, and meshplan sets
 *       neither.
 * </ul>
 */
public final class RocmLaunch {
  /** The resource name of AMD's GPU device plugin. */
  public static final String GPU_RESOURCE = "amd.com/gpu";
  /** RCCL's fine-grained PCIe memory switch, read by the HSA runtime. */
  public static final String FINE_GRAIN_PCIE = "HSA_FORCE_FINE_GRAIN_PCIE";

  private RocmLaunch() {}

  /**
   * The variables every process of an AMD launch gets.
   *
   * @return {@code HSA_FORCE_FINE_GRAIN_PCIE=1}
   */
  public static SortedMap<String, String> env() {
    TreeMap<String, String> m = new TreeMap<>();
    m.put(FINE_GRAIN_PCIE, "1");
    return m;
  }
}
