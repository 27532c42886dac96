package io.meshplan.deploy;

import io.meshplan.doctor.SysfsNames;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The fabric side of a launch: the NCCL/UCX environment every rank gets, and the RDMA ports it was
 * derived from (from {@code meshplan doctor --json}, or given by hand).
 *
 * @param env environment variables by name, sorted; names are shell identifiers, values hold no
 *     control character (a newline or an escape has no place in a launch file's variable)
 * @param ports the RDMA ports NCCL uses, as {@code device:port}, in the doctor's order
 * @param roce whether those ports are RoCE (Ethernet link layer), so a GID index is needed
 * @param fromNode the names in {@code env} whose values the doctor read on one node, as opposed
 *     to those given for the launch: what holds only in that node's namespaces comes from here
 * @param rdmacmInterfaces the interfaces over which the RDMA connection manager can reach the
 *     ports: the up IPoIB interfaces and the netdevs behind the selected ports, as the doctor saw
 *     them
 */
public record FabricEnv(SortedMap<String, String> env, List<String> ports, boolean roce,
    SortedSet<String> fromNode, SortedSet<String> rdmacmInterfaces) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern PORT = Pattern.compile("[A-Za-z0-9_.-]+:[0-9]+");

  /** Validates names, values and ports and copies the collections. */
  public FabricEnv {
    Require.nonNull(env, "env");
    env = new TreeMap<>(env);
    for (var e : env.entrySet()) {
      Require.that(NAME.matcher(e.getKey()).matches(), "environment variable name '"
          + e.getKey() + "' is not a shell identifier (letters, digits, _; not starting with a"
          + " digit)");
      Require.nonNull(e.getValue(), "value of " + e.getKey());
      LaunchText.unprintable(e.getValue()).ifPresent(c -> {
        throw new IllegalArgumentException("the value of " + e.getKey() + " holds the "
            + (Character.isISOControl(c) ? "control" : "line-breaking") + " character "
            + String.format("U+%04X", c) + "; a variable of a launch file is one line of "
            + "printable text");
      });
    }
    ports = List.copyOf(ports);
    for (String p : ports) {
      Require.that(PORT.matcher(p).matches(), "RDMA port '" + p
          + "' is not device:port such as mlx5_0:1");
    }
    fromNode = new TreeSet<>(fromNode);
    Require.that(env.keySet().containsAll(fromNode), "the node's variables " + fromNode
        + " are not all in the environment");
    rdmacmInterfaces = new TreeSet<>(rdmacmInterfaces);
    for (String i : rdmacmInterfaces) {
      Require.that(SysfsNames.netInterface(i), "interface '" + i + "' is not an interface name");
    }
  }

  /**
   * A fabric given by hand: no variable read on a node, no interface known to the connection
   * manager.
   *
   * @param env the variables
   * @param ports the RDMA ports
   * @param roce whether they are RoCE
   */
  public FabricEnv(SortedMap<String, String> env, List<String> ports, boolean roce) {
    this(env, ports, roce, new TreeSet<>(), new TreeSet<>());
  }

  /**
   * An environment with no RDMA ports.
   *
   * @param env the variables
   * @return the fabric
   */
  public static FabricEnv of(SortedMap<String, String> env) {
    return new FabricEnv(env, List.of(), false);
  }

  /**
   * This fabric with more variables; a name given here replaces the same name, which is then no
   * longer the node's.
   *
   * @param more the variables to add
   * @return the merged fabric
   */
  public FabricEnv with(SortedMap<String, String> more) {
    TreeMap<String, String> m = new TreeMap<>(env);
    m.putAll(more);
    TreeSet<String> node = new TreeSet<>(fromNode);
    node.removeAll(more.keySet());
    return new FabricEnv(m, ports, roce, node, rdmacmInterfaces);
  }

  /**
   * The network interface for sockets and IPoIB: {@code NCCL_SOCKET_IFNAME} when it names one
   * interface.
   *
   * @return the interface, or empty
   */
  public Optional<String> socketInterface() {
    String v = env.get("NCCL_SOCKET_IFNAME");
    if (v == null || !SysfsNames.netInterface(v)) {
      return Optional.empty();
    }
    return Optional.of(v);
  }

  /**
   * Why this environment does not suit the cluster's GPUs: a doctor report's {@code UCX_TLS}
   * names the GPU transports of the node it was written on ({@link
   * io.meshplan.doctor.GpuVendor}), and CUDA's transports leave UCX nothing for an AMD GPU's
   * memory, nor ROCm's for an NVIDIA one's.
   *
   * @param rocm whether the cluster's GPUs are AMD's
   * @return the reason, or empty when the transports match or none is named
   */
  public Optional<String> gpuMismatch(boolean rocm) {
    String tls = env.get("UCX_TLS");
    io.meshplan.doctor.GpuVendor want = rocm ? io.meshplan.doctor.GpuVendor.AMD
        : io.meshplan.doctor.GpuVendor.NVIDIA;
    return io.meshplan.doctor.FabricVariable.ucxGpus(tls).filter(g -> g != want)
        .map(g -> "UCX_TLS is " + tls + ", the transports of " + g + " GPUs, but the cluster's"
            + " GPUs are " + want + "'s (UCX needs " + want.ucxTransports() + "); run meshplan"
            + " doctor on a node of this cluster");
  }
}
