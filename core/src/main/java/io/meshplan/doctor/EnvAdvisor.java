package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Turns a {@link SysfsSnapshot} into a {@link DoctorReport}: a GID index per RoCE port, the NCCL and
 * UCX environment, and warnings. Pure: no files, no printing.
 *
 * <p>Rules (documented because scripts depend on them):
 *
 * <ul>
 *   <li>Ports used: the ACTIVE ports of the fastest rate class (equal rate in Gb/s). If that class
 *       mixes link layers, InfiniBand ports win over Ethernet ones.
 *   <li>{@code NCCL_IB_HCA} uses the exact-match form {@code =dev:port[,dev:port...]}; {@code
 *       UCX_NET_DEVICES} lists the same ports as {@code dev:port[,...]}.
 *   <li>{@code NCCL_IB_GID_INDEX} is set only for RoCE ports, from {@link GidSelector}; if the used
 *       ports disagree, the first port's index wins and a warning names the others.
 *   <li>{@code NCCL_SOCKET_IFNAME} is the netdev behind the first used port that is up (the GID's
 *       {@code ndevs} entry, else the interface whose {@code device/infiniband} names the device).
 *       Without RDMA it is the first up interface that is not loopback, docker, veth or a bridge.
 *   <li>Without an active RDMA port: {@code NCCL_IB_DISABLE=1} and TCP transports for UCX.
 *   <li>UCX's GPU transports are those of the node's GPUs ({@link GpuVendor}): ROCm's when every
 *       GPU on the PCI bus is AMD's, CUDA's otherwise (also when none is seen, as in a container
 *       without {@code /sys/bus/pci}); GPUs of both makers get CUDA's and a warning.
 * </ul>
 */
public final class EnvAdvisor {
  /** UCX transports when RDMA ports are active, on NVIDIA GPUs: rc,cuda_copy,cuda_ipc. */
  public static final String UCX_TLS_RDMA = ucxTls(true, GpuVendor.NVIDIA);
  /** UCX transports without RDMA, on NVIDIA GPUs: tcp,cuda_copy,cuda_ipc. */
  public static final String UCX_TLS_TCP = ucxTls(false, GpuVendor.NVIDIA);

  /**
   * The UCX transports the doctor writes: the network's ({@code rc} over RDMA ports, else {@code
   * tcp}) and the GPUs' ({@link GpuVendor#ucxTransports}).
   *
   * @param rdma whether RDMA ports are selected
   * @param gpus the GPUs' maker
   * @return for example {@code rc,rocm_copy,rocm_ipc}
   */
  public static String ucxTls(boolean rdma, GpuVendor gpus) {
    return (rdma ? "rc," : "tcp,") + gpus.ucxTransports();
  }

  private static final List<String> EXCLUDED_PREFIXES = List.of("docker", "veth", "virbr", "br-");

  /** Creates the advisor; it holds no state. */
  public EnvAdvisor() {}

  /**
   * Computes the report.
   *
   * @param snapshot what was read from sysfs
   * @return ports with their decisions, the environment and the warnings
   */
  public DoctorReport advise(SysfsSnapshot snapshot) {
    Require.nonNull(snapshot, "snapshot");
    List<String> warnings = new ArrayList<>();
    snapshot.problems().forEach(p -> warnings.add(p.message()));

    List<PortInfo> ports = snapshot.devices().stream().flatMap(d -> d.ports().stream()).toList();
    Map<String, NetInterface> ifaces = new LinkedHashMap<>();
    snapshot.interfaces().forEach(i -> ifaces.put(i.name(), i));

    Map<String, Optional<GidChoice>> gids = new HashMap<>();
    Map<String, String> netdevs = new HashMap<>();
    for (PortInfo p : ports) {
      Optional<GidChoice> gid = p.roce() ? GidSelector.choose(p.gids()) : Optional.empty();
      gids.put(p.id(), gid);
      netdevs.put(p.id(), netdevOf(p, gid, snapshot.interfaces()));
      portWarnings(p, gid, warnings);
    }

    List<PortInfo> selected = select(ports, warnings);
    mixedLinkLayerWarning(ports, warnings);

    TreeMap<String, String> env = new TreeMap<>();
    if (!selected.isEmpty()) {
      putRdmaEnv(env, selected, gids, netdevs, ifaces, snapshot.interfaces(), warnings);
    } else {
      putTcpEnv(env, snapshot.devices(), ports, snapshot.interfaces(), warnings);
    }
    put(env, FabricVariable.UCX_TLS, ucxTls(!selected.isEmpty(), vendor(snapshot.gpus(),
        warnings)));
    return new DoctorReport(deviceReports(snapshot, gids, netdevs, selected),
        snapshot.interfaces(), env, warnings);
  }

