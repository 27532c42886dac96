package io.meshplan.deploy;

import io.meshplan.doctor.FabricVariable;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The fabric as the processes of one launch see it. The doctor's report was read on a node, and
 * four of its variables name things of that node ({@link FabricVariable#hostSpecific()}): its RDMA
 * devices and ports ({@code NCCL_IB_HCA}, {@code UCX_NET_DEVICES}), an index into a port's GID
 * table ({@code NCCL_IB_GID_INDEX}) and an interface ({@code NCCL_SOCKET_IFNAME}). They hold where
 * a process shares that node's network and RDMA namespaces (a Slurm task, a Dask process, a
 * {@code hostNetwork} pod), and nowhere else: a pod with its own namespaces (the cluster network,
 * a Multus attachment, an SR-IOV virtual function) has its own device names and GID table, and
 * only the interfaces its network gives it ({@code eth0}, {@code net1}). There the ports and the
 * GID index are found when the pod starts ({@link FabricLookupScript}, the doctor's rules), and
 * the interface is the pod network's.
 *
 * @param env the variables written into the launch file for the process, sorted
 * @param foundAtStart the variables the pod finds itself when it starts, in {@link
 *     FabricVariable} order; empty on a node's namespaces
 * @param ownNamespace whether the process runs in its own network and RDMA namespaces
 * @param roce whether the ports to find are RoCE, so a GID index is found with them
 */
record ProcessFabric(SortedMap<String, String> env, List<FabricVariable> foundAtStart,
    boolean ownNamespace, boolean roce) {
  /** The variables that hold only where they were read and are found in a pod instead. */
  private static final List<FabricVariable> PORT_VARIABLES = List.of(FabricVariable.NCCL_IB_HCA,
      FabricVariable.UCX_NET_DEVICES);

  /** Copies. */
  ProcessFabric {
    env = new TreeMap<>(env);
    foundAtStart = List.copyOf(foundAtStart);
    Require.that(ownNamespace || foundAtStart.isEmpty(), "only a pod of its own finds its fabric");
  }

  /**
   * A process in a node's own namespaces (Slurm, Dask): the fabric as the doctor read it.
   *
   * @param fabric the fabric
   * @return its view
   */
  static ProcessFabric onNode(FabricEnv fabric) {
    return new ProcessFabric(fabric.env(), List.of(), false, fabric.roce());
  }

  /**
   * The comment a script run on the nodes carries about the node's variables it sets.
   *
   * @param fabric the fabric
   * @return two comment lines, or none when no variable of the doctor's names a node's own things
   */
  static List<String> nodeNote(FabricEnv fabric) {
    List<String> names = fabric.fromNode().stream().filter(n -> FabricVariable.named(n)
        .map(FabricVariable::hostSpecific).orElse(false)).toList();
    if (names.isEmpty()) {
      return List.of();
    }
    return List.of(String.join(", ", names) + ": as 'meshplan doctor' read them on a node.",
        "Each process runs in its node's own network and RDMA namespaces: they hold on nodes alike.");
  }

  /**
   * A pod of a Kubernetes target, by its pod network.
   *
   * @param spec the launch, with its pod network
   * @param fabric the doctor's fabric and the launch's own variables
   * @return its view: the node's on the host network; else the pod network's interface, the
   *     node's ports and GID index left out and found at start, and the launch's own variables
   *     kept as given
   */
  static ProcessFabric inPod(LaunchSpec spec, FabricEnv fabric) {
    if (spec.podNetwork() instanceof PodNetwork.Host) {
      return onNode(fabric);
    }
    TreeMap<String, String> env = new TreeMap<>(fabric.env());
    Optional<String> iface = spec.podNetwork().socketInterface(fabric.socketInterface());
    for (String k : List.of("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")) {
      if (iface.isEmpty()) {
        env.remove(k);
      } else if (k.startsWith("NCCL") || env.containsKey(k)) {
        env.put(k, iface.get());
      }
    }
    List<FabricVariable> found = new ArrayList<>();
    List<FabricVariable> candidates = new ArrayList<>(PORT_VARIABLES);
    if (fabric.roce()) {
      candidates.add(FabricVariable.NCCL_IB_GID_INDEX);
    }
    for (FabricVariable v : candidates) {
      boolean given = env.containsKey(v.name()) && !fabric.fromNode().contains(v.name());
      if (given) {
        continue;
      }
      env.remove(v.name());
      if (!fabric.ports().isEmpty()) {
        found.add(v);
      }
    }
    String ucx = FabricVariable.UCX_NET_DEVICES.name();
    if (fabric.ports().isEmpty() && fabric.fromNode().contains(ucx)) {
      // Without RDMA the doctor names an interface for UCX's TCP transport: the pod's instead.
      iface.ifPresent(i -> env.put(ucx, i));
    }
    return new ProcessFabric(env, found, true, fabric.roce());
  }
}
