package io.meshplan.deploy;

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
 *     suffixes)
 * @param namespace the Kubernetes namespace (the RunAI project): a DNS-1123 label
 * @param image the container image reference; Kubernetes and RunAI need one, Slurm and Dask run
 *     on the hosts
 * @param nodes the nodes (one pod or Slurm task each)
 * @param gpusPerNode the GPUs per node (one training process each)
 * @param command the training command: a script and its arguments, run by {@code torchrun} once
 *     per GPU (on Ray through {@link RayMode}: by torchrun once per GPU, or as the job's own
 *     driver; as the client on Dask)
 * @param rdmaResource the Kubernetes extended resource of the RDMA device, e.g. {@code rdma/ib}
 * @param rdmaCount how many of that resource each pod requests
 * @param shmSize the size limit of the memory-backed {@code /dev/shm}, a Kubernetes quantity
 *     such as {@code 64Gi}, or empty for no limit
 * @param masterPort the rendezvous port of {@code torchrun}
 * @param podNetwork the pods' network, which decides the interface NCCL's sockets use
 * @param nodeScriptPath where the per-node script of the RunAI target is found inside the pod
 * @param ipoibInterface the IPoIB interface Dask's UCX listens on
 * @param partition the Slurm partition, or empty
 * @param rayMode how the Ray targets run the training (the other targets ignore it)
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
    RayMode rayMode) {
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern IMAGE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/:@+-]*");
  private static final Pattern RESOURCE =
      Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  private static final Pattern QUANTITY = Pattern.compile("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?");
  private static final Pattern PATH = Pattern.compile("/[A-Za-z0-9._/-]*");
  private static final Pattern IFACE = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
  private static final Pattern PARTITION = Pattern.compile("[A-Za-z0-9_.,-]+");

  /** Validates every field; messages quote the bad value. */
  public LaunchSpec {
    Require.nonNull(name, "name");
    Require.that(name.length() <= 40 && DNS_LABEL.matcher(name).matches(), "job name '" + name
        + "' must be a DNS-1123 label of at most 40 characters (lower-case letters, digits and"
        + " '-', starting and ending with a letter or digit)");
    Require.nonNull(namespace, "namespace");
    Require.that(namespace.length() <= 63 && DNS_LABEL.matcher(namespace).matches(), "namespace '"
        + namespace + "' must be a DNS-1123 label (lower-case letters, digits and '-')");
    Require.nonNull(image, "image");
    image.ifPresent(i -> Require.that(i.length() <= 512 && IMAGE.matcher(i).matches(), "image '"
        + i + "' is not an image reference such as nvcr.io/nvidia/pytorch:24.05-py3"));
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    command = List.copyOf(command);
    Require.that(!command.isEmpty(), "the training command is empty");
    for (String w : command) {
      Require.that(w.indexOf('\0') < 0, "the training command holds a NUL character");
    }
    Require.nonNull(rdmaResource, "rdma resource");
    Require.that(RESOURCE.matcher(rdmaResource).matches(), "RDMA resource '" + rdmaResource
        + "' is not an extended resource name such as rdma/ib or rdma/hca");
    Require.positive(rdmaCount, "RDMA resource count");
    Require.nonNull(shmSize, "shm size");
    shmSize.ifPresent(s -> Require.that(QUANTITY.matcher(s).matches(), "shm size '" + s
        + "' is not a quantity such as 64Gi"));
    Require.that(masterPort > 0 && masterPort < 65536, "port " + masterPort
        + " is not between 1 and 65535");
    Require.nonNull(podNetwork, "pod network");
    Require.nonNull(nodeScriptPath, "node script path");
    Require.that(PATH.matcher(nodeScriptPath).matches(), "node script path '" + nodeScriptPath
        + "' must be an absolute path of letters, digits, '.', '_', '-' and '/'");
    Require.nonNull(ipoibInterface, "IPoIB interface");
    Require.that(IFACE.matcher(ipoibInterface).matches(), "interface '" + ipoibInterface
        + "' is not a network interface name such as ib0");
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
