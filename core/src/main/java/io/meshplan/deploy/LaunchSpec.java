package io.meshplan.deploy;

import io.meshplan.doctor.SysfsNames;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Everything a launch manifest needs besides the fabric: the job's name and namespace, the image,
 * the cluster's shape, the training command, and the Kubernetes resource names. Names are
 * restricted to what Kubernetes and Slurm accept, so they never need quoting; the command and the
 * environment may hold any text and are quoted by each writer.
 *
 * @param name the job name: a DNS-1123 label of at most 40 characters (room for the operators'
 *     suffixes); {@link Deployer} also needs a letter first where the name is a DNS-1035 label
 * @param namespace the Kubernetes namespace (the RunAI project): a DNS-1123 label
 * @param image the container image reference, in the OCI reference grammar ({@link
 *     OciReference}); Kubernetes and RunAI need one, Slurm and Dask run on the hosts
 * @param nodes the nodes (one pod or Slurm task each)
 * @param gpusPerNode the GPUs per node (one training process each)
 * @param command the training command: a script and its arguments, run by {@code torchrun} once
 *     per GPU (on Ray through {@link RayMode}: by torchrun once per GPU, or as the job's own
 *     driver; as the client on Dask)
 * @param rdmaResource the Kubernetes extended resource of the RDMA device, e.g. {@code rdma/ib}
 *     (an extended resource name, {@link KubeNames#extendedResource})
 * @param rdmaCount how many of that resource each pod requests
 * @param shmSize the size limit of the memory-backed {@code /dev/shm}, a Kubernetes quantity
 *     of whole bytes such as {@code 64Gi}, or empty for no limit
 * @param masterPort the rendezvous port of {@code torchrun}
 * @param podNetwork the pods' network, which decides the interface NCCL's sockets use
 * @param nodeScriptPath where the per-node script of the RunAI target is found inside the pod
 * @param ipoibInterface the IPoIB interface Dask's UCX listens on
 * @param partition the Slurm partition, or empty
 * @param rayMode how the Ray targets run the training (the other targets ignore it)
 * @param nvlinkHosts the hosts (nodes) of one NVLink domain that spans hosts (16 or 18 of an
 *     NVL72 rack's compute trays), whose tasks must land in one rack; 1 where NVLink stops at
 *     the host
 * @param rocm whether the GPUs are AMD's, run by ROCm and RCCL: the pods request {@link
 *     RocmLaunch#GPU_RESOURCE} instead of {@code nvidia.com/gpu}
 */
public record LaunchSpec(
    String name,
    String namespace,
    Optional<String> image,
    int nodes,
    int gpusPerNode,
    List<String> command,
    String rdmaResource,
    int rdmaCount,
    Optional<String> shmSize,
    int masterPort,
    PodNetwork podNetwork,
    String nodeScriptPath,
    String ipoibInterface,
    Optional<String> partition,
    RayMode rayMode,
    int nvlinkHosts,
    boolean rocm) {
  /** The longest job name: room for the operators' suffixes ({@code -worker-127}) in 63. */
  static final int NAME_MAX = 40;
  private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9._-]+)+");
  private static final Pattern PARTITION = Pattern.compile("[A-Za-z0-9_.,-]{1,200}");

  /**
   * A launch whose NVLink stops at the host.
   *
   * @param name the job name
   * @param namespace the Kubernetes namespace
   * @param image the container image, or empty
   * @param nodes the nodes
   * @param gpusPerNode the GPUs per node
   * @param command the training command
   * @param rdmaResource the RDMA extended resource
   * @param rdmaCount how many of it each pod requests
   * @param shmSize the {@code /dev/shm} limit, or empty
   * @param masterPort the rendezvous port
   * @param podNetwork the pods' network
   * @param nodeScriptPath the RunAI per-node script's path
   * @param ipoibInterface the IPoIB interface
   * @param partition the Slurm partition, or empty
   * @param rayMode how the Ray targets run the training
   */
  public LaunchSpec(String name, String namespace, Optional<String> image, int nodes,
      int gpusPerNode, List<String> command, String rdmaResource, int rdmaCount,
      Optional<String> shmSize, int masterPort, PodNetwork podNetwork, String nodeScriptPath,
      String ipoibInterface, Optional<String> partition, RayMode rayMode) {
    this(name, namespace, image, nodes, gpusPerNode, command, rdmaResource, rdmaCount, shmSize,
        masterPort, podNetwork, nodeScriptPath, ipoibInterface, partition, rayMode, 1, false);
  }

  /**
   * A launch on NVIDIA GPUs.
   *
   * @param name the job name
   * @param namespace the Kubernetes namespace
   * @param image the container image, or empty
   * @param nodes the nodes
   * @param gpusPerNode the GPUs per node
   * @param command the training command
   * @param rdmaResource the RDMA extended resource
   * @param rdmaCount how many of it each pod requests
   * @param shmSize the {@code /dev/shm} limit, or empty
   * @param masterPort the rendezvous port
   * @param podNetwork the pods' network
   * @param nodeScriptPath the RunAI per-node script's path
   * @param ipoibInterface the IPoIB interface
   * @param partition the Slurm partition, or empty
   * @param rayMode how the Ray targets run the training
   * @param nvlinkHosts the hosts of one NVLink domain
   */
  public LaunchSpec(String name, String namespace, Optional<String> image, int nodes,
      int gpusPerNode, List<String> command, String rdmaResource, int rdmaCount,
      Optional<String> shmSize, int masterPort, PodNetwork podNetwork, String nodeScriptPath,
      String ipoibInterface, Optional<String> partition, RayMode rayMode, int nvlinkHosts) {
    this(name, namespace, image, nodes, gpusPerNode, command, rdmaResource, rdmaCount, shmSize,
        masterPort, podNetwork, nodeScriptPath, ipoibInterface, partition, rayMode, nvlinkHosts,
        false);
  }

  /**
   * The Kubernetes resource of the GPUs: {@code nvidia.com/gpu}, or {@code amd.com/gpu}.
   *
   * @return the extended resource name
   */
  public String gpuResource() {
    return rocm ? RocmLaunch.GPU_RESOURCE : KubePods.GPU_RESOURCE;
  }

  /** Validates every field; messages quote the bad value. */
  public LaunchSpec {
    Require.that(nvlinkHosts >= 1 && nodes % nvlinkHosts == 0, "the " + nodes + " nodes must "
        + "be whole NVLink domains of " + nvlinkHosts);
    Require.nonNull(name, "name");
    Require.that(name.length() <= NAME_MAX && KubeNames.dns1123Label(name), "job name '" + name
        + "' must be a DNS-1123 label of at most " + NAME_MAX + " characters (lower-case"
        + " letters, digits and '-', starting and ending with a letter or digit)");
    Require.nonNull(namespace, "namespace");
    Require.that(KubeNames.dns1123Label(namespace), "namespace '" + namespace + "' must be a"
        + " DNS-1123 label of at most 63 characters (lower-case letters, digits and '-',"
        + " starting and ending with a letter or digit)");
    Require.nonNull(image, "image");
    image.ifPresent(i -> OciReference.problem(i).ifPresent(why -> {
      throw new IllegalArgumentException("image '" + i + "' is not an OCI image reference: "
          + why + " (e.g. nvcr.io/nvidia/pytorch:24.05-py3)");
    }));
    image.flatMap(i -> ImageVendor.mismatch(i, rocm)).ifPresent(why -> {
      throw new IllegalArgumentException(why);
    });
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    command = List.copyOf(command);
    Require.that(!command.isEmpty(), "the training command is empty");
    for (String w : command) {
      LaunchText.unquotable(w).ifPresent(c -> {
        throw new IllegalArgumentException("the training command holds the "
            + (Character.isISOControl(c) ? "control" : "line-breaking") + " character "
            + String.format("U+%04X", c) + "; a command word is printable text, newlines and "
            + "tabs included");
      });
    }
    Require.nonNull(rdmaResource, "rdma resource");
    Require.that(KubeNames.extendedResource(rdmaResource), "RDMA resource '" + rdmaResource
        + "' is not an extended resource name (DOMAIN/NAME outside kubernetes.io, such as"
        + " rdma/ib or rdma/hca)");
    Require.that(!rdmaResource.equals(KubePods.GPU_RESOURCE)
        && !rdmaResource.equals(RocmLaunch.GPU_RESOURCE), "RDMA resource '" + rdmaResource
        + "' is the GPU resource itself; name the RDMA device plugin's, such as rdma/ib");
    Require.positive(rdmaCount, "RDMA resource count");
    Require.nonNull(shmSize, "shm size");
    shmSize.ifPresent(s -> Require.that(KubeNames.bytes(s).isPresent(), "shm size '" + s
        + "' is not a Kubernetes quantity of whole bytes from 1 to 2^63-1, such as 64Gi or"
        + " 500M"));
    Require.that(masterPort > 0 && masterPort < 65536, "port " + masterPort
        + " is not between 1 and 65535");
    Require.nonNull(podNetwork, "pod network");
    Require.nonNull(nodeScriptPath, "node script path");
    Require.that(nodeScriptPath.length() <= 4096 && PATH.matcher(nodeScriptPath).matches()
        && !nodeScriptPath.matches(".*/\\.{1,2}(/.*)?"), "node script path '" + nodeScriptPath
        + "' must be an absolute path to a file, of letters, digits, '.', '_', '-' and '/'"
        + " (no empty, '.' or '..' part)");
    Require.nonNull(ipoibInterface, "IPoIB interface");
    Require.that(SysfsNames.netInterface(ipoibInterface), "interface '" + ipoibInterface
        + "' is not a network interface name (1 to 15 letters, digits, '_', '.' or '-') such as"
        + " ib0");
    Require.nonNull(partition, "partition");
    partition.ifPresent(s -> Require.that(PARTITION.matcher(s).matches(), "partition '" + s
        + "' is not a Slurm partition name"));
    Require.nonNull(rayMode, "Ray mode");
  }

  /**
   * The training processes over the whole job.
   *
   * @return nodes * GPUs per node
   */
  public int worldSize() {
    return Math.multiplyExact(nodes, gpusPerNode);
  }
}