  /** The environment over the selected RDMA ports. */
  private static void putRdmaEnv(Map<String, String> env, List<PortInfo> selected,
      Map<String, Optional<GidChoice>> gids, Map<String, String> netdevs,
      Map<String, NetInterface> ifaces, List<NetInterface> interfaces, List<String> warnings) {
    String ids = selected.stream().map(PortInfo::id).collect(Collectors.joining(","));
    put(env, FabricVariable.NCCL_IB_HCA, "=" + ids);
    put(env, FabricVariable.UCX_NET_DEVICES, ids);
    gidIndex(selected, gids, warnings).ifPresent(i -> put(env, FabricVariable.NCCL_IB_GID_INDEX,
        i));
    socketFromPorts(selected, netdevs, ifaces, interfaces, warnings)
        .ifPresent(i -> put(env, FabricVariable.NCCL_SOCKET_IFNAME, i));
  }

  /** The environment without an active RDMA port: TCP over the first usable interface. */
  private static void putTcpEnv(Map<String, String> env, List<DeviceInfo> devices,
      List<PortInfo> ports, List<NetInterface> interfaces, List<String> warnings) {
    Optional<NetInterface> fallback = fallbackInterface(interfaces);
    String over = fallback.map(i -> " over " + i.name()).orElse("");
    String why = devices.isEmpty()
        ? "no RDMA device under class/infiniband"
        : ports.isEmpty()
        ? "no readable port on RDMA device " + devices.stream().map(DeviceInfo::name)
            .collect(Collectors.joining(", ")) + " (see its warnings)"
        : "no ACTIVE RDMA port (" + ports.stream().map(PortInfo::id).collect(Collectors.joining(", "))
            + " are not ACTIVE)";
    warnings.add(why + ": NCCL will fall back to TCP sockets" + over
        + " (NCCL_IB_DISABLE=1), typically 5-10x slower between nodes;"
        + " check the RDMA driver and that the container was given the RDMA device");
    put(env, FabricVariable.NCCL_IB_DISABLE, "1");
    if (fallback.isPresent()) {
      put(env, FabricVariable.NCCL_SOCKET_IFNAME, fallback.get().name());
      put(env, FabricVariable.UCX_NET_DEVICES, fallback.get().name());
    } else {
      warnings.add("no up network interface other than lo, docker*, veth*, virbr*, br-*:"
          + " NCCL_SOCKET_IFNAME not set");
    }
  }

  /** The GPUs' maker: AMD when every GPU seen is AMD's, NVIDIA otherwise. */
  private static GpuVendor vendor(List<GpuVendor> gpus, List<String> warnings) {
    TreeSet<GpuVendor> makers = new TreeSet<>(gpus);
    if (makers.size() > 1) {
      warnings.add("GPUs of both NVIDIA and AMD on the PCI bus: UCX_TLS names CUDA's transports;"
          + " a process on the AMD GPUs needs rocm_copy,rocm_ipc in their place");
      return GpuVendor.NVIDIA;
    }
    return makers.isEmpty() ? GpuVendor.NVIDIA : makers.first();
  }

  /**
   * Sets a variable; every value goes through its {@link FabricVariable}'s form, the contract a
   * reader of the report checks.
   */
  private static void put(Map<String, String> env, FabricVariable v, String value) {
    if (!v.accepts(value)) {
      throw new IllegalStateException(v + "=" + value + " is not of the form " + v.form());
    }
    env.put(v.name(), value);
  }

  private static List<DeviceReport> deviceReports(SysfsSnapshot snapshot,
      Map<String, Optional<GidChoice>> gids, Map<String, String> netdevs,
      List<PortInfo> selected) {
    List<DeviceReport> devices = new ArrayList<>();
    for (DeviceInfo d : snapshot.devices()) {
      List<PortReport> reports = new ArrayList<>();
      for (PortInfo p : d.ports()) {
        Optional<GidChoice> gid = gids.get(p.id());
        reports.add(new PortReport(p, gid, gidNote(p, gid), netdevs.get(p.id()), selected.contains(p)));
      }
      devices.add(new DeviceReport(d.name(), reports));
    }
    return devices;
  }

