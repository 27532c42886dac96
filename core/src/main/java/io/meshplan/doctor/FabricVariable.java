package io.meshplan.doctor;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The environment variables {@link EnvAdvisor} writes, each with the form of the values it can
 * write: the one list of what a {@code meshplan doctor} report may carry into a launch. A reader
 * of a report ({@code deploy}'s) refuses any other name, and any value of a form the doctor would
 * not write, so a report cannot carry, say, {@code LD_PRELOAD} into every launch file.
 *
 * <p>Four of them name things of the node the doctor ran on (a device, an interface, an index in
 * its GID table): {@link #hostSpecific()}. They hold in a process that shares that node's network
 * and RDMA namespaces, and nowhere else.
 */
public enum FabricVariable {
  /** The RDMA ports NCCL may use, exact-match form {@code =dev:port[,dev:port...]}. */
  NCCL_IB_HCA(true, "=DEVICE:PORT[,DEVICE:PORT...]"),
  /** The RoCE GID index, a decimal index into the port's GID table. */
  NCCL_IB_GID_INDEX(true, "a GID index such as 3"),
  /** The interface of NCCL's bootstrap and socket transport. */
  NCCL_SOCKET_IFNAME(true, "one interface name such as ib0"),
  /** UCX's devices: the RDMA ports {@code dev:port[,...]}, or one interface without RDMA. */
  UCX_NET_DEVICES(true, "DEVICE:PORT[,DEVICE:PORT...] or one interface name"),
  /** {@code 1}: no active RDMA port, so NCCL uses sockets. */
  NCCL_IB_DISABLE(false, "1"),
  /**
   * UCX's transports: {@code rc} or {@code tcp}, then the GPUs' ({@link GpuVendor}), as {@link
   * EnvAdvisor#ucxTls} writes them.
   */
  UCX_TLS(false, "rc or tcp, then cuda_copy,cuda_ipc or rocm_copy,rocm_ipc (e.g. "
      + EnvAdvisor.UCX_TLS_RDMA + ")");

  private static final Pattern GID_INDEX = Pattern.compile("0|[1-9][0-9]{0,7}");

  private final boolean hostSpecific;
  private final String form;

  FabricVariable(boolean hostSpecific, String form) {
    this.hostSpecific = hostSpecific;
    this.form = form;
  }

  /**
   * Whether the value names a device, an interface or a GID-table entry of the node it was read
   * on, so that it holds only in that node's network and RDMA namespaces.
   *
   * @return true for {@code NCCL_IB_HCA}, {@code NCCL_IB_GID_INDEX}, {@code NCCL_SOCKET_IFNAME},
   *     {@code UCX_NET_DEVICES}
   */
  public boolean hostSpecific() {
    return hostSpecific;
  }

  /**
   * The form of the values the doctor writes, for messages.
   *
   * @return for example {@code one interface name such as ib0}
   */
  public String form() {
    return form;
  }

  /**
   * Whether the doctor could write this value for this variable.
   *
   * @param value the value
   * @return true when it has the variable's form (names as {@link SysfsNames} accepts them)
   */
  public boolean accepts(String value) {
    if (value == null) {
      return false;
    }
    return switch (this) {
      case NCCL_IB_HCA -> value.startsWith("=") && portList(value.substring(1));
      case NCCL_IB_GID_INDEX -> GID_INDEX.matcher(value).matches();
      case NCCL_SOCKET_IFNAME -> SysfsNames.netInterface(value);
      case UCX_NET_DEVICES -> portList(value) || SysfsNames.netInterface(value);
      case NCCL_IB_DISABLE -> value.equals("1");
      case UCX_TLS -> ucxGpus(value).isPresent();
    };
  }

  /**
   * The GPUs' maker a {@code UCX_TLS} value of the doctor's names through its GPU transports.
   *
   * @param tls the value
   * @return the maker, or empty for a value the doctor does not write
   */
  public static Optional<GpuVendor> ucxGpus(String tls) {
    return Arrays.stream(GpuVendor.values()).filter(g -> tls != null
        && (tls.equals(EnvAdvisor.ucxTls(true, g)) || tls.equals(EnvAdvisor.ucxTls(false, g))))
        .findFirst();
  }

  /**
   * The variable of a name.
   *
   * @param name an environment variable name
   * @return the variable, or empty when the doctor never writes that name
   */
  public static Optional<FabricVariable> named(String name) {
    return Arrays.stream(values()).filter(v -> v.name().equals(name)).findFirst();
  }

  /**
   * The names, sorted, for messages.
   *
   * @return for example {@code NCCL_IB_DISABLE, NCCL_IB_GID_INDEX, ...}
   */
  public static String names() {
    return Arrays.stream(values()).map(Enum::name).sorted().collect(Collectors.joining(", "));
  }

  /**
   * What in a whole environment the doctor would not have written together with these ports: its
   * port lists are exactly the selected ports, a GID index goes with RoCE ports only, and the
   * socket fallback ({@code NCCL_IB_DISABLE}, TCP transports) with no port at all.
   *
   * @param env the variables (each already of its form)
   * @param ports the selected ports as {@code dev:port}, in order
   * @param roce whether those ports are RoCE
   * @return the first inconsistency, in words, or empty
   */
  public static Optional<String> inconsistency(
      Map<String, String> env, List<String> ports, boolean roce) {
    String ids = String.join(",", ports);
    String hca = env.get(NCCL_IB_HCA.name());
    String ucx = env.get(UCX_NET_DEVICES.name());
    String tls = env.get(UCX_TLS.name());
    if (ports.isEmpty()) {
      if (hca != null) {
        return Optional.of("NCCL_IB_HCA is set but no port is selected");
      }
      if (ucx != null && !SysfsNames.netInterface(ucx)) {
        return Optional.of("UCX_NET_DEVICES lists RDMA ports but no port is selected");
      }
      if (tls != null && !tls.startsWith("tcp,")) {
        return Optional.of("UCX_TLS is " + tls + " but no RDMA port is selected");
      }
    } else {
      if (hca != null && !hca.equals("=" + ids)) {
        return Optional.of("NCCL_IB_HCA is " + hca + " but the selected ports are " + ids);
      }
      if (ucx != null && !ucx.equals(ids)) {
        return Optional.of("UCX_NET_DEVICES is " + ucx + " but the selected ports are " + ids);
      }
      if (env.containsKey(NCCL_IB_DISABLE.name())) {
        return Optional.of("NCCL_IB_DISABLE is set although ports are selected");
      }
      if (tls != null && !tls.startsWith("rc,")) {
        return Optional.of("UCX_TLS is " + tls + " although RDMA ports are selected");
      }
    }
    if (env.containsKey(NCCL_IB_GID_INDEX.name()) && !roce) {
      return Optional.of("NCCL_IB_GID_INDEX is set but no selected port is RoCE");
    }
    return Optional.empty();
  }

  private static boolean portList(String text) {
    return !text.isEmpty() && Arrays.stream(text.split(",", -1)).allMatch(SysfsNames::port);
  }
}
