package io.meshplan.deploy;

import io.meshplan.util.Require;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a Kubernetes pod reaches the other pods, and so which interface NCCL's sockets use. NCCL
 * treats a set {@code NCCL_SOCKET_IFNAME} as find-or-fail (NVIDIA/nccl {@code
 * src/misc/socket.cc}, {@code ncclFindInterfaces}: "Specified by user : find or fail"; {@code
 * src/bootstrap.cc}: "Bootstrap : no socket interface found"), so the name must be one the pod has.
 */
public sealed interface PodNetwork {
  /** The interface Multus gives the first attachment when the annotation names none. */
  String MULTUS_FIRST_INTERFACE = "net1";

  /** The interface every pod has on its cluster network. */
  String POD_INTERFACE = "eth0";

  /** The Multus annotation key. */
  String MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";

  /**
   * The socket interface NCCL is told to use in the pod.
   *
   * @param hostInterface the host's interface (the fabric's {@code NCCL_SOCKET_IFNAME}), if any
   * @return the interface, or empty to let NCCL choose
   */
  Optional<String> socketInterface(Optional<String> hostInterface);

  /** The pod's cluster network: sockets on {@code eth0}, RDMA from the device plugin. */
  record Default() implements PodNetwork {
    @Override
    public Optional<String> socketInterface(Optional<String> hostInterface) {
      return Optional.of(POD_INTERFACE);
    }
  }

  /** The node's network namespace ({@code hostNetwork: true}): the host's interface is the pod's. */
  record Host() implements PodNetwork {
    @Override
    public Optional<String> socketInterface(Optional<String> hostInterface) {
      return hostInterface;
    }
  }

  /**
   * A Multus secondary network.
   *
   * @param namespace the NetworkAttachmentDefinition's namespace
   * @param name its name
   * @param iface the interface name inside the pod ({@code net1} unless given)
   */
  record Multus(String namespace, String name, String iface) implements PodNetwork {
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern IFACE = Pattern.compile("[A-Za-z0-9_.-]{1,15}");

    /** Validates the names. */
    public Multus {
      Require.that(namespace != null && LABEL.matcher(namespace).matches(), "Multus namespace '"
          + namespace + "' is not a DNS-1123 label");
      Require.that(name != null && LABEL.matcher(name).matches(), "Multus network '" + name
          + "' is not a DNS-1123 label");
      Require.that(iface != null && IFACE.matcher(iface).matches(), "interface '" + iface
          + "' is not a network interface name such as net1");
    }

    /**
     * The annotation value, {@code NS/NAME@IFACE}.
     *
     * @return the value
     */
    public String annotation() {
      return namespace + "/" + name + "@" + iface;
    }

    @Override
    public Optional<String> socketInterface(Optional<String> hostInterface) {
      return Optional.of(iface);
    }
  }

  /**
   * Parses {@code default}, {@code host} or {@code multus:NS/NAME[@IFACE]}.
   *
   * @param text the value
   * @return the network
   * @throws IllegalArgumentException naming the three forms
   */
  static PodNetwork parse(String text) {
    Require.nonNull(text, "pod network");
    if (text.equals("default")) {
      return new Default();
    }
    if (text.equals("host")) {
      return new Host();
    }
    Matcher m = Pattern.compile("multus:([^/@]+)/([^/@]+)(?:@([^/@]+))?").matcher(text);
    Require.that(m.matches(), "pod network '" + text + "' is not default, host or"
        + " multus:NS/NAME[@IFACE] such as multus:kube-system/roce@net1");
    return new Multus(m.group(1), m.group(2), m.group(3) == null ? MULTUS_FIRST_INTERFACE
        : m.group(3));
  }
}
