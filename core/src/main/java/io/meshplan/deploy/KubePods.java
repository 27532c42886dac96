package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The pod template every Kubernetes target shares: one container with all the node's GPUs
 * ({@code nvidia.com/gpu}) and the RDMA resource, the {@code IPC_LOCK} capability (RDMA pins
 * memory), a memory-backed {@code /dev/shm} (NCCL and the data loaders use shared memory), and the
 * fabric's environment.
 */
final class KubePods {
  /** The resource name of NVIDIA's device plugin. */
  static final String GPU_RESOURCE = "nvidia.com/gpu";
  /** The label every generated pod carries with the job name. */
  static final String JOB_LABEL = "meshplan.io/job";
  /** The Linux capability RDMA needs to pin (register) memory; every Kubernetes target adds it. */
  static final String IPC_LOCK = "IPC_LOCK";
  /** The DNS policy of a {@code hostNetwork} pod that still resolves Services. */
  static final String HOST_DNS_POLICY = "ClusterFirstWithHostNet";

  private KubePods() {}

  /**
   * Builds a pod template.
   *
   * @param spec the launch
   * @param fabric the environment
   * @param role the pod's role label (head, worker, master)
   * @param containerName the container's name (the operators require some, e.g. {@code pytorch})
   * @param command the container command as Kubernetes reads it: literal words already passed
   *     through {@link KubeYaml#literal}, {@code $(VAR)} only where a variable is meant
   * @param ports the container ports, may be empty
   * @return the template
   */
  static PodTemplateSpec template(LaunchSpec spec, FabricEnv fabric, String role,
      String containerName, List<String> command, List<ContainerPort> ports) {
    Map<String, Quantity> resources = new TreeMap<>();
    resources.put(GPU_RESOURCE, new Quantity(Integer.toString(spec.gpusPerNode())));
    resources.put(spec.rdmaResource(), new Quantity(Integer.toString(spec.rdmaCount())));
    ResourceRequirements req = new ResourceRequirementsBuilder()
        .withLimits(resources).withRequests(resources).build();
    Container c = new ContainerBuilder()
        .withName(containerName)
        .withImage(spec.image().orElseThrow())
        .withCommand(command)
        .withEnv(env(podFabric(spec, fabric)))
        .withPorts(ports)
        .withResources(req)
        .withNewSecurityContext().withNewCapabilities().withAdd(IPC_LOCK).endCapabilities()
        .endSecurityContext()
        .addNewVolumeMount().withName("dshm").withMountPath("/dev/shm").endVolumeMount()
        .build();
    VolumeBuilder shm = new VolumeBuilder().withName("dshm");
    Volume v = spec.shmSize().isPresent()
        ? shm.withNewEmptyDir().withMedium("Memory")
            .withSizeLimit(new Quantity(spec.shmSize().get())).endEmptyDir().build()
        : shm.withNewEmptyDir().withMedium("Memory").endEmptyDir().build();
    PodTemplateSpecBuilder b = new PodTemplateSpecBuilder()
        .withNewMetadata().addToLabels(JOB_LABEL, spec.name()).addToLabels("meshplan.io/role", role)
        .endMetadata()
        .withNewSpec().withContainers(c).withVolumes(v).endSpec();
    if (spec.podNetwork() instanceof PodNetwork.Multus m) {
      b.editMetadata().addToAnnotations(PodNetwork.MULTUS_ANNOTATION, m.annotation()).endMetadata();
    }
    if (spec.podNetwork() instanceof PodNetwork.Host) {
      // Kubernetes' rule: a hostNetwork pod resolves cluster names only with this policy.
      b.editSpec().withHostNetwork(true).withDnsPolicy(HOST_DNS_POLICY).endSpec();
    }
    return b.build();
  }

  /**
   * The fabric as the pod sees it: {@code NCCL_SOCKET_IFNAME} (and {@code GLOO_SOCKET_IFNAME}
   * when set) name the interface the pod network gives the pod, or are dropped when it leaves
   * the choice to NCCL.
   *
   * @param spec the launch, with its pod network
   * @param fabric the host's environment
   * @return the pod's environment
   */
  static FabricEnv podFabric(LaunchSpec spec, FabricEnv fabric) {
    if (spec.podNetwork() instanceof PodNetwork.Host) {
      return fabric;
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
    return new FabricEnv(env, fabric.ports(), fabric.roce());
  }

  /**
   * The fabric's environment as container variables, sorted by name.
   *
   * @param fabric the environment
   * @return the variables, values escaped for Kubernetes
   */
  static List<EnvVar> env(FabricEnv fabric) {
    List<EnvVar> out = new ArrayList<>();
    fabric.env().forEach((k, v) -> out.add(new EnvVar(k, KubeYaml.literal(v), null)));
    return out;
  }

  /**
   * A TCP container port.
   *
   * @param name its name
   * @param port its number
   * @return the port
   */
  static ContainerPort port(String name, int port) {
    ContainerPort p = new ContainerPort();
    p.setName(name);
    p.setContainerPort(port);
    p.setProtocol("TCP");
    return p;
  }
}