  private static void portWarnings(PortInfo p, Optional<GidChoice> gid, List<String> warnings) {
    if (!p.active()) {
      warnings.add(p.id() + ": port is " + p.state() + " (phys state " + p.physState()
          + "), not ACTIVE; left out of NCCL_IB_HCA");
      return;
    }
    if (!"LinkUp".equals(p.physState())) {
      warnings.add(p.id() + ": phys state " + p.physState() + ", expected LinkUp");
    }
    if (p.roce()) {
      if (gid.isEmpty()) {
        warnings.add(p.id() + ": RoCE port has no usable GID (no non-zero GID with a readable type);"
            + " no GID index can be chosen for it");
      } else if (!gid.get().kind().preferred()) {
        warnings.add(p.id() + ": no RoCE v2 IPv4-mapped GID; fell back to GID index "
            + gid.get().index() + " (" + gid.get().kind().label() + ")");
      }
    } else if (!PortInfo.INFINIBAND.equals(p.linkLayer())) {
      warnings.add(p.id() + ": link layer " + p.linkLayer() + " is neither InfiniBand nor Ethernet");
    }
  }

  private static String gidNote(PortInfo p, Optional<GidChoice> gid) {
    if (PortInfo.INFINIBAND.equals(p.linkLayer())) {
      return "not needed on InfiniBand (NCCL default 0)";
    }
    if (!p.roce()) {
      return "link layer unknown";
    }
    if (gid.isEmpty()) {
      return "no usable GID";
    }
    GidKind kind = gid.get().kind();
    return kind.preferred() ? kind.label() : "fallback: " + kind.label() + " (no RoCE v2 IPv4 GID)";
  }

  /**
   * The chosen GID's netdev, else any GID's, else an interface tied to the port: one whose {@code
   * device/infiniband} names the device (on its {@code dev_port}), or an IPoIB interface whose
   * hardware address carries one of the port's GIDs (a container's or a copied tree often lacks
   * the {@code device} link); an up one first.
   */
  private static String netdevOf(PortInfo p, Optional<GidChoice> gid, List<NetInterface> ifaces) {
    if (gid.isPresent() && !gid.get().netdev().isEmpty()) {
      return gid.get().netdev();
    }
    for (GidEntry g : p.gids()) {
      if (!g.netdev().isEmpty()) {
        return g.netdev();
      }
    }
    List<NetInterface> mapped = ifaces.stream()
        .filter(i -> (i.rdmaDevices().contains(p.device())
            && (i.devPort() < 0 || i.devPort() + 1 == p.port()))
            || p.gids().stream().anyMatch(g -> i.carriesGid(g.address())))
        .toList();
    return mapped.stream().filter(NetInterface::up).findFirst()
        .or(() -> mapped.stream().findFirst())
        .map(NetInterface::name)
        .orElse("");
  }

  private static List<PortInfo> select(List<PortInfo> ports, List<String> warnings) {
    List<PortInfo> active = ports.stream().filter(PortInfo::active).toList();
    if (active.isEmpty()) {
      return List.of();
    }
    double max = active.stream().mapToDouble(EnvAdvisor::rate).max().orElseThrow();
    List<PortInfo> fastest = active.stream().filter(p -> rate(p) == max).toList();
    String fastestIds = fastest.stream().map(PortInfo::id).collect(Collectors.joining(", "));
    for (PortInfo p : active) {
      if (rate(p) < max) {
        warnings.add(p.id() + ": rate " + gbps(rate(p)) + " Gb/s is below the " + gbps(max)
            + " Gb/s of " + fastestIds + "; left out of NCCL_IB_HCA");
      }
    }
    String layer = fastest.stream().anyMatch(p -> PortInfo.INFINIBAND.equals(p.linkLayer()))
        ? PortInfo.INFINIBAND
        : fastest.get(0).linkLayer();
    List<PortInfo> kept = fastest.stream().filter(p -> p.linkLayer().equals(layer)).toList();
    for (PortInfo p : fastest) {
      if (!kept.contains(p)) {
        warnings.add(p.id() + ": " + p.linkLayer() + " port at " + gbps(max) + " Gb/s left out of"
            + " NCCL_IB_HCA, which keeps the " + layer + " ports");
      }
    }
    return kept;
  }

