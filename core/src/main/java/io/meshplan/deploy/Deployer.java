package io.meshplan.deploy;

import io.meshplan.util.Require;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Writes the launch files of a target for a launch and a fabric. Kubernetes manifests are typed
 * objects (the fabric8 model, and records for the KubeRay and Kubeflow custom resources)
 * serialized with Jackson; scripts quote every outside value with {@code util.ShellQuote}.
 */
public final class Deployer {
  /**
   * The targets whose objects are named by the job name under DNS-1035 rules (a letter first):
   * KubeRay's RayJob (KubeRay v1.7.0 {@code controllers/ray/utils/validation.go}), the training
   * operator's PyTorchJob (kubeflow/training-operator 06f6008e {@code
   * pkg/webhooks/pytorch/pytorchjob_webhook.go}), and ray-k8s's Service {@code NAME-ray-head}
   * (Kubernetes names Services by DNS-1035 labels).
   */
  private static final Set<DeployTarget> NAMED_BY_DNS1035 = EnumSet.of(DeployTarget.KUBERAY,
      DeployTarget.RAY_K8S, DeployTarget.PYTORCHJOB);

  /** Creates the deployer; it holds no state. */
  public Deployer() {}

  /**
   * Writes the files.
   *
   * @param target the launcher
   * @param spec the launch
   * @param fabric the environment
   * @return the files, in the order to use them
   * @throws IllegalArgumentException if a Kubernetes or RunAI target has no image, the name is one
   *     the target's objects cannot have, torchrun's port on Ray is one of Ray's, or the target
   *     cannot place the launch's NVLink domains ({@link DeployTarget#nvlinkDomains})
   */
  public List<Artifact> deploy(DeployTarget target, LaunchSpec spec, FabricEnv fabric) {
    Require.nonNull(target, "target");
    Require.nonNull(spec, "spec");
    Require.nonNull(fabric, "fabric");
    Require.that(!target.kubernetes() || spec.image().isPresent(), target.label()
        + " runs containers and needs an image");
    Require.that(!NAMED_BY_DNS1035.contains(target) || KubeNames.dns1035Label(spec.name()),
        "job name '" + spec.name() + "' must start with a letter for " + target.label()
        + " (a DNS-1035 label: KubeRay's RayJob, the training operator's PyTorchJob and the"
        + " Service of Ray's head all are)");
    boolean torchrunOnRay = (target == DeployTarget.KUBERAY || target == DeployTarget.RAY_K8S)
        && spec.rayMode() == RayMode.TORCHRUN;
    Require.that(!torchrunOnRay || !RayEntrypoint.HEAD_PORTS.contains(spec.masterPort()), "torchrun's master"
        + " port " + spec.masterPort() + " is one Ray's head listens on (GCS "
        + RayEntrypoint.GCS_PORT + ", dashboard " + RayEntrypoint.DASHBOARD_PORT + ", client "
        + RayEntrypoint.CLIENT_PORT + "); choose another");
    racks(target, spec);
    return switch (target) {
      case KUBERAY -> List.of(RayJobManifest.write(spec, fabric));
      case RAY_K8S -> List.of(RayOnK8sManifest.write(spec, fabric));
      case PYTORCHJOB -> List.of(PyTorchJobManifest.write(spec, fabric));
      case RUNAI -> RunaiLaunch.write(spec, fabric);
      case DASK -> List.of(DaskLaunch.write(spec, fabric));
      case SLURM -> List.of(SlurmScript.write(spec, fabric));
    };
  }

  /**
   * Refuses NVLink domains across hosts on a target that cannot place them: RunAI's {@code
   * submit-dist pytorch} has no flag for a pod's resource claims (run-ai/docs 106c5007, {@code
   * docs/Researcher/cli-reference/runai-submit-dist-pytorch.md}), so its pods cannot claim a
   * rack's IMEX channel; Dask's workers are started on hosts meshplan does not choose; a
   * PyTorchJob's Workers share one pod template, so their pods cannot be split rack by rack.
   */
  private static void racks(DeployTarget target, LaunchSpec spec) {
    if (spec.nvlinkHosts() == 1) {
      return;
    }
    int domains = ComputeDomains.count(spec);
    String why = switch (target.nvlinkDomains()) {
      case NONE -> target == DeployTarget.RUNAI
          ? "runai submit-dist pytorch has no flag for the pods' claim of a rack's IMEX channel"
              + " (NVIDIA's DRA driver's ComputeDomain)"
          : "dask's launch does not place its workers rack by rack";
      case ONE -> domains == 1 ? null : "a PyTorchJob's Workers share one pod template, so its"
          + " pods cannot be pinned rack by rack";
      case EACH_PINNED -> null;
    };
    if (why != null) {
      throw new IllegalArgumentException(target.label() + " cannot launch on "
          + io.meshplan.util.Words.count(domains, "NVLink domain") + " of "
          + spec.nvlinkHosts() + " hosts x " + spec.gpusPerNode() + " GPUs: " + why
          + "; kuberay, ray-k8s and slurm pin each domain's hosts together"
          + (target.nvlinkDomains() == DeployTarget.Racks.ONE ? "" : ", pytorchjob one domain's"));
    }
  }
}
