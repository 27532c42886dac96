package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
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
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The pod template every Kubernetes target shares: one container with all the node's GPUs
 * ({@code nvidia.com/gpu}, or {@code amd.com/gpu} on AMD: {@link RocmLaunch}) and the RDMA resource, the {@code IPC_LOCK} capability (RDMA pins
 * memory), a memory-backed {@code /dev/shm} (NCCL and the data loaders use shared memory), and the
 * fabric's environment as the pod sees it ({@link ProcessFabric}): on the host network the node's,
 * else with the pod's interface, and the ports and GID index found by {@link FabricLookupScript}
 * when the container starts. Two annotations say which: {@value #RDMA_NAMESPACE_ANNOTATION}
 * ({@code node} or {@code pod}) and {@value #FOUND_AT_START_ANNOTATION} (the variables found at
 * start).
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
  /** Whose network and RDMA namespaces the pod's fabric variables hold in: node or pod. */
  static final String RDMA_NAMESPACE_ANNOTATION = "meshplan.io/rdma-namespace";
  /** The fabric variables the pod finds itself when it starts, comma-separated. */
  static final String FOUND_AT_START_ANNOTATION = "meshplan.io/found-at-start";
  /** The name of the volume of the ConfigMap mounted at {@link FabricLookupScript#MOUNT}. */
  static final String MESHPLAN_VOLUME = "meshplan-driver";

  private KubePods() {}

  /**
   * Builds a pod template.
   *
   * @param spec the launch
   * @param fabric the environment
   * @param role the pod's role label (head, worker, master)
   * @param containerName the container's name (the operators require some, e.g. {@code pytorch})
   * @param command the container command as Kubernetes reads it: literal words already passed
   *     through {@link KubeYaml#literal}, {@code $(VAR)} only where a variable is meant; empty
   *     where the operator writes it (KubeRay), which then runs the fabric script first from the
   *     container's {@code args}
   * @param ports the container ports, may be empty
   * @return the template; when the pod finds variables at start, its command runs {@link
   *     FabricLookupScript#PATH} first, and the caller mounts the script's ConfigMap ({@link
   *     #mount})
   */
  static PodTemplateSpec template(LaunchSpec spec, FabricEnv fabric, String role,
      String containerName, List<String> command, List<ContainerPort> ports) {
    ProcessFabric pod = ProcessFabric.inPod(spec, fabric);
    Map<String, Quantity> resources = new TreeMap<>();
    resources.put(spec.gpuResource(), new Quantity(Integer.toString(spec.gpusPerNode())));
    resources.put(spec.rdmaResource(), new Quantity(Integer.toString(spec.rdmaCount())));
    ResourceRequirements req = new ResourceRequirementsBuilder()
        .withLimits(resources).withRequests(resources).build();
    Container c = new ContainerBuilder()
        .withName(containerName)
        .withImage(spec.image().orElseThrow())
        .withCommand(started(pod, command))
        .withArgs(pod.foundAtStart().isEmpty() || !command.isEmpty() ? List.of()
            : List.of(". " + FabricLookupScript.PATH))
        .withEnv(env(pod.env()))
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
        .addToAnnotations(RDMA_NAMESPACE_ANNOTATION, pod.ownNamespace() ? "pod" : "node")
        .endMetadata()
        .withNewSpec().withContainers(c).withVolumes(v).endSpec();
    if (!pod.foundAtStart().isEmpty()) {
      b.editMetadata().addToAnnotations(FOUND_AT_START_ANNOTATION, pod.foundAtStart().stream()
          .map(Enum::name).collect(Collectors.joining(","))).endMetadata();
    }
    if (spec.podNetwork() instanceof PodNetwork.Multus m) {
      b.editMetadata().addToAnnotations(PodNetwork.MULTUS_ANNOTATION, m.annotation()).endMetadata();
    }
    if (spec.podNetwork() instanceof PodNetwork.Host) {
      // Kubernetes' rule: a hostNetwork pod resolves cluster names only with this policy.
      b.editSpec().withHostNetwork(true).withDnsPolicy(HOST_DNS_POLICY).endSpec();
    }
    return b.build();
  }

  /** The command, run by the fabric script when the pod finds variables at start. */
  private static List<String> started(ProcessFabric pod, List<String> command) {
    if (pod.foundAtStart().isEmpty() || command.isEmpty()) {
      return command;
    }
    List<String> c = new ArrayList<>(List.of("bash", FabricLookupScript.PATH));
    c.addAll(command);
    return c;
  }

  /**
   * Environment variables as container variables, sorted by name.
   *
   * @param env the variables
   * @return the variables, values escaped for Kubernetes
   */
  static List<EnvVar> env(SortedMap<String, String> env) {
    List<EnvVar> out = new ArrayList<>();
    env.forEach((k, v) -> out.add(new EnvVar(k, KubeYaml.literal(v), null)));
    return out;
  }

  /**
   * A pod template with a ConfigMap mounted read-only at {@link FabricLookupScript#MOUNT}.
   *
   * @param t the pod
   * @param configMap the ConfigMap's name
   * @return a new template
   */
  static PodTemplateSpec mount(PodTemplateSpec t, String configMap) {
    return new PodTemplateSpecBuilder(t).editSpec()
        .addNewVolume().withName(MESHPLAN_VOLUME).withNewConfigMap()
        .withName(configMap).endConfigMap().endVolume()
        .editFirstContainer().addNewVolumeMount().withName(MESHPLAN_VOLUME)
        .withMountPath(FabricLookupScript.MOUNT).withReadOnly(true).endVolumeMount()
        .endContainer().endSpec().build();
  }

  /**
   * A ConfigMap holding the fabric script, for a target without one of its own.
   *
   * @param spec the launch
   * @param pod the pod's view of the fabric; it finds variables at start
   * @return {@code NAME-fabric} in the job's namespace
   */
  static ConfigMap fabricConfigMap(LaunchSpec spec, ProcessFabric pod) {
    return new ConfigMapBuilder().withNewMetadata().withName(spec.name() + "-fabric")
        .withNamespace(spec.namespace()).addToLabels(JOB_LABEL, spec.name()).endMetadata()
        .addToData(FabricLookupScript.FILE, FabricLookupScript.file(pod)).build();
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