  private static void mixedLinkLayerWarning(List<PortInfo> ports, List<String> warnings) {
    Map<String, List<String>> byLayer = new TreeMap<>();
    for (PortInfo p : ports) {
      if (PortInfo.INFINIBAND.equals(p.linkLayer()) || p.roce()) {
        byLayer.computeIfAbsent(p.linkLayer(), k -> new ArrayList<>()).add(p.id());
      }
    }
    if (byLayer.size() > 1) {
      warnings.add("mixed link layers: " + byLayer.entrySet().stream()
          .map(e -> e.getKey() + " on " + String.join(", ", e.getValue()))
          .collect(Collectors.joining("; ")));
    }
  }

  private static Optional<String> gidIndex(
      List<PortInfo> selected, Map<String, Optional<GidChoice>> gids, List<String> warnings) {
    Map<String, Integer> byPort = new LinkedHashMap<>();
    for (PortInfo p : selected) {
      if (p.roce()) {
        gids.get(p.id()).ifPresent(g -> byPort.put(p.id(), g.index()));
      }
    }
    if (byPort.isEmpty()) {
      return Optional.empty();
    }
    Map.Entry<String, Integer> first = byPort.entrySet().iterator().next();
    if (new TreeSet<>(byPort.values()).size() > 1) {
      warnings.add("RoCE ports disagree on the GID index ("
          + byPort.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
              .collect(Collectors.joining(", "))
          + "); NCCL_IB_GID_INDEX is global, set to " + first.getValue() + " from " + first.getKey()
          + "; fix the GID tables or run one process per port");
    }
    return Optional.of(Integer.toString(first.getValue()));
  }

  private static Optional<String> socketFromPorts(
      List<PortInfo> selected,
      Map<String, String> netdevs,
      Map<String, NetInterface> ifaces,
      List<NetInterface> all,
      List<String> warnings) {
    for (PortInfo p : selected) {
      NetInterface i = ifaces.get(netdevs.get(p.id()));
      if (i != null && i.up()) {
        return Optional.of(i.name());
      }
    }
    for (PortInfo p : selected) {
      String name = netdevs.get(p.id());
      if (!name.isEmpty()) {
        NetInterface i = ifaces.get(name);
        warnings.add(p.id() + ": its netdev " + name + (i == null ? " is not under class/net"
            : " is not up (operstate '" + i.operstate() + "')") + "; NCCL_SOCKET_IFNAME uses it anyway");
        return Optional.of(name);
      }
    }
    String ids = selected.stream().map(PortInfo::id).collect(Collectors.joining(", "));
    if (selected.stream().noneMatch(PortInfo::roce)) {
      // On InfiniBand the IP traffic beside the RDMA ports (NCCL's bootstrap, rdmacm) belongs on
      // IPoIB, not on the first Ethernet interface that sorts before it.
      Optional<NetInterface> ipoib = all.stream().filter(NetInterface::up)
          .filter(i -> i.type() == NetInterface.TYPE_INFINIBAND).findFirst();
      if (ipoib.isPresent()) {
        warnings.add(ids + ": no netdev is tied to the RDMA ports (no device/infiniband link, no"
            + " port GID in an IPoIB address); NCCL_SOCKET_IFNAME uses the up IPoIB interface "
            + ipoib.get().name());
        return Optional.of(ipoib.get().name());
      }
    }
    Optional<NetInterface> fallback = fallbackInterface(all);
    warnings.add(ids + ": no netdev found behind the RDMA ports; NCCL_SOCKET_IFNAME "
        + fallback.map(i -> "falls back to " + i.name()).orElse("not set"));
    return fallback.map(NetInterface::name);
  }

  private static Optional<NetInterface> fallbackInterface(List<NetInterface> ifaces) {
    return ifaces.stream()
        .filter(NetInterface::up)
        .filter(i -> i.type() != NetInterface.TYPE_LOOPBACK && !i.name().equals("lo"))
        .filter(i -> EXCLUDED_PREFIXES.stream().noneMatch(x -> i.name().startsWith(x)))
        .findFirst();
  }

  private static double rate(PortInfo p) {
    return p.rateGbps().orElse(0.0);
  }

  /** Formats a rate without a trailing {@code .0}: 200, 2.5. */
  static String gbps(double rate) {
    return rate == Math.rint(rate) ? Long.toString((long) rate) : Double.toString(rate);
  }
}
