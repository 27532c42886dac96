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
        .withEnv(env(fabric))
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
    return new PodTemplateSpecBuilder()
        .withNewMetadata().addToLabels(JOB_LABEL, spec.name()).addToLabels("meshplan.io/role", role)
        .endMetadata()
        .withNewSpec().withContainers(c).withVolumes(v).endSpec()
        .build();
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
